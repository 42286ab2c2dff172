//! A group's state as the insert rule sees it (counts, not rows), and the bounded cache of
//! those states over the `groups` table.

use super::*;

/// Groups whose state stays in memory at once; the others are in the `groups` table. Rows of
/// one product are usually next to each other, so the cache nearly always answers. (Tests use
/// a small cache, so that every one of them goes through the table too.)
pub(super) const GROUP_CACHE: usize = if cfg!(test) { 16 } else { 1 << 16 };

/// What the insert rule needs to know of a group: its id and counts, not rows.
#[derive(Debug, Clone, Default)]
pub(super) struct GroupState {
    /// The group's product id.
    pub(super) id: String,
    /// Rows present.
    pub(super) live: u64,
    /// Rows present that have a title.
    pub(super) titled: u64,
    /// Where the group's next new row goes: slots keep rows in order of arrival, a replacing
    /// row taking the slot of the row it replaces.
    pub(super) next_slot: u64,
    /// Changed since it was read from or written to the `groups` table.
    pub(super) dirty: bool,
}

/// Group states by ord, a bounded number cached, the rest in the `groups` table.
#[derive(Default)]
pub(super) struct Groups {
    pub(super) by_id: HashMap<String, u64>,
    pub(super) states: HashMap<u64, GroupState>,
    pub(super) next_ord: u64,
}

impl Groups {
    /// The ord of the group with this id, a new group (in order of first appearance) if unknown.
    pub(super) fn ord_of(&mut self, connection: &Connection, id: &str) -> Result<u64, FeedError> {
        if let Some(ord) = self.by_id.get(id) {
            return Ok(*ord);
        }
        let (ord, state) = match self.stored(connection, id)? {
            Some(stored) => stored,
            None => {
                self.next_ord += 1;
                (self.next_ord - 1, GroupState { id: id.to_owned(), dirty: true, ..GroupState::default() })
            }
        };
        self.by_id.insert(id.to_owned(), ord);
        self.states.insert(ord, state);
        Ok(ord)
    }

    /// The ord of the group with this id, if there is one (a group is never made here).
    pub(super) fn find(&mut self, connection: &Connection, id: &str) -> Result<Option<u64>, FeedError> {
        if let Some(ord) = self.by_id.get(id) {
            return Ok(Some(*ord));
        }
        Ok(self.stored(connection, id)?.map(|(ord, _)| ord))
    }

    /// The group with this id as the `groups` table holds it.
    fn stored(&self, connection: &Connection, id: &str) -> Result<Option<(u64, GroupState)>, FeedError> {
        connection
            .prepare_cached("SELECT ord, id, live, titled, next_slot FROM groups WHERE id = ?1")
            .and_then(|mut statement| {
                statement.query_row([id], |row| Ok((row.get::<_, i64>(0)? as u64, stored_state(row, 1)?))).optional()
            })
            .map_err(staging_error)
    }

    /// The state of the group `ord`, read back into the cache if it was written out.
    pub(super) fn state(&mut self, connection: &Connection, ord: u64) -> Result<&mut GroupState, FeedError> {
        if !self.states.contains_key(&ord) {
            let state = connection
                .prepare_cached("SELECT id, live, titled, next_slot FROM groups WHERE ord = ?1")
                .and_then(|mut statement| statement.query_row([ord as i64], |row| stored_state(row, 0)))
                .map_err(staging_error)?;
            self.by_id.insert(state.id.clone(), ord);
            self.states.insert(ord, state);
        }
        self.states.get_mut(&ord).ok_or_else(|| FeedError::Staging(format!("group {ord} vanished from the cache")))
    }

    /// Writes the changed states to the `groups` table and empties the cache.
    pub(super) fn flush(&mut self, connection: &Connection) -> Result<(), FeedError> {
        let mut upsert = connection
            .prepare_cached(
                "INSERT INTO groups (ord, id, live, titled, next_slot) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (ord) DO UPDATE SET live = excluded.live, titled = excluded.titled,
                     next_slot = excluded.next_slot",
            )
            .map_err(staging_error)?;
        for (id, ord) in self.by_id.drain() {
            if let Some(state) = self.states.remove(&ord)
                && state.dirty
            {
                upsert
                    .execute(params![ord as i64, id, state.live as i64, state.titled as i64, state.next_slot as i64])
                    .map_err(staging_error)?;
            }
        }
        self.states.clear();
        Ok(())
    }
}

/// A group's state from its columns `id, live, titled, next_slot`, starting at `first`.
pub(super) fn stored_state(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<GroupState> {
    Ok(GroupState {
        id: row.get(first)?,
        live: row.get::<_, i64>(first + 1)? as u64,
        titled: row.get::<_, i64>(first + 2)? as u64,
        next_slot: row.get::<_, i64>(first + 3)? as u64,
        dirty: false,
    })
}

/// Whether `row` may join a group that holds `titled_others` rows with a title besides the one
/// it replaces. (Every row is in the catalog's currency, checked when it is read, so the rows
/// of a product share one.)
pub(super) fn admit(row: &Row, titled_others: u64) -> Result<(), SkippedRow> {
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
pub(super) fn join(group: &mut GroupState, titled: u64) {
    group.live += 1;
    group.titled += titled;
    group.dirty = true;
}
