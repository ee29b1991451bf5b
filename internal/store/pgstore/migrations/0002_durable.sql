-- Owed work (extraction deltas), claimed under leases by any replica, and
-- durable budget reservations.
CREATE TABLE outbox (
    id          bigserial   PRIMARY KEY,
    principal   text        NOT NULL,
    a_leg       text        NOT NULL,
    payload     bytea       NOT NULL,
    attempts    integer     NOT NULL DEFAULT 0,
    not_before  timestamptz NOT NULL,
    created_at  timestamptz NOT NULL,
    owner       text        NOT NULL DEFAULT '',
    lease_until timestamptz
);
CREATE INDEX outbox_due ON outbox (not_before);

CREATE TABLE reservations (
    id         text        PRIMARY KEY,
    expires_at timestamptz NOT NULL,
    data       bytea       NOT NULL
);
CREATE INDEX reservations_expires_at ON reservations (expires_at);
