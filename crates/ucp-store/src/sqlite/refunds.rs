//! Merchants' refunds kept as pending from before their processor is asked until their order
//! records them (`order_refunds`, migrations 12 and 13).

use rusqlite::{Connection, OptionalExtension, Row, params};
use ucp_domain::order::changes::OrderAction;
use ucp_domain::store::{
    MAX_REFUND_PAGE, RefundBegun, RefundCursor, RefundEnd, RefundIntent, RefundList, RefundState, StoreError,
    StoredRefund, StuckSummary,
};

use super::{backend, now_seconds};

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

/// Stores `intent` as pending and answers what it found (`CommerceStore::begin_refund`).
pub(super) fn begin(
    connection: &mut Connection,
    intent: &RefundIntent,
    seen_since: i64,
) -> Result<RefundBegun, StoreError> {
    let action = encode_action(&intent.key, &intent.action)?;
    let transaction = connection.savepoint().map_err(backend)?;
    let pending = same_request(&transaction, &intent.order_id, &action, "pending", i64::MIN)?;
    if let Some(pending) = pending {
        return decode(pending).map(RefundBegun::Pending);
    }
    if let Some(recorded) = take_recorded_later(&transaction, &intent.order_id, &action, seen_since)? {
        transaction.commit().map_err(backend)?;
        return Ok(RefundBegun::RecordedLater(recorded));
    }
    // A key dismissed before (the merchant found it not made) is asked again for its first
    // amount: were it made after all, a processor answers a key with its first ask. A refused
    // one was not made, and is asked for what the request gives back now.
    let asked: Option<i64> = transaction
        .prepare_cached("SELECT amount FROM order_refunds WHERE key = ?1 AND state = 'dismissed'")
        .map_err(backend)?
        .query_row([&intent.key], |row| row.get(0))
        .optional()
        .map_err(backend)?;
    let amount = asked.unwrap_or(intent.amount);
    if let Some(available) = left_to_refund(&transaction, intent)?
        && amount > available
    {
        return Ok(RefundBegun::Exceeds { available });
    }
    let stored = transaction
        .prepare_cached(
            "INSERT INTO order_refunds (key, order_id, version, action, amount, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (key) DO UPDATE SET state = 'pending', ended_at = NULL, created_at = excluded.created_at, \
             amount = CASE state WHEN 'refused' THEN excluded.amount ELSE amount END \
             WHERE state IN ('refused', 'dismissed')",
        )
        .map_err(backend)?
        .execute(params![intent.key, intent.order_id, intent.version, action, intent.amount, intent.created_at])
        .map_err(backend)?;
    transaction.commit().map_err(backend)?;
    Ok(if stored == 1 { RefundBegun::Pending(RefundIntent { amount, ..intent.clone() }) } else { RefundBegun::Ended })
}

/// The refund of this request recorded later and started at or after `seen_since`, marked
/// seen (`CommerceStore::claim_recorded_later`).
pub(super) fn claim_recorded_later(
    connection: &mut Connection,
    order_id: &str,
    action: &OrderAction,
    seen_since: i64,
) -> Result<Option<RefundIntent>, StoreError> {
    let action = encode_action(order_id, action)?;
    let transaction = connection.savepoint().map_err(backend)?;
    let recorded = take_recorded_later(&transaction, order_id, &action, seen_since)?;
    transaction.commit().map_err(backend)?;
    Ok(recorded)
}

fn encode_action(of: &str, action: &OrderAction) -> Result<String, StoreError> {
    serde_json::to_string(action)
        .map_err(|error| StoreError::Backend(format!("encoding the request of refund {of}: {error}")))
}

/// The newest refund of `order_id` asking `action` in `state`, started at or after `since`.
/// The state is written into the statement, so its partial index can serve it.
fn same_request(
    connection: &Connection,
    order_id: &str,
    action: &str,
    state: &'static str,
    since: i64,
) -> Result<Option<Raw>, StoreError> {
    let index = if state == "pending" { "order_refunds_pending_request" } else { "order_refunds_recorded_later" };
    connection
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM order_refunds INDEXED BY {index} WHERE order_id = ?1 AND action = ?2 \
             AND state = '{state}' AND created_at >= ?3 ORDER BY created_at DESC LIMIT 1"
        ))
        .map_err(backend)?
        .query_row(params![order_id, action, since], raw)
        .optional()
        .map_err(backend)
}

