//! The webhook outbox: every order change enqueues its webhook in the change's transaction.
// placeholder: the webhooks branch replaces this file

use ucp_domain::store::StoredOrder;

/// Enqueues a webhook of `event_type` for `order` inside `tx`.
pub(crate) fn enqueue(tx: &rusqlite::Transaction<'_>, order: &StoredOrder, event_type: &str) -> rusqlite::Result<()> {
    let _ = (tx, order, event_type);
    Ok(())
}
