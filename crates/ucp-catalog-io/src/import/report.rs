//! What an import reports about single rows: the rows it left out ([`SkippedRow`]), and the
//! rows it imported without one of their values ([`RowWarning`]).

use std::fmt;

/// A row (text feed), item (XML) or line (JSON lines) left out of the import, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// 1-based physical line of the file where the row or item starts.
    pub line: u64,
    /// The feed attribute (e.g. `price`) or, for JSON lines, the JSON path at fault.
    pub field: String,
    pub reason: String,
    /// The currency the row is priced in, when that is why it was skipped (not the catalog's).
    pub(crate) currency: Option<String>,
}

impl SkippedRow {
    pub(crate) fn new(line: u64, field: impl Into<String>, reason: impl Into<String>) -> Self {
        SkippedRow { line, field: field.into(), reason: reason.into(), currency: None }
    }

    /// The row, skipped for being priced in `currency`, which is not the catalog's.
    pub(crate) fn priced_in(self, currency: impl Into<String>) -> Self {
        SkippedRow { currency: Some(currency.into()), ..self }
    }
}

impl fmt::Display for SkippedRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.field, self.reason)
    }
}

/// A row imported without one of its values, and why: an `additional_image_link` that is no
/// absolute http(s) URL is left out, the row keeping its other images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowWarning {
    /// 1-based physical line of the file where the row or item starts.
    pub line: u64,
    /// The feed attribute whose value was left out.
    pub field: String,
    pub reason: String,
}

impl RowWarning {
    pub(crate) fn new(line: u64, field: impl Into<String>, reason: impl Into<String>) -> Self {
        RowWarning { line, field: field.into(), reason: reason.into() }
    }
}

impl fmt::Display for RowWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.field, self.reason)
    }
}