/// [`same_request`] recorded later, ended as recorded: its repeat has been answered.
fn take_recorded_later(
    connection: &Connection,
    order_id: &str,
    action: &str,
    seen_since: i64,
) -> Result<Option<RefundIntent>, StoreError> {
    let Some(recorded) = same_request(connection, order_id, action, "recorded_later", seen_since)? else {
        return Ok(None);
    };
    let recorded = decode(recorded)?;
    end(connection, &recorded.key, RefundEnd::Recorded)?;
    Ok(Some(recorded))
}

/// What `intent`'s order has left to give back now: its payment less the refunds recorded on
/// it, and those pending or abandoned (the processor may have made them) under other keys
/// (`None`: no order or no payment, refused before asking).
fn left_to_refund(connection: &Connection, intent: &RefundIntent) -> Result<Option<i64>, StoreError> {
    let Some(order) = super::orders::read(connection, &intent.order_id)? else { return Ok(None) };
    let Some(payment) = &order.payment else { return Ok(None) };
    let pending: i64 = connection
        .prepare_cached(
            "SELECT (SELECT COALESCE(SUM(amount), 0) FROM order_refunds INDEXED BY order_refunds_pending_request \
             WHERE order_id = ?1 AND state = 'pending' AND key <> ?2) \
             + (SELECT COALESCE(SUM(amount), 0) FROM order_refunds INDEXED BY order_refunds_by_state \
             WHERE state = 'abandoned' AND order_id = ?1 AND key <> ?2)",
        )
        .map_err(backend)?
        .query_row(params![intent.order_id, intent.key], |row| row.get(0))
        .map_err(backend)?;
    Ok(Some((payment.amount - order.order.refunded() - pending).max(0)))
}

pub(super) fn is_pending(connection: &Connection, key: &str) -> Result<bool, StoreError> {
    connection
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM order_refunds WHERE key = ?1 AND state = 'pending')")
        .map_err(backend)?
        .query_row([key], |row| row.get(0))
        .map_err(backend)
}

/// What `read` makes of each of `rows`; a row it cannot read is logged and left out, so it
/// blocks neither its order's changes, nor the sweeper, nor a list.
fn readable<R, T>(rows: Vec<R>, read: impl Fn(R) -> Result<T, StoreError>) -> Vec<T> {
    rows.into_iter()
        .filter_map(|row| {
            read(row).map_err(|error| tracing::error!(%error, "a refund cannot be read; reconcile it by hand")).ok()
        })
        .collect()
}

/// The refunds holding part of `order_id` (`CommerceStore::holding_refunds`): its pending
/// ones, then its abandoned ones (few: each waits for the merchant), at most `limit` of each.
pub(super) fn holding(connection: &Connection, order_id: &str, limit: u64) -> Result<Vec<StoredRefund>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut holding = Vec::new();
    for (index, state) in [("order_refunds_pending_request", "pending"), ("order_refunds_by_state", "abandoned")] {
        let rows = connection
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM order_refunds INDEXED BY {index} \
                 WHERE order_id = ?1 AND state = '{state}' ORDER BY created_at, key LIMIT ?2"
            ))
            .map_err(backend)?
            .query_map(params![order_id, limit], raw)
            .map_err(backend)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(backend)?;
        let state = if state == "pending" { RefundState::Pending } else { RefundState::Ended(RefundEnd::Abandoned) };
        // `ended_at` is not read: a holding refund is judged by its state.
        holding.extend(readable(rows, decode).into_iter().map(|intent| StoredRefund { intent, state, ended_at: None }));
    }
    Ok(holding)
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
    Ok(readable(rows, decode))
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

