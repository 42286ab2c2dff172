-- Migration 2: carts, checkouts, orders. Never edit after it has shipped.
CREATE TABLE sessions (
    id         TEXT    PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('cart', 'checkout')),
    status     TEXT    NOT NULL,
    cart_id    TEXT,
    platform   TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    doc        TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX sessions_cart ON sessions (cart_id, status);
CREATE INDEX sessions_expiry ON sessions (expires_at, status);

CREATE TABLE orders (
    id          TEXT    PRIMARY KEY,
    checkout_id TEXT    NOT NULL UNIQUE,
    platform    TEXT    NOT NULL,
    doc         TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);

CREATE TABLE discount_usage (
    code TEXT    PRIMARY KEY,
    uses INTEGER NOT NULL
);
