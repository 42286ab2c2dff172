//! Grouping rows into products by `item_group_id`, with upsert of repeated row ids, in two
//! passes over a staging database: rows of one product may be anywhere in a feed, and a row id
//! seen again replaces the earlier row, so no product is known to be complete before the end.
//! Pass one ([`FeedBuilder`]) stages every row that may join its group; pass two
//! ([`StagedRows::build`]) reads the groups back in order of first appearance and builds each
//! product exactly as if the whole feed had been in memory. Pass one can also guess products
//! complete as it goes and build them itself, which makes pass two needless when the guesses
//! hold, as they do for a feed whose products' rows are together.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::{Category, Description, InvalidProduct, PriceRange, Product};
use ucp_domain::json::Json;
use ucp_domain::money::Price;

use super::row::{Attr, RawItem, Row, image, parse_row};
use super::staging::{Phase, Staging, staging_error};
use super::{EarlyProducts, FeedError, ImportOptions, PROGRESS_EVERY, SkippedRow};

/// Lowercase ASCII letters and digits, other runs of characters folded into one `-`.
pub(super) fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    slug
}

/// `<slug of title>-<slug of id>`: unique unless two ids differ only in what slugs drop, which
/// [`StagedRows::build`] resolves with a numeric suffix.
fn handle(title: &str, id: &str) -> String {
    let mut id_slug = slug(id);
    if id_slug.is_empty() {
        id_slug = id.bytes().map(|byte| format!("{byte:02x}")).collect();
    }
    match slug(title) {
        title_slug if title_slug.is_empty() => id_slug,
        title_slug => format!("{title_slug}-{id_slug}"),
    }
}

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
        currency  TEXT    NOT NULL,
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

/// Groups whose state stays in memory at once; the others are in the `groups` table. Rows of
/// one product are usually next to each other, so the cache nearly always answers. (Tests use
/// a small cache, so that every one of them goes through the table too.)
const GROUP_CACHE: usize = if cfg!(test) { 16 } else { 1 << 16 };

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

/// What the insert rule needs to know of a group: counts, not rows.
#[derive(Debug, Clone, Default)]
struct GroupState {
    /// Rows present.
    live: u64,
    /// Rows present that have a title.
    titled: u64,
    /// The currency of the rows present (of the last row inserted).
    currency: String,
    /// Where the group's next new row goes: slots keep rows in order of arrival, a replacing
    /// row taking the slot of the row it replaces.
    next_slot: u64,
    /// Changed since it was read from or written to the `groups` table.
    dirty: bool,
}

/// Group states by ord, a bounded number cached, the rest in the `groups` table.
#[derive(Default)]
struct Groups {
    by_id: HashMap<String, u64>,
    states: HashMap<u64, GroupState>,
    next_ord: u64,
}

impl Groups {
    /// The ord of the group with this id, a new group (in order of first appearance) if unknown.
    fn ord_of(&mut self, connection: &Connection, id: &str) -> Result<u64, FeedError> {
        if let Some(ord) = self.by_id.get(id) {
            return Ok(*ord);
        }
        let stored = connection
            .prepare_cached("SELECT ord, live, titled, currency, next_slot FROM groups WHERE id = ?1")
            .and_then(|mut statement| {
                statement.query_row([id], |row| Ok((row.get::<_, i64>(0)? as u64, stored_state(row, 1)?))).optional()
            })
            .map_err(staging_error)?;
        let (ord, state) = stored.unwrap_or_else(|| {
            self.next_ord += 1;
            (self.next_ord - 1, GroupState { dirty: true, ..GroupState::default() })
        });
        self.by_id.insert(id.to_owned(), ord);
        self.states.insert(ord, state);
        Ok(ord)
    }

