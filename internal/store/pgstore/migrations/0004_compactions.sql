-- The compaction timeline of each A-leg: ids, rule metadata and counts only.
CREATE TABLE compactions (
    seq          bigserial   PRIMARY KEY,
    principal    text        NOT NULL,
    a_leg        text        NOT NULL,
    session      text        NOT NULL,
    request_id   text        NOT NULL,
    at           timestamptz NOT NULL,
    agent        text        NOT NULL,
    rule_id      text        NOT NULL,
    rule_version integer     NOT NULL,
    kind         text        NOT NULL,
    action       text        NOT NULL,
    revision     bigint      NOT NULL,
    tokens       integer     NOT NULL,
    decisions    integer     NOT NULL,
    constraints  integer     NOT NULL,
    rejected     integer     NOT NULL,
    questions    integer     NOT NULL,
    steps        integer     NOT NULL
);
CREATE INDEX compactions_a_leg ON compactions (principal, a_leg, seq);
CREATE INDEX compactions_at ON compactions (at);
