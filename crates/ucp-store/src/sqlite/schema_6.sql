-- Migration 6: merchant order operations (issue 9). Never edit after it has shipped.
-- The order row gains a version (optimistic concurrency), its derived status (for listing)
-- and the charge it was paid with (what refunds give back against). `order_events` is the
-- append-only log of fulfillment events and adjustments: rows are inserted, never updated
-- or deleted; the order document carries the same records and the quantities they imply.
ALTER TABLE orders ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE orders ADD COLUMN status TEXT NOT NULL DEFAULT 'processing';
ALTER TABLE orders ADD COLUMN payment_handler TEXT;
ALTER TABLE orders ADD COLUMN payment_reference TEXT;
ALTER TABLE orders ADD COLUMN paid_amount INTEGER;
ALTER TABLE orders ADD COLUMN paid_currency TEXT;
CREATE INDEX orders_newest ON orders (created_at DESC, id DESC);
CREATE INDEX orders_status ON orders (status, created_at DESC, id DESC);

CREATE TABLE order_events (
    order_id    TEXT    NOT NULL REFERENCES orders (id),
    id          TEXT    NOT NULL,
    kind        TEXT    NOT NULL CHECK (kind IN ('fulfillment_event', 'adjustment')),
    type        TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    doc         TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (order_id, id)
);
CREATE TRIGGER order_events_append_only_update BEFORE UPDATE ON order_events
BEGIN SELECT RAISE(ABORT, 'order_events is append-only'); END;
CREATE TRIGGER order_events_append_only_delete BEFORE DELETE ON order_events
BEGIN SELECT RAISE(ABORT, 'order_events is append-only'); END;
