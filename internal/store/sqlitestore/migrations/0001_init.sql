-- Times are unix microseconds, UTC. A lineage expires_at of 0 never expires.
CREATE TABLE capsules (
    principal  TEXT    NOT NULL,
    a_leg      TEXT    NOT NULL,
    session    TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    data       BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (principal, a_leg)
) WITHOUT ROWID;
CREATE INDEX capsules_updated_at ON capsules (updated_at);

CREATE TABLE capsule_history (
    principal  TEXT    NOT NULL,
    a_leg      TEXT    NOT NULL,
    revision   INTEGER NOT NULL,
    session    TEXT    NOT NULL,
    data       BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (principal, a_leg, revision)
) WITHOUT ROWID;

CREATE TABLE lineage (
    principal  TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    value      BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (principal, key)
) WITHOUT ROWID;
CREATE INDEX lineage_expires_at ON lineage (expires_at) WHERE expires_at > 0;

CREATE TABLE ledger (
    id                 TEXT    NOT NULL PRIMARY KEY,
    ts                 INTEGER NOT NULL,
    day                TEXT    NOT NULL,
    principal          TEXT    NOT NULL,
    account            TEXT    NOT NULL,
    session            TEXT    NOT NULL,
    a_leg              TEXT    NOT NULL,
    b_leg              TEXT    NOT NULL,
    kind               TEXT    NOT NULL,
    route              TEXT    NOT NULL,
    provider           TEXT    NOT NULL,
    model              TEXT    NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    cost_micros        INTEGER NOT NULL,
    status             INTEGER NOT NULL,
    duration_ms        INTEGER NOT NULL
);
CREATE INDEX ledger_principal_ts ON ledger (principal, ts);
CREATE INDEX ledger_ts ON ledger (ts);

CREATE TABLE budgets (
    key  TEXT    NOT NULL PRIMARY KEY,
    used INTEGER NOT NULL
) WITHOUT ROWID;
