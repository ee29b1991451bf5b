-- The preservation barrier asks whether an A-leg has work in flight.
CREATE INDEX outbox_a_leg ON outbox (principal, a_leg);
