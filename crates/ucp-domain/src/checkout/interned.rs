//! Reading back the closed sets of names pricing writes as `&'static str` (total kinds,
//! allocation methods), for a completed checkout's stored final pricing.

use serde::{Deserialize, Deserializer};

use super::{AppliedDiscount, Total};

const TOTAL_KINDS: &[&str] = &["subtotal", "items_discount", "discount", "fulfillment", "tax", "total"];
const METHODS: &[&str] = &["across", "each"];

fn one_of(text: &str, known: &[&'static str]) -> Result<&'static str, String> {
    known
        .iter()
        .find(|name| **name == text)
        .copied()
        .ok_or_else(|| format!("unknown name {text:?}; expected one of {known:?}"))
}

#[derive(Deserialize)]
pub(super) struct StoredTotal {
    kind: String,
    amount: i64,
    display_text: Option<String>,
}

impl TryFrom<StoredTotal> for Total {
    type Error = String;

    fn try_from(stored: StoredTotal) -> Result<Total, String> {
        Ok(Total { kind: one_of(&stored.kind, TOTAL_KINDS)?, amount: stored.amount, display_text: stored.display_text })
    }
}

#[derive(Deserialize)]
pub(super) struct StoredDiscount {
    code: Option<String>,
    title: String,
    amount: i64,
    automatic: bool,
    method: String,
    priority: u32,
    allocations: Vec<(String, i64)>,
}

impl TryFrom<StoredDiscount> for AppliedDiscount {
    type Error = String;

    fn try_from(stored: StoredDiscount) -> Result<AppliedDiscount, String> {
        Ok(AppliedDiscount {
            code: stored.code,
            title: stored.title,
            amount: stored.amount,
            automatic: stored.automatic,
            method: one_of(&stored.method, METHODS)?,
            priority: stored.priority,
            allocations: stored.allocations,
        })
    }
}

impl<'de> Deserialize<'de> for Total {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Total, D::Error> {
        Total::try_from(StoredTotal::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for AppliedDiscount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<AppliedDiscount, D::Error> {
        AppliedDiscount::try_from(StoredDiscount::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}