    /// The state of the group `ord`, read back into the cache if it was written out.
    fn state(&mut self, connection: &Connection, ord: u64) -> Result<&mut GroupState, FeedError> {
        if !self.states.contains_key(&ord) {
            let (id, state) = connection
                .prepare_cached("SELECT id, live, titled, currency, next_slot FROM groups WHERE ord = ?1")
                .and_then(|mut statement| {
                    statement.query_row([ord as i64], |row| Ok((row.get::<_, String>(0)?, stored_state(row, 1)?)))
                })
                .map_err(staging_error)?;
            self.by_id.insert(id, ord);
            self.states.insert(ord, state);
        }
        self.states.get_mut(&ord).ok_or_else(|| FeedError::Staging(format!("group {ord} vanished from the cache")))
    }

    /// Writes the changed states to the `groups` table and empties the cache.
    fn flush(&mut self, connection: &Connection) -> Result<(), FeedError> {
        let mut upsert = connection
            .prepare_cached(
                "INSERT INTO groups (ord, id, live, titled, currency, next_slot) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (ord) DO UPDATE SET live = excluded.live, titled = excluded.titled,
                     currency = excluded.currency, next_slot = excluded.next_slot",
            )
            .map_err(staging_error)?;
        for (id, ord) in self.by_id.drain() {
            if let Some(state) = self.states.remove(&ord)
                && state.dirty
            {
                upsert
                    .execute(params![
                        ord as i64,
                        id,
                        state.live as i64,
                        state.titled as i64,
                        state.currency,
                        state.next_slot as i64
                    ])
                    .map_err(staging_error)?;
            }
        }
        self.states.clear();
        Ok(())
    }
}

