//! Capability negotiation (UCP overview §5): the version check and the capability
//! intersection between a business's offer and a platform's declaration. Pure functions over
//! plain data, usable by either side.

use std::collections::{BTreeMap, BTreeSet};

/// One capability version we offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedCapability {
    pub name: String,
    pub version: String,
    /// Parent capability names for an extension; empty for a root capability.
    pub extends: Vec<String>,
}

/// The outcome of intersection: each surviving capability name with the version chosen.
pub type Intersection = BTreeMap<String, String>;

/// What a business offers: the protocol versions it speaks (its own first) and every
/// (capability, namespace) version it serves.
#[derive(Debug, Clone, Copy)]
pub struct Offer<'a> {
    pub accepted_versions: &'a [String],
    pub capabilities: &'a [OfferedCapability],
}

/// What a platform declares in its profile: its protocol version and capability versions.
#[derive(Debug, Clone, Copy)]
pub struct Declaration<'a> {
    pub version: &'a str,
    /// Capability name → versions.
    pub capabilities: &'a BTreeMap<String, Vec<String>>,
}

/// The outcome of negotiation for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    pub version: String,
    /// Capability name → chosen version.
    pub capabilities: Intersection,
}

/// Why negotiation failed; a server maps it to its `version_unsupported` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    #[error("protocol version {requested} is not supported; this business speaks {}", supported.join(", "))]
    VersionUnsupported { requested: String, supported: Vec<String> },
}

/// Version check and capability intersection (overview §5).
pub fn negotiate(business: Offer<'_>, platform: Declaration<'_>) -> Result<Negotiated, NegotiationError> {
    let unsupported = || NegotiationError::VersionUnsupported {
        requested: platform.version.to_owned(),
        supported: business.accepted_versions.to_vec(),
    };
    let (ours, older) = business.accepted_versions.split_first().ok_or_else(unsupported)?;
    let version =
        negotiate_version(platform.version, ours, older.iter().map(String::as_str)).map_err(|_| unsupported())?;
    Ok(Negotiated {
        version: version.to_owned(),
        capabilities: intersect(business.capabilities, platform.capabilities),
    })
}

/// Why a platform's protocol version cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionUnsupported {
    pub requested: String,
}

/// Picks the protocol version for a platform: ours when equal, else one of the versions we
/// still support (keys of `supported_versions`).
pub fn negotiate_version<'a>(
    platform_version: &str,
    our_version: &'a str,
    supported_versions: impl IntoIterator<Item = &'a str>,
) -> Result<&'a str, VersionUnsupported> {
    if platform_version == our_version {
        return Ok(our_version);
    }
    supported_versions
        .into_iter()
        .find(|version| *version == platform_version)
        .ok_or_else(|| VersionUnsupported { requested: platform_version.to_owned() })
}

