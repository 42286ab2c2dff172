//! Grouping rows into products by `item_group_id`, with upsert of repeated row ids, in two
//! passes over a staging database: rows of one product may be anywhere in a feed, and a row id
//! seen again replaces the earlier row, so no product is known to be complete before the end.
//! Pass one ([`FeedBuilder`]) stages every row that may join its group; pass two
//! ([`StagedRows::build`]) reads the groups back in order of first appearance and builds each
//! product exactly as if the whole feed had been in memory. Pass one can also guess products
//! complete as it goes and build them itself, which makes pass two needless when the guesses
//! hold, as they do for a feed whose products' rows are together.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::{InvalidProduct, Product};

use super::product::{build_product, variant_index_of};
use super::row::{Attr, RawItem, Row, parse_row};
use super::staging::{Phase, Staging, staging_error};
use super::{EarlyProducts, FeedError, ImportOptions, PROGRESS_EVERY, RowWarning, SkippedRow};

mod staged;
mod state;
#[cfg(test)]
mod tests;

pub(in crate::import) use staged::StagedRows;
use state::*;

/// The staging tables of a Merchant Center feed: the groups (products) that left the cache of
/// [`Groups`], numbered in order of first appearance, with what the insert rule needs to know
/// of them; and the rows present (a replaced row is gone) with their values encoded
/// ([`RawItem::encode`]), keyed by their group's number and their slot in it ([`row_key`]), so
/// that reading them in key order reads products in order of first appearance. (A rowid key
/// makes each new row an append to its B-tree, the cheap case.)
pub(super) const SCHEMA: &str = "
    CREATE TABLE groups (
        ord       INTEGER PRIMARY KEY,
        id        TEXT    NOT NULL UNIQUE,
        live      INTEGER NOT NULL,
        titled    INTEGER NOT NULL,
        next_slot INTEGER NOT NULL
    );
    CREATE TABLE rows (
        key     INTEGER PRIMARY KEY,
        variant TEXT    NOT NULL UNIQUE,
        line    INTEGER NOT NULL,
        titled  INTEGER NOT NULL,
        raw     BLOB    NOT NULL
    );
    CREATE TABLE handles (handle TEXT PRIMARY KEY) WITHOUT ROWID;";

/// Bits of a row's key that hold its slot in its group: a product has at most 2^24 - 1 rows
/// (far more than it could have variants in memory), the feed at most 2^39 products.
const SLOT_BITS: u32 = 24;

/// The key of the row at `slot` of group `ord`.
fn row_key(ord: u64, slot: u64, row: &Row) -> Result<i64, FeedError> {
    if slot >= 1 << SLOT_BITS || ord >= 1 << (63 - SLOT_BITS) {
        return Err(FeedError::Malformed {
            line: row.line,
            reason: format!("product {:?} has more rows than an import can take", row.product_id),
        });
    }
    Ok(((ord << SLOT_BITS) | slot) as i64)
}

/// The group number and slot of a row's key.
fn split_key(key: i64) -> (u64, u64) {
    let key = key as u64;
    (key >> SLOT_BITS, key & ((1 << SLOT_BITS) - 1))
}

/// Collects rows into products: groups by product id, replaces rows whose id repeats. The rows
/// go to the staging database as they come; memory holds a bounded cache of group states.
///
/// With an [`EarlyProducts`] sink, it also guesses that a product whose rows are followed by a
/// row of a product first seen later is complete, and hands it on at once (built from the rows
/// it keeps of that one open product), so that a feed whose products' rows are together needs
/// no second pass. A row that proves a guess wrong (it joins, replaces or takes a row of a
/// product handed on) retracts them all, and the products are built from the staging instead;
/// or, if the rows' values are not kept (`payloads` false: the caller can read the feed again,
/// which is cheaper than keeping them all), the reading stops there, abandoned.
pub(super) struct FeedBuilder<'a> {
    staging: Staging,
    groups: Groups,
    rows: u64,
    /// Groups holding at least one row.
    live_groups: u64,
    /// The row being added, encoded (empty unless `payloads`).
    encoded: Vec<u8>,
    /// What the row being added is read without ([`parse_row`]), reported once it is staged.
    warnings: Vec<RowWarning>,
    early: Option<Early<'a>>,
    /// Rows are staged with their values, so products can be built from the staging.
    payloads: bool,
    /// A guess was wrong and the rows' values are not kept: the reading stops.
    abandoned: bool,
}

