-- Migration 8 (webhook payloads, lazily): an event no longer stores its order snapshot while
-- the order row still holds that very version (the common case: "order created", delivered
-- before any change). The snapshot is written into `webhook_payloads` only when the order
-- changes while an event of an earlier version exists. Event rows stay small, so placing an
-- order writes a few hundred bytes for its event rather than the document again, and leases
-- and delivery marks rewrite small rows. Never edit after it has shipped. Plain SQL that
-- PostgreSQL runs as well.
ALTER TABLE webhook_events ADD COLUMN order_version INTEGER;
CREATE TABLE webhook_payloads (
    event_seq INTEGER PRIMARY KEY REFERENCES webhook_events (seq) ON DELETE CASCADE,
    payload   TEXT    NOT NULL                  -- the order document as of the event's change
);
-- Events from before keep their snapshots, moved here.
INSERT INTO webhook_payloads (event_seq, payload) SELECT seq, payload FROM webhook_events;
-- The column stays (its NOT NULL with it); events write '' there from now on.
UPDATE webhook_events SET payload = '';
