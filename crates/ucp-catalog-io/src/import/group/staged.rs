//! Pass two: the staged rows read back in order of first appearance, each group built into its
//! product.

use super::*;

/// The rows of a Merchant Center feed, staged and grouped, ready to become products.
pub(in crate::import) struct StagedRows {
    pub(in crate::import) staging: Staging,
    pub(in crate::import) rows: u64,
    /// Groups with rows: the most products the feed can give.
    pub(in crate::import) groups: u64,
    pub(in crate::import) options: ImportOptions,
    /// Every product was handed on while reading (how many): nothing is left to build.
    pub(in crate::import) handed: Option<u64>,
    /// Products may have been built while reading: a build starts by forgetting their handles
    /// and skipped rows.
    pub(in crate::import) guessed: bool,
    /// The reading stopped at a wrong guess, without the rows' values: nothing can be built.
    pub(in crate::import) abandoned: bool,
}

impl StagedRows {
    /// Builds and normalizes the products in order of first appearance, handing each to
    /// `emit`; a product that does not normalize is skipped (at the line of the row at fault).
    /// `progress` is told the groups done now and then. Returns how many products were built.
    pub(in crate::import) fn build(
        &self,
        emit: &mut dyn FnMut(Product),
        progress: &mut dyn FnMut(u64),
    ) -> Result<u64, FeedError> {
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
        // Reported when pass one read the rows.
        let mut warnings = Vec::new();
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
            rows.push(parse_row(&mut raw, &self.options, &mut warnings).map_err(|_| corrupt())?);
        }
        progress(groups);
        Ok(built)
    }
}
