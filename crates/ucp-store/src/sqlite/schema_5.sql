-- Migration 5: the merchant console (issue 9 item 4). Never edit after it has shipped.
-- The order list pages newest first.
CREATE INDEX orders_created ON orders (created_at);
CREATE INDEX orders_platform ON orders (platform, created_at);
-- Traffic counters in hourly cells (hour = Unix seconds / 3600; 0 holds compacted history):
-- operation calls by outcome, and the purchase funnel's steps (outcome '').
CREATE TABLE traffic (
    platform TEXT    NOT NULL,
    kind     TEXT    NOT NULL CHECK (kind IN ('call', 'funnel')),
    name     TEXT    NOT NULL,
    outcome  TEXT    NOT NULL,
    hour     INTEGER NOT NULL,
    count    INTEGER NOT NULL,
    PRIMARY KEY (platform, kind, name, outcome, hour)
);
CREATE INDEX traffic_hour ON traffic (hour);