/// Intersects what we offer with what the platform declares (name → versions).
///
/// 1. keep our capabilities whose name the platform also lists;
/// 2. per name keep versions present on both sides and pick the latest (dates compare lexically);
/// 3. drop extensions none of whose parents survived, repeating until nothing changes.
pub fn intersect(offered: &[OfferedCapability], platform: &BTreeMap<String, Vec<String>>) -> Intersection {
    let mut chosen: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for capability in offered {
        let Some(platform_versions) = platform.get(&capability.name) else { continue };
        if !platform_versions.contains(&capability.version) {
            continue;
        }
        let keep = match chosen.get(&capability.name) {
            Some((version, _)) => capability.version > *version,
            None => true,
        };
        if keep {
            chosen.insert(capability.name.clone(), (capability.version.clone(), capability.extends.clone()));
        }
    }
    loop {
        let names: BTreeSet<String> = chosen.keys().cloned().collect();
        let orphans: Vec<String> = chosen
            .iter()
            .filter(|(_, (_, parents))| !parents.is_empty() && !parents.iter().any(|parent| names.contains(parent)))
            .map(|(name, _)| name.clone())
            .collect();
        if orphans.is_empty() {
            break;
        }
        for orphan in orphans {
            chosen.remove(&orphan);
        }
    }
    chosen.into_iter().map(|(name, (version, _))| (name, version)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(name: &str, version: &str, extends: &[&str]) -> OfferedCapability {
        OfferedCapability {
            name: name.into(),
            version: version.into(),
            extends: extends.iter().map(|parent| parent.to_string()).collect(),
        }
    }

    fn platform(entries: &[(&str, &[&str])]) -> BTreeMap<String, Vec<String>> {
        entries
            .iter()
            .map(|(name, versions)| (name.to_string(), versions.iter().map(|v| v.to_string()).collect()))
            .collect()
    }

    // Conformance 21: same name, exact common version, highest chosen, orphans pruned transitively.
    #[test]
    fn intersection_picks_latest_common_version_and_prunes_orphans() {
        let ours = vec![
            offer("dev.ucp.shopping.checkout", "2026-01-23", &[]),
            offer("dev.ucp.shopping.checkout", "2026-04-08", &[]),
            offer("dev.ucp.shopping.fulfillment", "2026-04-08", &["dev.ucp.shopping.checkout"]),
            offer("dev.ucp.shopping.discount", "2026-04-08", &["dev.ucp.shopping.checkout", "dev.ucp.shopping.cart"]),
            offer("com.example.gift", "2026-04-08", &["dev.ucp.shopping.fulfillment"]),
            offer("dev.ucp.shopping.cart", "2026-04-08", &[]),
        ];
        let theirs = platform(&[
            ("dev.ucp.shopping.checkout", &["2026-01-23", "2026-04-08"]),
            ("dev.ucp.shopping.fulfillment", &["2026-04-08"]),
            ("dev.ucp.shopping.discount", &["2026-04-08"]),
            ("com.example.gift", &["2026-04-08"]),
        ]);
        let negotiated = intersect(&ours, &theirs);
        assert_eq!(negotiated.get("dev.ucp.shopping.checkout").map(String::as_str), Some("2026-04-08"));
        assert!(negotiated.contains_key("dev.ucp.shopping.discount"), "one surviving parent is enough");
        assert!(negotiated.contains_key("com.example.gift"));
        assert!(!negotiated.contains_key("dev.ucp.shopping.cart"));

        let without_checkout = platform(&[
            ("dev.ucp.shopping.fulfillment", &["2026-04-08"]),
            ("com.example.gift", &["2026-04-08"]),
            ("dev.ucp.shopping.discount", &["2026-04-08"]),
        ]);
        let negotiated = intersect(&ours, &without_checkout);
        assert!(negotiated.is_empty(), "extensions fall transitively with their parents: {negotiated:?}");
    }

    #[test]
    fn no_common_version_drops_the_capability() {
        let ours = vec![offer("dev.ucp.shopping.catalog.search", "2026-04-08", &[])];
        let theirs = platform(&[("dev.ucp.shopping.catalog.search", &["2026-01-23"])]);
        assert!(intersect(&ours, &theirs).is_empty());
    }

    #[test]
    fn version_check_accepts_ours_and_supported_only() {
        assert_eq!(negotiate_version("2026-04-08", "2026-04-08", []), Ok("2026-04-08"));
        assert_eq!(negotiate_version("2026-01-23", "2026-04-08", ["2026-01-23"]), Ok("2026-01-23"));
        assert!(negotiate_version("2025-01-01", "2026-04-08", ["2026-01-23"]).is_err());
    }

    #[test]
    fn negotiate_names_what_the_business_speaks() {
        let accepted = vec!["2026-04-08".to_owned(), "2026-01-23".to_owned()];
        let ours = vec![offer("dev.ucp.shopping.cart", "2026-04-08", &[])];
        let theirs = platform(&[("dev.ucp.shopping.cart", &["2026-04-08"])]);
        let business = Offer { accepted_versions: &accepted, capabilities: &ours };
        let negotiated = negotiate(business, Declaration { version: "2026-04-08", capabilities: &theirs }).unwrap();
        assert_eq!(negotiated.version, "2026-04-08");
        assert_eq!(negotiated.capabilities["dev.ucp.shopping.cart"], "2026-04-08");
        let error = negotiate(business, Declaration { version: "2025-01-01", capabilities: &theirs }).unwrap_err();
        assert_eq!(
            error.to_string(),
            "protocol version 2025-01-01 is not supported; this business speaks 2026-04-08, 2026-01-23"
        );
    }
}