/// A group's state from its columns `live, titled, currency, next_slot`, starting at `first`.
fn stored_state(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<GroupState> {
    Ok(GroupState {
        live: row.get::<_, i64>(first)? as u64,
        titled: row.get::<_, i64>(first + 1)? as u64,
        currency: row.get(first + 2)?,
        next_slot: row.get::<_, i64>(first + 3)? as u64,
        dirty: false,
    })
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
        match parse_row(raw, options) {
            Ok(row) => match self.insert(&row)? {
                Ok(placed) => self.guess(row, &placed)?,
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
    /// group. The rule, for a row joining group G and replacing the row of the same id (if any,
    /// in G or another group): what G holds besides the replaced row must share the row's
    /// currency, and hold a title if the row has none.
    fn insert(&mut self, row: &Row) -> Result<Result<Placed, SkippedRow>, FeedError> {
        let connection = self.staging.connection();
        let ord = self.groups.ord_of(connection, &row.product_id)?;
        let titled = u64::from(row.title.is_some());
        let group = self.groups.state(connection, ord)?;
        // Most rows have an id not seen before: try that first, and look for the row it
        // replaces only if the id is taken (or the row would be refused without one).
        if admit(row, group.live, group.titled, &group.currency).is_ok() {
            let slot = group.next_slot;
            if insert_row(connection, row_key(ord, slot, row)?, row, titled, &self.encoded, true)? {
                self.live_groups += u64::from(group.live == 0);
                group.next_slot += 1;
                join(group, row, titled);
                return Ok(Ok(Placed { ord, slot, replaced: None }));
            }
        }
        let previous = connection
            .prepare_cached("SELECT key, titled FROM rows WHERE variant = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row([&row.variant.id], |found| {
                        Ok((split_key(found.get(0)?), found.get::<_, i64>(1)? as u64))
                    })
                    .optional()
            })
            .map_err(staging_error)?;
        let group = self.groups.state(connection, ord)?;
        let (mut others, mut titled_others) = (group.live, group.titled);
        if let Some(((previous_group, _), previous_titled)) = previous
            && previous_group == ord
        {
            others -= 1;
            titled_others -= previous_titled;
        }
        if let Err(skipped) = admit(row, others, titled_others, &group.currency) {
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
                join(group, row, titled);
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
                join(group, row, titled);
                if !insert_row(connection, key, row, titled, &self.encoded, false)? {
                    return Err(FeedError::Staging(format!("row id {:?} is staged twice", row.variant.id)));
                }
                Ok(Ok(Placed { ord, slot, replaced: previous.map(|(group_slot, _)| group_slot) }))
            }
        }
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

/// Whether `row` may join a group that holds `others` rows besides the one it replaces,
/// `titled_others` of them with a title, in `currency`.
fn admit(row: &Row, others: u64, titled_others: u64, currency: &str) -> Result<(), SkippedRow> {
    if others > 0 && row.variant.price.currency != currency {
        return Err(SkippedRow::new(
            row.line,
            Attr::Price.name(),
            format!(
                "currency {} differs from {} used by the other items of product {:?}",
                row.variant.price.currency, currency, row.product_id
            ),
        ));
    }
    if titled_others == 0 && row.title.is_none() {
        return Err(SkippedRow::new(
            row.line,
            Attr::Title.name(),
            "missing (the first item of a product needs a title)",
        ));
    }
    Ok(())
}

/// Counts `row` into its group's state.
fn join(group: &mut GroupState, row: &Row, titled: u64) {
    group.currency.clone_from(&row.variant.price.currency);
    group.live += 1;
    group.titled += titled;
    group.dirty = true;
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

/// The rows of a Merchant Center feed, staged and grouped, ready to become products.
pub(super) struct StagedRows {
    pub(super) staging: Staging,
    pub(super) rows: u64,
    /// Groups with rows: the most products the feed can give.
    pub(super) groups: u64,
    options: ImportOptions,
    /// Every product was handed on while reading (how many): nothing is left to build.
    pub(super) handed: Option<u64>,
    /// Products may have been built while reading: a build starts by forgetting their handles
    /// and skipped rows.
    guessed: bool,
    /// The reading stopped at a wrong guess, without the rows' values: nothing can be built.
    pub(super) abandoned: bool,
}

impl StagedRows {
    /// Builds and normalizes the products in order of first appearance, handing each to
    /// `emit`; a product that does not normalize is skipped (at the line of the row at fault).
    /// `progress` is told the groups done now and then. Returns how many products were built.
    pub(super) fn build(&self, emit: &mut dyn FnMut(Product), progress: &mut dyn FnMut(u64)) -> Result<u64, FeedError> {
        let connection = self.staging.connection();
        if self.abandoned {
            return Err(FeedError::Staging("the reading was abandoned: read the feed again".to_owned()));
        }
        if self.guessed {
            // What was built while reading is built again.
            connection.execute("DELETE FROM handles", []).map_err(staging_error)?;
            self.staging.forget_build_skips()?;
        }
        let corrupt = || FeedError::Staging("a staged row no longer reads back".to_owned());
        let mut statement =
            connection.prepare("SELECT key, line, raw FROM rows ORDER BY key").map_err(staging_error)?;
        let mut cursor = statement.query([]).map_err(staging_error)?;
        let mut raw = RawItem::default();
        let mut rows: Vec<Row> = Vec::new();
        let mut current = None;
        let (mut groups, mut built) = (0u64, 0u64);
        loop {
            let found = cursor.next().map_err(staging_error)?;
            let ord = match found {
                Some(found) => Some(split_key(found.get(0).map_err(staging_error)?).0),
                None => None,
            };
            if ord != current && !rows.is_empty() {
                built += u64::from(finish_group(&self.staging, std::mem::take(&mut rows), emit)?);
                groups += 1;
                if groups.is_multiple_of(PROGRESS_EVERY) {
                    progress(groups);
                }
            }
            let Some(found) = found else { break };
            current = ord;
            let line: i64 = found.get(1).map_err(staging_error)?;
            let bytes = found.get_ref(2).and_then(|value| Ok(value.as_blob()?)).map_err(staging_error)?;
            raw.decode(line as u64, bytes).ok_or_else(corrupt)?;
            rows.push(parse_row(&mut raw, &self.options).map_err(|_| corrupt())?);
        }
        progress(groups);
        Ok(built)
    }
}

/// Builds, normalizes and emits the product of one group's rows (handle made unique); `false`
/// if it was skipped.
fn finish_group(staging: &Staging, rows: Vec<Row>, emit: &mut dyn FnMut(Product)) -> Result<bool, FeedError> {
    let lines: Vec<u64> = rows.iter().map(|row| row.line).collect();
    let mut product = build_product(rows[0].product_id.clone(), rows);
    match product.normalize() {
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

/// `3` for a field like `variants[3].price`.
pub(super) fn variant_index_of(field: &str) -> Option<usize> {
    let rest = field.strip_prefix("variants[")?;
    rest[..rest.find(']')?].parse().ok()
}

pub(super) fn build_product(id: String, rows: Vec<Row>) -> Product {
    let title = rows.iter().find_map(|row| row.title.clone()).unwrap_or_default();
    let description = rows.iter().find_map(|row| row.description.clone());
    let url = rows.iter().find_map(|row| row.link.clone());
    let brand = rows.iter().find_map(|row| row.brand.clone());
    let condition = rows.iter().find_map(|row| row.condition.clone());

    let mut categories: Vec<Category> = Vec::new();
    let mut media = Vec::new();
    let mut seen_images = HashSet::new();
    for row in &rows {
        for category in &row.categories {
            if !categories.contains(category) {
                categories.push(category.clone());
            }
        }
        for url in &row.images {
            if seen_images.insert(url.as_str()) {
                media.push(image(url));
            }
        }
    }
    let mut metadata = ucp_domain::json::JsonMap::new();
    let mut tags = Vec::new();
    if let Some(brand) = &brand {
        metadata.insert("brand".to_owned(), Json::from(brand.as_str()));
        tags.push(brand.clone());
    }
    if let Some(condition) = condition {
        metadata.insert("condition".to_owned(), Json::from(condition));
    }
    let currency = rows[0].variant.price.currency.clone();
    let several = rows.len() > 1;
    let variants = rows
        .into_iter()
        .map(|row| {
            let mut variant = row.variant;
            variant.title = match (several && !variant.options.is_empty(), row.title) {
                (true, _) => variant.options.iter().map(|option| option.label.as_str()).collect::<Vec<_>>().join(" / "),
                (false, Some(row_title)) => row_title,
                (false, None) => title.clone(),
            };
            // A lone variant's images are the product's.
            if several {
                variant.media = row.images.iter().map(|url| image(url)).collect();
            }
            if row.description.is_some() && row.description != description {
                variant.description = Description { plain: row.description, html: None, markdown: None };
            }
            variant
        })
        .collect();
    Product {
        handle: Some(handle(&title, &id)),
        id,
        title,
        description: Description { plain: description, html: None, markdown: None },
        url,
        categories,
        price_range: PriceRange { min: Price::new(0, currency.clone()), max: Price::new(0, currency) },
        list_price_range: None,
        media,
        options: Vec::new(),
        variants,
        rating: None,
        tags,
        metadata: (!metadata.is_empty()).then_some(metadata),
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::import::reference::ReferenceBuilder;
    use crate::import::row::Attr;
    use crate::import::{ParsedFeed, Staged, StagedFeed, collect};

    #[test]
    fn slugs_and_handles() {
        assert_eq!(slug("  Men's T-Shirt (Blue)!  "), "men-s-t-shirt-blue");
        assert_eq!(handle("Classic Tee", "SKU_1"), "classic-tee-sku-1");
        assert_eq!(handle("Été", "É"), "t-c389");
    }

    fn raw(line: u64, values: &[(Attr, &str)]) -> RawItem {
        let mut raw = RawItem::default();
        raw.reset(line);
        for (attr, value) in values {
            raw.set(*attr, value);
        }
        raw
    }

    fn builder() -> FeedBuilder<'static> {
        FeedBuilder::new(Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(), None, true)
    }

    fn finish(builder: FeedBuilder<'_>) -> ParsedFeed {
        collect_rows(builder.finish(&ImportOptions::default()).unwrap(), Vec::new())
    }

    /// The feed staged, after the `early` products handed on while reading.
    fn collect_rows(staged: StagedRows, early: Vec<Product>) -> ParsedFeed {
        let groups: i64 = staged
            .staging
            .connection()
            .query_row(&format!("SELECT count(DISTINCT key >> {SLOT_BITS}) FROM rows"), [], |row| row.get(0))
            .unwrap();
        assert_eq!(staged.groups, groups as u64, "groups with rows are counted as they come and go");
        collect(StagedFeed { staged: Staged::Rows(staged) }, early).unwrap()
    }

    #[test]
    fn duplicate_ids_replace_earlier_rows_even_across_groups() {
        let options = ImportOptions::default();
        let mut builder = builder();
        let rows = [
            raw(2, &[(Attr::Id, "a"), (Attr::Title, "First"), (Attr::Price, "1 USD")]),
            raw(3, &[(Attr::Id, "b"), (Attr::ItemGroupId, "g"), (Attr::Title, "Group"), (Attr::Price, "2 USD")]),
            raw(4, &[(Attr::Id, "a"), (Attr::Title, "Second"), (Attr::Price, "3 USD")]),
            raw(5, &[(Attr::Id, "b"), (Attr::ItemGroupId, "h"), (Attr::Title, "Moved"), (Attr::Price, "4 USD")]),
        ];
        for mut row in rows {
            builder.add(&mut row, &options).unwrap();
        }
        let feed = finish(builder);
        assert_eq!(feed.rows, 4);
        assert!(feed.skipped.is_empty(), "{:?}", feed.skipped);
        let ids: Vec<&str> = feed.products.iter().map(|product| product.id.as_str()).collect();
        assert_eq!(ids, ["a", "h"]);
        assert_eq!(feed.products[0].handle.as_deref(), Some("second-a"));
        assert_eq!(feed.products[0].title, "Second");
        assert_eq!(feed.products[0].price_range.min.amount, 300);
        assert_eq!(feed.products[1].variants[0].id, "b");
    }

    #[test]
    fn handles_are_unique() {
        let options = ImportOptions::default();
        let mut builder = builder();
        for (line, id) in [(2, "a_1"), (3, "a-1"), (4, "A.1")] {
            let mut row = raw(line, &[(Attr::Id, id), (Attr::Title, "Cup"), (Attr::Price, "1")]);
            builder.add(&mut row, &options).unwrap();
        }
        let handles: Vec<String> = finish(builder).products.into_iter().filter_map(|product| product.handle).collect();
        assert_eq!(handles, ["cup-a-1", "cup-a-1-2", "cup-a-1-3"]);
    }

    #[test]
    fn group_rows_need_one_currency_and_a_first_title() {
        let options = ImportOptions::default();
        let mut builder = builder();
        let rows = [
            raw(2, &[(Attr::Id, "a1"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 USD")]),
            raw(3, &[(Attr::Id, "a2"), (Attr::ItemGroupId, "a"), (Attr::Title, "A"), (Attr::Price, "1 USD")]),
            raw(4, &[(Attr::Id, "a3"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 EUR")]),
            raw(5, &[(Attr::Id, "a4"), (Attr::ItemGroupId, "a"), (Attr::Price, "2 USD"), (Attr::Size, "L")]),
        ];
        for mut row in rows {
            builder.add(&mut row, &options).unwrap();
        }
        let feed = finish(builder);
        let skipped: Vec<String> = feed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].starts_with("line 2: title: "));
        assert!(skipped[1].starts_with("line 4: price: currency EUR differs"));
        let product = &feed.products[0];
        assert_eq!(product.variants.len(), 2);
        assert_eq!(product.variants[0].title, "A");
        assert_eq!(product.variants[1].title, "L");
    }

    // Many other products (more than the group cache holds) between a product's first row and
    // its last: the product is still whole, in the place of its first row.
    #[test]
    fn a_group_whose_rows_are_far_apart_is_one_product_in_its_first_place() {
        let options = ImportOptions::default();
        let mut builder = builder();
        let others = GROUP_CACHE * 3;
        let mut line = 1;
        let mut add = |builder: &mut FeedBuilder, values: &[(Attr, &str)]| {
            line += 1;
            builder.add(&mut raw(line, values), &options).unwrap();
        };
        let tee = |id, size| {
            [
                (Attr::Id, id),
                (Attr::ItemGroupId, "tee"),
                (Attr::Title, "Tee"),
                (Attr::Price, "9 USD"),
                (Attr::Size, size),
            ]
        };
        add(&mut builder, &tee("tee-s", "S"));
        for other in 0..others {
            let id = format!("mug-{other}");
            add(&mut builder, &[(Attr::Id, &id), (Attr::Title, "Mug"), (Attr::Price, "5 USD")]);
            if other == others / 2 {
                add(&mut builder, &tee("tee-m", "M"));
            }
        }
        add(&mut builder, &tee("tee-l", "L"));
        // A repeat far from the first: replaces it in place.
        add(
            &mut builder,
            &[(Attr::Id, "tee-s"), (Attr::ItemGroupId, "tee"), (Attr::Price, "7 USD"), (Attr::Size, "XS")],
        );
        let feed = finish(builder);
        assert!(feed.skipped.is_empty(), "{:?}", feed.skipped);
        assert_eq!(feed.products.len(), others + 1);
        let tee = &feed.products[0];
        assert_eq!(tee.id, "tee");
        let variants: Vec<(&str, &str)> =
            tee.variants.iter().map(|variant| (variant.id.as_str(), variant.title.as_str())).collect();
        assert_eq!(variants, [("tee-s", "XS"), ("tee-m", "M"), ("tee-l", "L")]);
        assert_eq!(tee.price_range.min.amount, 700);
        assert_eq!(feed.products[1].id, "mug-0");
        assert_eq!(feed.products[others].handle.as_deref(), Some(format!("mug-mug-{}", others - 1).as_str()));
    }

    /// Products handed on while reading, and whether they were retracted.
    #[derive(Default)]
    struct Early {
        products: Vec<Product>,
        retracted: bool,
    }

    impl EarlyProducts for Early {
        fn product(&mut self, product: Product) {
            assert!(!self.retracted, "no product comes after a retraction");
            self.products.push(product);
        }

        fn retract(&mut self) {
            self.retracted = true;
            self.products.clear();
        }
    }

    /// A random feed: products one after the other (`scattered`: rows in random order), each
    /// of a few rows, with now and then a row of an earlier product (`moved`) or with the id of
    /// an earlier row (`repeated`); random currencies, titles (colliding handles), missing
    /// titles and bad prices.
    fn random_feed(rng: &mut ChaCha8Rng, scattered: bool, moved: f64, repeated: f64) -> Vec<Vec<(Attr, String)>> {
        let most = [4, 12, GROUP_CACHE * 4][rng.random_range(0..3)];
        let groups = rng.random_range(1..most + 1);
        let mut rows = Vec::new();
        let mut ids: Vec<String> = Vec::new();
        for group in 0..groups {
            for variant in 0..rng.random_range(1..4) {
                let mut group = group;
                if rng.random_bool(moved) {
                    group = rng.random_range(0..=group);
                }
                let id = match ids.len() {
                    0 => format!("v{group}-{variant}"),
                    known if rng.random_bool(repeated) => ids[rng.random_range(0..known)].clone(),
                    _ => format!("{}{group}-{variant}", ["v", "V_", "v-"][rng.random_range(0..3)]),
                };
                ids.push(id.clone());
                let price = match rng.random_range(0..20) {
                    0 => "1 EUR".to_owned(),
                    1 => "free".to_owned(),
                    cents => format!("{cents}.50 USD"),
                };
                let mut values = vec![
                    (Attr::Id, id),
                    (Attr::Price, price),
                    (Attr::Size, ["S", "M", "L"][rng.random_range(0..3)].to_owned()),
                ];
                if rng.random_bool(0.7) {
                    values.push((Attr::ItemGroupId, format!("g{group}")));
                }
                if rng.random_bool(0.85) {
                    values.push((Attr::Title, ["Tee", "Mug", "tee"][rng.random_range(0..3)].to_owned()));
                }
                rows.push(values);
            }
        }
        if scattered {
            for index in (1..rows.len()).rev() {
                rows.swap(index, rng.random_range(0..=index));
            }
        }
        rows
    }

    // Random feeds built to hit every rule (repeated ids in and across groups, groups emptied
    // by moves, mixed currencies, untitled first rows, handle collisions, bad prices), with
    // far more groups than the cache holds: staged, with products built after reading or
    // handed on while reading (and retracted when a guess was wrong), they give exactly what
    // the in-memory grouping gives.
    #[test]
    fn staged_grouping_matches_the_in_memory_grouping() {
        let options = ImportOptions::default();
        let (mut guessed_right, mut retracted) = (0, 0);
        for seed in 0..150 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (moved, repeated) = [(0.0, 0.0), (0.0, 0.01), (0.0, 0.2), (0.01, 0.0), (0.2, 0.2)][seed as usize % 5];
            let feed = random_feed(&mut rng, seed % 7 == 0, moved, repeated);
            let mut reference = ReferenceBuilder::default();
            let mut staged = builder();
            let (mut early, mut early_alone) = (Early::default(), Early::default());
            let mut guessing =
                FeedBuilder::new(Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(), Some(&mut early), true);
            let mut alone = FeedBuilder::new(
                Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(),
                Some(&mut early_alone),
                false,
            );
            let mut reading_alone = true;
            for (line, values) in (2..).zip(&feed) {
                let values: Vec<(Attr, &str)> = values.iter().map(|(attr, value)| (*attr, value.as_str())).collect();
                reference.add(&mut raw(line, &values), &options);
                staged.add(&mut raw(line, &values), &options).unwrap();
                guessing.add(&mut raw(line, &values), &options).unwrap();
                if reading_alone {
                    reading_alone = alone.add(&mut raw(line, &values), &options).unwrap();
                }
            }
            let (reference, staged) = (reference.finish(), finish(staged));
            let guessing = guessing.finish(&options).unwrap();
            let guessed = collect_rows(guessing, std::mem::take(&mut early.products));
            let alone = alone.finish(&options).unwrap();
            // Without the rows' values, a wrong guess abandons the reading, as soon as it is made.
            assert_eq!(alone.abandoned, early.retracted, "seed {seed}");
            assert_eq!(early_alone.retracted, early.retracted, "seed {seed}");
            let mut ways = vec![("after reading", staged), ("while reading", guessed)];
            if !alone.abandoned {
                ways.push(("while reading, values not kept", collect_rows(alone, early_alone.products)));
            }
            if early.retracted {
                retracted += 1;
            } else {
                guessed_right += 1;
            }
            for (how, feed) in ways {
                assert_eq!(feed.rows, reference.rows, "seed {seed}, built {how}");
                assert_eq!(feed.skipped, reference.skipped, "seed {seed}, built {how}");
                assert_eq!(feed.products, reference.products, "seed {seed}, built {how}");
            }
        }
        assert!(
            guessed_right > 20 && retracted > 20,
            "both ways are tried: {guessed_right} right, {retracted} retracted"
        );
    }
}
