-- Migration 13: a refund can end `dismissed`. An abandoned refund the merchant found the
-- processor did not make is dismissed (`ucpd orders dismiss-refund`), so that the same request
-- is asked for again under its key instead of being refused as abandoned for as long as the
-- order stays at that version. SQLite cannot change a CHECK in place: the table is copied,
-- with its rowids (the lists' order among refunds of one second), and its indexes made again.
CREATE TABLE order_refunds_13 (
    key TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id),
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    amount INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'recorded', 'recorded_later', 'refused', 'abandoned', 'dismissed')),
    ended_at INTEGER
);
INSERT INTO order_refunds_13 (rowid, key, order_id, version, action, amount, created_at, state, ended_at)
    SELECT rowid, key, order_id, version, action, amount, created_at, state, ended_at FROM order_refunds
    ORDER BY rowid;
DROP TABLE order_refunds;
ALTER TABLE order_refunds_13 RENAME TO order_refunds;
-- As migration 12 made them.
CREATE UNIQUE INDEX order_refunds_pending_request ON order_refunds (order_id, action) WHERE state = 'pending';
CREATE INDEX order_refunds_recorded_later ON order_refunds (order_id, action, created_at)
    WHERE state = 'recorded_later';
CREATE INDEX order_refunds_by_state ON order_refunds (state, created_at);
CREATE INDEX order_refunds_by_age ON order_refunds (created_at);
