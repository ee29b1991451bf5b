-- The compaction timeline of each A-leg: ids, rule metadata and counts only.
CREATE TABLE compactions (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    principal    TEXT    NOT NULL,
    a_leg        TEXT    NOT NULL,
    session      TEXT    NOT NULL,
    request_id   TEXT    NOT NULL,
    at           INTEGER NOT NULL,
    agent        TEXT    NOT NULL,
    rule_id      TEXT    NOT NULL,
    rule_version INTEGER NOT NULL,
    kind         TEXT    NOT NULL,
    action       TEXT    NOT NULL,
    revision     INTEGER NOT NULL,
    tokens       INTEGER NOT NULL,
    decisions    INTEGER NOT NULL,
    constraints  INTEGER NOT NULL,
    rejected     INTEGER NOT NULL,
    questions    INTEGER NOT NULL,
    steps        INTEGER NOT NULL
);
CREATE INDEX compactions_a_leg ON compactions (principal, a_leg, seq);
CREATE INDEX compactions_at ON compactions (at);
