//! Merchants' refunds kept as pending from before their processor is asked until their order
//! records them (`order_refunds`, migration 12).

use rusqlite::{Connection, Row, params};
use ucp_domain::store::{RefundEnd, RefundIntent, StoreError, StuckSummary};

use super::backend;
use super::commerce::now_seconds;

const COLUMNS: &str = "key, order_id, version, action, amount, created_at";

type Raw = (String, String, i64, String, i64, i64);

fn raw(row: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?))
}

fn decode((key, order_id, version, action, amount, created_at): Raw) -> Result<RefundIntent, StoreError> {
    let action = serde_json::from_str(&action).map_err(|error| {
        StoreError::Backend(format!("the request of pending refund {key} does not decode: {error}"))
    })?;
    Ok(RefundIntent { key, order_id, version, action, amount, created_at })
}

/// Stores `intent` as pending. One with its key already (the same request against the same
/// order version) is left as it is, unless the processor refused it: asked for again, it is
/// pending again. An abandoned one stays so: its key may have expired at the processor.
pub(super) fn begin(connection: &Connection, intent: &RefundIntent) -> Result<(), StoreError> {
    let action = serde_json::to_string(&intent.action)
        .map_err(|error| StoreError::Backend(format!("encoding the request of refund {}: {error}", intent.key)))?;
    connection
        .prepare_cached(
            "INSERT INTO order_refunds (key, order_id, version, action, amount, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (key) DO UPDATE SET state = 'pending', ended_at = NULL, created_at = excluded.created_at \
             WHERE state = 'refused'",
        )
        .map_err(backend)?
        .execute(params![intent.key, intent.order_id, intent.version, action, intent.amount, intent.created_at])
        .map_err(backend)?;
    Ok(())
}

pub(super) fn pending_of(connection: &Connection, order_id: &str, limit: u64) -> Result<Vec<RefundIntent>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = connection
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM order_refunds WHERE order_id = ?1 AND state = 'pending' \
             ORDER BY created_at, key LIMIT ?2"
        ))
        .map_err(backend)?
        .query_map(params![order_id, limit], raw)
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    rows.into_iter().map(decode).collect()
}

pub(super) fn stale(connection: &Connection, created_before: i64, limit: u64) -> Result<Vec<RefundIntent>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = connection
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM order_refunds WHERE state = 'pending' AND created_at <= ?1 \
             ORDER BY created_at, key LIMIT ?2"
        ))
        .map_err(backend)?
        .query_map(params![created_before, limit], raw)
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    rows.into_iter().map(decode).collect()
}

pub(super) fn stale_summary(connection: &Connection, created_before: i64) -> Result<StuckSummary, StoreError> {
    let (count, oldest): (i64, Option<i64>) = connection
        .prepare_cached(
            "SELECT count(*), min(created_at) FROM order_refunds WHERE state = 'pending' AND created_at <= ?1",
        )
        .map_err(backend)?
        .query_row([created_before], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(backend)?;
    Ok(StuckSummary { count: u64::try_from(count).unwrap_or_default(), oldest_started_at: oldest })
}

/// Ends the pending refund `key` as `end` (inside the recording change's transaction, or on
/// its own).
pub(super) fn end(connection: &Connection, key: &str, end: RefundEnd) -> Result<(), StoreError> {
    connection
        .prepare_cached("UPDATE order_refunds SET state = ?2, ended_at = ?3 WHERE key = ?1 AND state = 'pending'")
        .map_err(backend)?
        .execute(params![key, end.as_str(), now_seconds()])
        .map_err(backend)?;
    Ok(())
}
