//! Orders on SQLite: the row (document, version, derived status, the charge behind it), the
//! append-only `order_events` log, and a change written in one transaction with its webhook.

use rusqlite::{Connection, OptionalExtension, Row, params};
use ucp_domain::order::changes::OrderRecord;
use ucp_domain::store::{OrderChange, OrderPayment, OrderQuery, StoreError, StoredOrder};

use super::{backend, outbox};

pub(super) const COLUMNS: &str = "id, checkout_id, platform, doc, created_at, version, payment_handler, payment_reference, paid_amount, paid_currency, webhook";

fn encode(order: &StoredOrder) -> Result<String, StoreError> {
    serde_json::to_string(&order.order)
        .map_err(|error| StoreError::Backend(format!("encoding order {}: {error}", order.id)))
}

pub(super) type Raw = (
    String,
    String,
    String,
    String,
    i64,
    i64,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

pub(super) fn raw(row: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
        row.get(9)?,
        row.get(10)?,
    ))
}

pub(super) fn decode(raw: Raw) -> Result<StoredOrder, StoreError> {
    let (id, checkout_id, platform, doc, created_at, version, handler, reference, amount, currency, webhook) = raw;
    let order = serde_json::from_str(&doc)
        .map_err(|error| StoreError::Backend(format!("order {id} does not decode: {error}")))?;
    let payment = match (handler, reference, amount, currency) {
        (Some(handler_id), Some(reference), Some(amount), Some(currency)) => {
            Some(OrderPayment { handler_id, reference, amount, currency })
        }
        _ => None,
    };
    let webhook = webhook
        .map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|error| StoreError::Backend(format!("order {id}'s webhook target does not decode: {error}")))?;
    Ok(StoredOrder { id, checkout_id, platform, order, created_at, version, payment, webhook })
}

/// Inserts a newly placed order (inside the placement's transaction).
pub(super) fn insert(transaction: &rusqlite::Connection, order: &StoredOrder) -> Result<(), StoreError> {
    let doc = encode(order)?;
    let payment = order.payment.as_ref();
    let webhook = order
        .webhook
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|error| StoreError::Backend(format!("encoding the webhook target: {error}")))?;
    transaction
        .prepare_cached(
            "INSERT INTO orders (id, checkout_id, platform, doc, created_at, version, status, payment_handler, \
             payment_reference, paid_amount, paid_currency, webhook) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )
        .map_err(backend)?
        .execute(params![
            order.id,
            order.checkout_id,
            order.platform,
            doc,
            order.created_at,
            order.version,
            order.order.status().as_str(),
            payment.map(|payment| &payment.handler_id),
            payment.map(|payment| &payment.reference),
            payment.map(|payment| payment.amount),
            payment.map(|payment| &payment.currency),
            webhook,
        ])
        .map_err(backend)?;
    Ok(())
}

pub(super) fn read(connection: &Connection, id: &str) -> Result<Option<StoredOrder>, StoreError> {
    let mut statement =
        connection.prepare_cached(&format!("SELECT {COLUMNS} FROM orders WHERE id = ?1")).map_err(backend)?;
    let row = statement.query_row([id], raw).optional().map_err(backend)?;
    row.map(decode).transpose()
}

pub(super) fn list(connection: &Connection, query: &OrderQuery) -> Result<Vec<StoredOrder>, StoreError> {
    let (before_at, before_id) = query.before.clone().unwrap_or((i64::MAX, String::new()));
    let unbounded = query.before.is_none();
    let status = query.status.map(|status| status.as_str());
    let mut statement = connection
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM orders WHERE (?1 IS NULL OR status = ?1) \
             AND (?2 OR created_at < ?3 OR (created_at = ?3 AND id < ?4)) \
             ORDER BY created_at DESC, id DESC LIMIT ?5"
        ))
        .map_err(backend)?;
    let limit = i64::try_from(query.limit).unwrap_or(i64::MAX);
    let rows = statement
        .query_map(params![status, unbounded, before_at, before_id, limit], raw)
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    rows.into_iter().map(decode).collect()
}

/// Appends the records, replaces the document if the row is still at the version it was read
/// at, and enqueues the webhook: one transaction.
/// Writes `change` (see [`ucp_domain::store::CommerceStore::apply_order_change`]); answers the
/// product rows whose stock it moved, for the read cache once committed.
pub(super) fn apply(connection: &mut Connection, change: &OrderChange) -> Result<Vec<i64>, StoreError> {
    let expected = change.order.version;
    let mut next = change.order.clone();
    next.version = expected + 1;
    let doc = encode(&next)?;
    let transaction = connection.savepoint().map_err(backend)?;
    // The events of earlier versions keep the order as it was (their snapshot was the row).
    outbox::keep_snapshots(&transaction, &next.id).map_err(backend)?;
    let changed = transaction
        .prepare_cached("UPDATE orders SET doc = ?2, version = ?3, status = ?4 WHERE id = ?1 AND version = ?5")
        .map_err(backend)?
        .execute(params![next.id, doc, next.version, next.order.status().as_str(), expected])
        .map_err(backend)?;
    if changed == 0 {
        let exists: bool = transaction
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM orders WHERE id = ?1)")
            .map_err(backend)?
            .query_row([&next.id], |row| row.get(0))
            .map_err(backend)?;
        return Err(if exists {
            StoreError::Conflict { constraint: "order version".into() }
        } else {
            StoreError::NotFound
        });
    }
    let now = super::now_seconds();
    for record in &change.records {
        let (kind, kind_type, doc) = match record {
            OrderRecord::Event(event) => ("fulfillment_event", event.kind.as_str(), serde_json::to_string(event)),
            OrderRecord::Adjustment(adjustment) => {
                ("adjustment", adjustment.kind.as_str(), serde_json::to_string(adjustment))
            }
        };
        let doc = doc.map_err(|error| StoreError::Backend(format!("encoding an order record: {error}")))?;
        transaction
            .prepare_cached(
                "INSERT INTO order_events (order_id, id, kind, type, version, doc, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .map_err(backend)?
            .execute(params![next.id, record.id(), kind, kind_type, next.version, doc, now])
            .map_err(backend)?;
    }
    if let Some((key, end)) = &change.settles {
        super::refunds::end(&transaction, key, *end)?;
    }
    let mut restocked = Vec::with_capacity(change.restock.len());
    for (variant_id, units) in &change.restock {
        let row: Option<i64> = transaction
            .prepare_cached(
                "UPDATE variants SET stock = stock + ?2 WHERE id = ?1 AND stock IS NOT NULL RETURNING product_row",
            )
            .map_err(backend)?
            .query_row(params![variant_id, units], |row| row.get(0))
            .optional()
            .map_err(backend)?;
        restocked.extend(row);
    }
    outbox::enqueue(&transaction, &next, change.webhook).map_err(backend)?;
    transaction.commit().map_err(backend)?;
    Ok(restocked)
}
