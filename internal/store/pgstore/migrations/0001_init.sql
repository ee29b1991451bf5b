CREATE TABLE capsules (
    principal  text        NOT NULL,
    a_leg      text        NOT NULL,
    session    text        NOT NULL,
    revision   bigint      NOT NULL,
    data       bytea       NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (principal, a_leg)
);
CREATE INDEX capsules_updated_at ON capsules (updated_at);

CREATE TABLE capsule_history (
    principal  text        NOT NULL,
    a_leg      text        NOT NULL,
    revision   bigint      NOT NULL,
    session    text        NOT NULL,
    data       bytea       NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (principal, a_leg, revision)
);

-- A NULL expires_at never expires.
CREATE TABLE lineage (
    principal  text        NOT NULL,
    key        text        NOT NULL,
    value      bytea       NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (principal, key)
);
CREATE INDEX lineage_expires_at ON lineage (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE ledger (
    id                 text        NOT NULL PRIMARY KEY,
    ts                 timestamptz NOT NULL,
    day                text        NOT NULL,
    principal          text        NOT NULL,
    account            text        NOT NULL,
    session            text        NOT NULL,
    a_leg              text        NOT NULL,
    b_leg              text        NOT NULL,
    kind               text        NOT NULL,
    route              text        NOT NULL,
    provider           text        NOT NULL,
    model              text        NOT NULL,
    input_tokens       bigint      NOT NULL,
    output_tokens      bigint      NOT NULL,
    cache_read_tokens  bigint      NOT NULL,
    cache_write_tokens bigint      NOT NULL,
    cost_micros        bigint      NOT NULL,
    status             integer     NOT NULL,
    duration_ms        bigint      NOT NULL
);
CREATE INDEX ledger_principal_ts ON ledger (principal, ts);
CREATE INDEX ledger_ts ON ledger (ts);

CREATE TABLE budgets (
    key  text   NOT NULL PRIMARY KEY,
    used bigint NOT NULL
);
