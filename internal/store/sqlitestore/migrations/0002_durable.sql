-- Owed work (extraction deltas) and durable budget reservations.
CREATE TABLE outbox (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    principal   TEXT    NOT NULL,
    a_leg       TEXT    NOT NULL,
    payload     BLOB    NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    not_before  INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    owner       TEXT    NOT NULL DEFAULT '',
    lease_until INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX outbox_due ON outbox (not_before);

CREATE TABLE reservations (
    id         TEXT    NOT NULL PRIMARY KEY,
    expires_at INTEGER NOT NULL,
    data       BLOB    NOT NULL
) WITHOUT ROWID;
CREATE INDEX reservations_expires_at ON reservations (expires_at);
