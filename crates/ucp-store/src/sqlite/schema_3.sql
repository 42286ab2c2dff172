-- Migration 3: stored idempotency (security.md §4). Never edit after it has shipped.
-- One row per (platform, operation, target, key): 'pending' while the first request runs,
-- 'finished' with its answer after. Plain SQL that PostgreSQL runs as well.
CREATE TABLE idempotency (
    platform    TEXT    NOT NULL,
    operation   TEXT    NOT NULL,
    target      TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    owner       TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('pending', 'finished')),
    body        TEXT,
    created     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (platform, operation, target, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);