/// The guessing of [`FeedBuilder`], while no guess was proved wrong.
struct Early<'a> {
    sink: &'a mut dyn EarlyProducts,
    /// The group rows join now, with its rows by slot; every group numbered below it is closed.
    open: Option<(u64, Vec<Row>)>,
    /// Groups numbered below this are closed.
    closed_below: u64,
    /// Products handed on.
    products: u64,
    /// Still guessing (no retraction).
    guessing: bool,
}

/// Where a row was staged: its group, slot, and the row it replaced if any (group, slot).
struct Placed {
    ord: u64,
    slot: u64,
    replaced: Option<(u64, u64)>,
}

impl<'a> FeedBuilder<'a> {
    /// A builder over a fresh staging database made with [`SCHEMA`], handing products on to
    /// `early` as soon as it can guess they are complete, keeping the rows' values if
    /// `payloads` (without, a wrong guess abandons the reading).
    pub(super) fn new(staging: Staging, early: Option<&'a mut dyn EarlyProducts>, payloads: bool) -> FeedBuilder<'a> {
        let early = early.map(|sink| Early { sink, open: None, closed_below: 0, products: 0, guessing: true });
        FeedBuilder {
            staging,
            groups: Groups::default(),
            rows: 0,
            live_groups: 0,
            encoded: Vec::new(),
            warnings: Vec::new(),
            early,
            payloads,
            abandoned: false,
        }
    }

    /// Takes one row; the raw item is left empty for reuse. Returns whether to go on reading
    /// (not once the reading is abandoned).
    pub(super) fn add(&mut self, raw: &mut RawItem, options: &ImportOptions) -> Result<bool, FeedError> {
        self.rows += 1;
        if self.groups.by_id.len() >= GROUP_CACHE {
            self.groups.flush(self.staging.connection())?;
        }
        if self.payloads {
            raw.encode(&mut self.encoded);
        }
        match parse_row(raw, options, &mut self.warnings) {
            Ok(row) => match self.insert(&row)? {
                Ok(placed) => {
                    for warning in &self.warnings {
                        self.staging.warn(warning)?;
                    }
                    self.guess(row, &placed)?;
                }
                Err(skipped) => self.skip(&skipped)?,
            },
            Err(skipped) => self.skip(&skipped)?,
        }
        Ok(!self.abandoned)
    }

    fn skip(&mut self, skipped: &SkippedRow) -> Result<(), FeedError> {
        self.staging.skip(skipped, Phase::Read)?;
        if let Some(early) = &mut self.early {
            early.sink.skipped();
        }
        Ok(())
    }

    /// Follows a staged row with the guess: a row of a group after the open one closes it
    /// (its product is handed on); a row of the open group joins its rows; anything else
    /// proves a guess wrong.
    fn guess(&mut self, row: Row, placed: &Placed) -> Result<(), FeedError> {
        let Some(early) = self.early.as_mut().filter(|early| early.guessing) else {
            return Ok(());
        };
        if let Some((open, _)) = &early.open
            && placed.ord > *open
            && let Some((_, rows)) = early.open.take()
            && !rows.is_empty()
        {
            let sink = &mut *early.sink;
            early.products += u64::from(finish_group(&self.staging, rows, &mut |product| sink.product(product))?);
        }
        if early.open.is_none() && placed.ord >= early.closed_below {
            early.open = Some((placed.ord, Vec::new()));
            early.closed_below = placed.ord;
        }
        let fits = early.open.as_ref().is_some_and(|(open, rows)| {
            *open == placed.ord
                && match placed.replaced {
                    Some((group, slot)) => group == placed.ord && (slot as usize) < rows.len(),
                    None => placed.slot as usize == rows.len(),
                }
        });
        match (&mut early.open, fits) {
            (Some((_, rows)), true) => match placed.replaced {
                Some(_) => rows[placed.slot as usize] = row,
                None => rows.push(row),
            },
            _ => {
                early.guessing = false;
                early.open = None;
                early.sink.retract();
                self.abandoned = !self.payloads;
            }
        }
        Ok(())
    }

    /// Stages `row` (whose values are in `self.encoded`), or answers why it cannot join its
    /// group. The rules, for a row joining group G and replacing the row of the same id (if
    /// any, in G or another group): ids may not clash ([`FeedBuilder::clash`]), and what G
    /// holds besides the replaced row must hold a title if the row has none.
    fn insert(&mut self, row: &Row) -> Result<Result<Placed, SkippedRow>, FeedError> {
        let connection = self.staging.connection();
        let ord = self.groups.ord_of(connection, &row.product_id)?;
        if let Some(skipped) = self.clash(row, ord)? {
            return Ok(Err(skipped));
        }
        let connection = self.staging.connection();
        let titled = u64::from(row.title.is_some());
        let group = self.groups.state(connection, ord)?;
        // Most rows have an id not seen before: try that first, and look for the row it
        // replaces only if the id is taken (or the row would be refused without one).
        if admit(row, group.titled).is_ok() {
            let slot = group.next_slot;
            if insert_row(connection, row_key(ord, slot, row)?, row, titled, &self.encoded, true)? {
                self.live_groups += u64::from(group.live == 0);
                group.next_slot += 1;
                join(group, titled);
                return Ok(Ok(Placed { ord, slot, replaced: None }));
            }
        }
        let previous = staged_row(connection, &row.variant.id)?;
        let group = self.groups.state(connection, ord)?;
        let mut titled_others = group.titled;
        if let Some(((previous_group, _), previous_titled)) = previous
            && previous_group == ord
        {
            titled_others -= previous_titled;
        }
        if let Err(skipped) = admit(row, titled_others) {
            return Ok(Err(skipped));
        }
        match previous {
            Some(((previous_group, slot), previous_titled)) if previous_group == ord => {
                let key = row_key(ord, slot, row)?;
                connection
                    .prepare_cached("UPDATE rows SET line = ?2, titled = ?3, raw = ?4 WHERE key = ?1")
                    .and_then(|mut statement| {
                        statement.execute(params![key, row.line as i64, titled as i64, &self.encoded])
                    })
                    .map_err(staging_error)?;
                group.live -= 1;
                group.titled -= previous_titled;
                join(group, titled);
                Ok(Ok(Placed { ord, slot, replaced: Some((ord, slot)) }))
            }
            previous => {
                if let Some(((previous_group, previous_slot), previous_titled)) = previous {
                    let previous_key = row_key(previous_group, previous_slot, row)?;
                    connection
                        .prepare_cached("DELETE FROM rows WHERE key = ?1")
                        .and_then(|mut statement| statement.execute([previous_key]))
                        .map_err(staging_error)?;
                    let old = self.groups.state(connection, previous_group)?;
                    old.live -= 1;
                    old.titled -= previous_titled;
                    old.dirty = true;
                    self.live_groups -= u64::from(old.live == 0);
                }
                let group = self.groups.state(connection, ord)?;
                let slot = group.next_slot;
                let key = row_key(ord, slot, row)?;
                self.live_groups += u64::from(group.live == 0);
                group.next_slot += 1;
                join(group, titled);
                if !insert_row(connection, key, row, titled, &self.encoded, false)? {
                    return Err(FeedError::Staging(format!("row id {:?} is staged twice", row.variant.id)));
                }
                Ok(Ok(Placed { ord, slot, replaced: previous.map(|(group_slot, _)| group_slot) }))
            }
        }
    }

    /// Why `row`, joining group `ord`, would make one product's id another product's variant
    /// id, if it would: its own id is the id of a product that keeps rows besides the one it
    /// replaces, or its group is a product only from now on and its id is a row of another
    /// product. (A lone row's product shares its id with its variant, as Merchant Center has
    /// it; that is no clash.) The rows staged so far never clash, so these are the only two
    /// ways a new row can make one.
    fn clash(&mut self, row: &Row, ord: u64) -> Result<Option<SkippedRow>, FeedError> {
        let (product_id, variant_id) = (&row.product_id, &row.variant.id);
        if product_id == variant_id {
            return Ok(None);
        }
        let connection = self.staging.connection();
        if let Some(named) = self.groups.find(connection, variant_id)? {
            let mut others = self.groups.state(connection, named)?.live;
            if others > 0
                && let Some(((previous_group, _), _)) = staged_row(connection, variant_id)?
                && previous_group == named
            {
                others -= 1;
            }
            if others > 0 {
                return Ok(Some(SkippedRow::new(
                    row.line,
                    Attr::Id.name(),
                    format!("{variant_id:?} is already the id of another product"),
                )));
            }
        }
        if self.groups.state(connection, ord)?.live == 0
            && let Some(((holder, _), _)) = staged_row(connection, product_id)?
        {
            let holder = &self.groups.state(connection, holder)?.id;
            return Ok(Some(SkippedRow::new(
                row.line,
                Attr::ItemGroupId.name(),
                format!("product id {product_id:?} is already the id of an item of product {holder:?}"),
            )));
        }
        Ok(None)
    }

    /// The feed is read: what was staged, ready for [`StagedRows::build`] (which reads the
    /// rows only: the group states are done with). Still guessing, the open product is
    /// complete now and handed on, and so is the feed.
    pub(super) fn finish(self, options: &ImportOptions) -> Result<StagedRows, FeedError> {
        let FeedBuilder { staging, rows, live_groups, early, abandoned, .. } = self;
        let guessed = early.is_some();
        let mut handed = None;
        if let Some(early) = early
            && early.guessing
        {
            let mut products = early.products;
            if let Some((_, open)) = early.open
                && !open.is_empty()
            {
                let sink = early.sink;
                products += u64::from(finish_group(&staging, open, &mut |product| sink.product(product))?);
            }
            handed = Some(products);
        }
        Ok(StagedRows { staging, rows, groups: live_groups, options: options.clone(), handed, guessed, abandoned })
    }
}

/// Where a row is staged, its group and slot, and whether it has a title (1 or 0).
type StagedRow = ((u64, u64), u64);

/// The staged row of id `variant_id`, if there is one.
fn staged_row(connection: &Connection, variant_id: &str) -> Result<Option<StagedRow>, FeedError> {
    connection
        .prepare_cached("SELECT key, titled FROM rows WHERE variant = ?1")
        .and_then(|mut statement| {
            statement
                .query_row([variant_id], |found| Ok((split_key(found.get(0)?), found.get::<_, i64>(1)? as u64)))
                .optional()
        })
        .map_err(staging_error)
}

/// Stages a row at `key`; `false` if its id is staged already (only when `may_exist`).
fn insert_row(
    connection: &Connection,
    key: i64,
    row: &Row,
    titled: u64,
    encoded: &[u8],
    may_exist: bool,
) -> Result<bool, FeedError> {
    let sql = if may_exist {
        "INSERT OR IGNORE INTO rows (key, variant, line, titled, raw) VALUES (?1, ?2, ?3, ?4, ?5)"
    } else {
        "INSERT INTO rows (key, variant, line, titled, raw) VALUES (?1, ?2, ?3, ?4, ?5)"
    };
    let inserted = connection
        .prepare_cached(sql)
        .and_then(|mut statement| {
            statement.execute(params![key, row.variant.id, row.line as i64, titled as i64, encoded])
        })
        .map_err(staging_error)?;
    Ok(inserted == 1)
}

/// Builds, normalizes and emits the product of one group's rows (handle made unique); `false`
/// if it was skipped.
fn finish_group(staging: &Staging, rows: Vec<Row>, emit: &mut dyn FnMut(Product)) -> Result<bool, FeedError> {
    let lines: Vec<u64> = rows.iter().map(|row| row.line).collect();
    let mut product = build_product(rows[0].product_id.clone(), rows);
    // Every link is a row's, which `parse_row` made with `web_url`.
    match product.normalize_with_web_links() {
        Ok(()) => {
            if let Some(handle) = &mut product.handle {
                let base_len = handle.len();
                let mut suffix = 1;
                while !claim_handle(staging, handle)? {
                    suffix += 1;
                    handle.truncate(base_len);
                    handle.push_str(&format!("-{suffix}"));
                }
            }
            emit(product);
            Ok(true)
        }
        Err(InvalidProduct { field, reason }) => {
            let line = variant_index_of(&field).and_then(|index| lines.get(index)).unwrap_or(&lines[0]);
            staging.skip(&SkippedRow::new(*line, field, reason), Phase::Build)?;
            Ok(false)
        }
    }
}

/// Takes `handle` for a product; `false` if an earlier product has it.
fn claim_handle(staging: &Staging, handle: &str) -> Result<bool, FeedError> {
    let inserted = staging
        .connection()
        .prepare_cached("INSERT OR IGNORE INTO handles (handle) VALUES (?1)")
        .and_then(|mut statement| statement.execute([handle]))
        .map_err(staging_error)?;
    Ok(inserted == 1)
}
