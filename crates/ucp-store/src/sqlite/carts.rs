//! Whether a cart may get a new checkout, read in the write that would insert it (cart.md §6,
//! checklist 116): a cart is bought once.

use rusqlite::params;
use ucp_domain::store::StoreError;

use super::backend;

/// Where a cart stands for a new checkout of `platform`, read in the write that would insert it.
pub(super) enum CartStanding {
    /// Canceled, gone, or bought (a checkout of it for `platform` is completed).
    Done,
    /// Open; `completing` when a checkout of it is being completed, expired or not (recovery
    /// may still place its order).
    Open { completing: bool },
}

pub(super) fn cart_standing(
    connection: &rusqlite::Connection,
    cart_id: &str,
    platform: &str,
    now: i64,
) -> Result<CartStanding, StoreError> {
    let open: bool = connection
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1 AND kind = 'cart' AND platform = ?2 \
             AND status != 'canceled')",
        )
        .map_err(backend)?
        .query_row(params![cart_id, platform], |row| row.get(0))
        .map_err(backend)?;
    if !open {
        return Ok(CartStanding::Done);
    }
    let (bought, completing): (bool, bool) = connection
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM sessions WHERE cart_id = ?1 AND kind = 'checkout' AND platform = ?2 \
             AND status = 'completed'), EXISTS (SELECT 1 FROM sessions WHERE cart_id = ?1 AND kind = 'checkout' \
             AND platform = ?2 AND status = 'complete_in_progress')",
        )
        .map_err(backend)?
        .query_row(params![cart_id, platform], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(backend)?;
    if bought {
        // Bought but left open (its end after the order is a write of its own, which a crash
        // or a cart that kept changing can miss; or the order predates carts ending): ended now.
        connection
            .prepare_cached(
                "UPDATE sessions SET status = 'canceled', doc = json_set(doc, '$.status', 'canceled'), updated_at = ?3 \
                 WHERE id = ?1 AND kind = 'cart' AND platform = ?2 AND status != 'canceled'",
            )
            .map_err(backend)?
            .execute(params![cart_id, platform, now])
            .map_err(backend)?;
        return Ok(CartStanding::Done);
    }
    Ok(CartStanding::Open { completing })
}