/// Ends the refund `key` as `end` (inside the recording change's transaction, or on its own):
/// a pending one; a recorded-later one as seen; an abandoned one as dismissed by the merchant;
/// and an abandoned or dismissed one as recorded or refused, when a settler that had already
/// asked records it after all (the order is then right, and the merchant must not record it
/// by hand) or the processor refused it (it was not made). Whether it changed the row.
pub(super) fn end(connection: &Connection, key: &str, end: RefundEnd) -> Result<bool, StoreError> {
    let changed = connection
        .prepare_cached(
            "UPDATE order_refunds SET state = ?2, ended_at = ?3 WHERE key = ?1 AND ((state = 'pending' AND ?2 != 'dismissed') \
             OR (state = 'recorded_later' AND ?2 = 'recorded') \
             OR (state = 'abandoned' AND ?2 = 'dismissed') \
             OR (state IN ('abandoned', 'dismissed') AND ?2 IN ('recorded', 'recorded_later', 'refused')))",
        )
        .map_err(backend)?
        .execute(params![key, end.as_str(), now_seconds()])
        .map_err(backend)?;
    Ok(changed == 1)
}

/// How many refunds are in `state` (for `/metrics`: abandoned ones wait for the merchant).
pub(super) fn count(connection: &Connection, state: RefundState) -> Result<u64, StoreError> {
    let count: i64 = connection
        .prepare_cached("SELECT count(*) FROM order_refunds INDEXED BY order_refunds_by_state WHERE state = ?1")
        .map_err(backend)?
        .query_row([state.as_str()], |row| row.get(0))
        .map_err(backend)?;
    Ok(u64::try_from(count).unwrap_or_default())
}

/// One refund in whatever state.
pub(super) fn one(connection: &Connection, key: &str) -> Result<Option<StoredRefund>, StoreError> {
    let row = connection
        .prepare_cached(&format!("SELECT {COLUMNS}, state, ended_at FROM order_refunds WHERE key = ?1"))
        .map_err(backend)?
        .query_row([key], raw_with_state)
        .optional()
        .map_err(backend)?;
    row.map(stored).transpose()
}

/// Refunds newest first, of one state or all, after `before` when it is given.
pub(super) fn list(
    connection: &Connection,
    state: Option<RefundState>,
    limit: u64,
    before: Option<RefundCursor>,
) -> Result<RefundList, StoreError> {
    let limit = i64::try_from(limit.clamp(1, MAX_REFUND_PAGE)).unwrap_or(1);
    // One statement per shape, so each walks its index from the cursor (`state = ?1 OR ?1 IS
    // NULL`, or an optional cursor, would scan).
    let filter = if state.is_some() { "state = ?1" } else { "?1 IS NULL" };
    let after = if before.is_some() { "AND (created_at, rowid) < (?3, ?4)" } else { "AND ?3 IS NULL AND ?4 IS NULL" };
    let (created_at, row) = before.map(|cursor| (cursor.created_at, cursor.row)).unzip();
    let rows = connection
        .prepare_cached(&format!(
            "SELECT {COLUMNS}, state, ended_at, rowid FROM order_refunds WHERE {filter} {after} \
             ORDER BY created_at DESC, rowid DESC LIMIT ?2"
        ))
        .map_err(backend)?
        .query_map(params![state.map(RefundState::as_str), limit, created_at, row], |row| {
            Ok((raw_with_state(row)?, row.get::<_, i64>(8)?))
        })
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    // The cursor is the last row read, readable or not, so that a page is never cut short.
    let full = i64::try_from(rows.len()).is_ok_and(|read| read == limit);
    let next = rows
        .last()
        .filter(|_| full)
        .map(|(((.., created_at), ..), row)| RefundCursor { created_at: *created_at, row: *row });
    let refunds = readable(rows.into_iter().map(|(row, _)| row).collect(), stored);
    Ok(RefundList { refunds, next })
}

/// A row of `{COLUMNS}, state, ended_at`.
type RawWithState = (Raw, String, Option<i64>);

fn raw_with_state(row: &Row<'_>) -> rusqlite::Result<RawWithState> {
    Ok((raw(row)?, row.get(6)?, row.get(7)?))
}

fn stored((row, state, ended_at): RawWithState) -> Result<StoredRefund, StoreError> {
    let intent = decode(row)?;
    let state = RefundState::parse(&state)
        .ok_or_else(|| StoreError::Backend(format!("refund {} has an unknown state {state:?}", intent.key)))?;
    Ok(StoredRefund { intent, state, ended_at })
}

#[cfg(test)]
#[path = "refunds_tests.rs"]
mod tests;
