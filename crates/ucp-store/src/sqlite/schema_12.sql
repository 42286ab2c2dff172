-- Migration 12: a merchant's refund is stored as pending before its processor is asked
-- (`ucp_domain::store::RefundIntent`), under the key its adjustment will carry, and ends when
-- the change that records it on the order commits (in that transaction: `recorded`, or
-- `recorded_later` when the recovery sweeper recorded it), when the processor refuses it, or
-- when it is abandoned. `action` is the request as serde's JSON of
-- `OrderAction`, applied again to the order when a repeat or the recovery sweeper settles it.
CREATE TABLE order_refunds (
    key TEXT PRIMARY KEY,
    order_id TEXT NOT NULL REFERENCES orders (id),
    version INTEGER NOT NULL,
    action TEXT NOT NULL,
    amount INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'recorded', 'recorded_later', 'refused', 'abandoned')),
    ended_at INTEGER
);
-- One pending refund per request on an order: the same request asked again while it is
-- pending (even at another order version, so under another key) settles that one.
CREATE UNIQUE INDEX order_refunds_pending_request ON order_refunds (order_id, action) WHERE state = 'pending';
-- Refunds the sweeper recorded after their caller was told they were pending: the same request
-- again is that refund (until it is seen once).
CREATE INDEX order_refunds_recorded_later ON order_refunds (order_id, action, created_at)
    WHERE state = 'recorded_later';
-- The sweeper's pending refunds by age, and the merchant's lists (`ucpd orders refunds`),
-- newest first, of one state or all.
CREATE INDEX order_refunds_by_state ON order_refunds (state, created_at);
CREATE INDEX order_refunds_by_age ON order_refunds (created_at);
