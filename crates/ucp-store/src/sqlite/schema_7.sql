-- Migration 7 (webhooks): the order-webhook outbox (order.md §3). Never edit after it has
-- shipped. Plain SQL that PostgreSQL runs as well (partial indexes included).

-- Where an order's webhooks go (`WebhookTarget` as JSON), captured when it was placed; NULL
-- when the platform did not negotiate the order capability or names no webhook_url.
ALTER TABLE orders ADD COLUMN webhook TEXT;

-- One row per event, written in the transaction of the change it announces.
CREATE TABLE webhook_events (
    seq          INTEGER PRIMARY KEY,            -- insertion order: per-order FIFO
    id           TEXT    NOT NULL UNIQUE,        -- Webhook-Id (UUID), stable across attempts
    order_id     TEXT    NOT NULL,
    platform     TEXT    NOT NULL,
    event_type   TEXT    NOT NULL,
    target       TEXT    NOT NULL,               -- WebhookTarget as JSON
    payload      TEXT    NOT NULL,               -- the order document as of this change
    created_at   INTEGER NOT NULL,               -- Unix ms; Webhook-Timestamp is its seconds
    horizon_from INTEGER NOT NULL,               -- Unix ms the retry horizon counts from
    status       TEXT    NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_attempt INTEGER NOT NULL,               -- Unix ms
    lease_owner  TEXT,
    lease_until  INTEGER,                        -- Unix ms; a lapsed lease may be claimed again
    delivered_at INTEGER
);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt) WHERE status = 'pending';
CREATE INDEX webhook_events_order ON webhook_events (order_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_events_leased ON webhook_events (platform, lease_until) WHERE status = 'pending';
CREATE INDEX webhook_events_status ON webhook_events (status, seq);

-- The delivery log: one row per attempt.
CREATE TABLE webhook_attempts (
    event_id    TEXT    NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    attempt     INTEGER NOT NULL,
    started_at  INTEGER NOT NULL,                -- Unix ms
    latency_ms  INTEGER NOT NULL,
    status_code INTEGER,
    error       TEXT,
    outcome     TEXT    NOT NULL,                -- delivered | retry | dead
    PRIMARY KEY (event_id, attempt)
);
