//! Profiles: the business profile a merchant serves at `/.well-known/ucp` (typed for
//! serializing and reading back), and the platform profile a caller names, validated for
//! what negotiation needs while tolerating what real platforms omit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ucp_domain::payment::PlatformHandler;

pub mod authority;
mod budget;

pub use budget::{MAX_OBJECTS as MAX_PROFILE_OBJECTS, MAX_VALUES as MAX_PROFILE_VALUES};

/// The document served at `/.well-known/ucp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusinessProfile {
    pub ucp: BusinessUcp,
    /// Public JWKs responses are signed with.
    #[serde(default)]
    pub signing_keys: Vec<Value>,
    /// The same keys under their older member name.
    #[serde(default)]
    pub keys: Vec<Value>,
}

/// The `ucp` member of a business profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusinessUcp {
    pub version: String,
    /// Service name (`dev.ucp.shopping`) → its transport bindings.
    #[serde(default)]
    pub services: BTreeMap<String, Vec<ServiceBinding>>,
    /// Capability name → the versions offered.
    #[serde(default)]
    pub capabilities: BTreeMap<String, Vec<CapabilityEntry>>,
    /// Payment handler name → its declarations.
    #[serde(default)]
    pub payment_handlers: Value,
}

/// A transport of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Mcp,
    Rest,
}

/// One binding of a service: where and how to call it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceBinding {
    pub version: String,
    pub transport: Transport,
    pub spec: String,
    pub schema: String,
    pub endpoint: String,
}

/// One offered version of a capability.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityEntry {
    pub version: String,
    pub spec: String,
    pub schema: String,
    /// The parents of an extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<Extends>,
}

/// `extends`: one parent name, or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Extends {
    One(String),
    Many(Vec<String>),
}

impl Extends {
    /// `None` for no parents, a string for one, an array for more.
    pub fn of(parents: &[String]) -> Option<Extends> {
        match parents {
            [] => None,
            [single] => Some(Extends::One(single.clone())),
            many => Some(Extends::Many(many.to_vec())),
        }
    }
}

/// What negotiation and signature checks need from a platform's profile.
#[derive(Debug, Clone, PartialEq)]
pub struct PlatformProfile {
    pub version: String,
    /// Capability name → versions the platform declares.
    pub capabilities: BTreeMap<String, Vec<String>>,
    /// Public keys (`keys` or `signing_keys`), for signature checks.
    pub keys: Vec<Value>,
    /// The payment handlers the platform declares it can use, each with the instrument types
    /// it takes; empty when it declares none.
    pub payment_handlers: Vec<PlatformHandler>,
    /// Capabilities with an entry lacking `spec` or `schema` (each named once): tolerated,
    /// worth a log line.
    pub incomplete_capabilities: Vec<String>,
    /// Capabilities with an entry left out because its `schema` is not published by the name's
    /// authority ([`authority::binds`]); each named once.
    pub unbound_capabilities: Vec<String>,
    /// Members of `ucp` the schema requires that the profile lacks (`services`,
    /// `payment_handlers`): tolerated, worth a log line.
    pub missing_members: Vec<&'static str>,
    /// Capability name → the `config.webhook_url` of its first entry that has one (the order
    /// capability's is where order webhooks go, order.md §3).
    pub webhook_urls: BTreeMap<String, String>,
}

/// Why a platform profile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The document is not a UCP profile; the reason names the offending member.
    #[error("{0}")]
    Malformed(String),
}

/// The most capabilities a platform profile may declare, versions a capability may list, and
/// bytes a capability's name may have. A profile is a stranger's document, read before any
/// credential is checked: what it holds is kept in the profile cache and looked through on
/// every call it negotiates, so its lists are bounded here, where it is read. Real profiles
/// declare a dozen capabilities of one or two versions, named in reverse-DNS
/// (`dev.ucp.shopping.checkout`).
pub const MAX_CAPABILITIES: usize = 128;
/// See [`MAX_CAPABILITIES`].
pub const MAX_CAPABILITY_VERSIONS: usize = 16;
/// See [`MAX_CAPABILITIES`].
pub const MAX_CAPABILITY_NAME_BYTES: usize = 256;
/// The most public keys (`keys` and `signing_keys` together) a platform profile may publish;
/// a signer rotating keys publishes two or three.
pub const MAX_KEYS: usize = 32;

impl PlatformProfile {
    /// Validates what negotiation needs: a `ucp` object with a `YYYY-MM-DD` version, and if
    /// present capabilities with dated versions and keys with `kid` and `kty` and no private
    /// member, within [`MAX_CAPABILITIES`], [`MAX_CAPABILITY_VERSIONS`],
    /// [`MAX_CAPABILITY_NAME_BYTES`] and [`MAX_KEYS`], and of at most [`MAX_PROFILE_VALUES`]
    /// JSON values and [`MAX_PROFILE_OBJECTS`] objects, counted before the document is parsed
    /// into a tree (`budget.rs`). Missing `spec`/`schema` on a capability entry is tolerated;
    /// an entry whose `schema` fails authority binding is left out (overview.md §3: the draft
    /// binds `schema` only, and has a business apply the same check to platform profiles).
    pub fn parse(body: &[u8]) -> Result<PlatformProfile, ProfileError> {
        let malformed = ProfileError::Malformed;
        budget::check(body).map_err(|refused| match refused {
            budget::Refused::Syntax(error) => malformed(format!("not JSON ({error})")),
            budget::Refused::Over(reason) => malformed(reason),
        })?;
        let document: Value = serde_json::from_slice(body).map_err(|error| malformed(format!("not JSON ({error})")))?;
        let ucp =
            document.get("ucp").and_then(Value::as_object).ok_or_else(|| malformed("no \"ucp\" object".into()))?;
        let version = ucp.get("version").and_then(Value::as_str).ok_or_else(|| malformed("no ucp.version".into()))?;
        if !is_date_version(version) {
            return Err(malformed(format!("ucp.version {version:?} is not YYYY-MM-DD")));
        }
        let mut capabilities = BTreeMap::new();
        let mut incomplete_capabilities = Vec::new();
        let mut unbound_capabilities = Vec::new();
        let mut webhook_urls = BTreeMap::new();
        match ucp.get("capabilities") {
            None => {}
            Some(Value::Object(map)) => {
                if map.len() > MAX_CAPABILITIES {
                    return Err(malformed(format!(
                        "ucp.capabilities declares more than {MAX_CAPABILITIES} capabilities"
                    )));
                }
                for (name, entries) in map {
                    if name.len() > MAX_CAPABILITY_NAME_BYTES {
                        return Err(malformed(format!(
                            "ucp.capabilities has a name longer than {MAX_CAPABILITY_NAME_BYTES} bytes"
                        )));
                    }
                    let entries = entries
                        .as_array()
                        .ok_or_else(|| malformed(format!("ucp.capabilities[{name:?}] is not an array")))?;
                    if entries.len() > MAX_CAPABILITY_VERSIONS {
                        return Err(malformed(format!(
                            "ucp.capabilities[{name:?}] lists more than {MAX_CAPABILITY_VERSIONS} entries"
                        )));
                    }
                    let mut versions = Vec::with_capacity(entries.len());
                    for (index, entry) in entries.iter().enumerate() {
                        let entry_version = entry
                            .get("version")
                            .and_then(Value::as_str)
                            .filter(|version| is_date_version(version))
                            .ok_or_else(|| {
                                malformed(format!("ucp.capabilities[{name:?}][{index}] has no YYYY-MM-DD version"))
                            })?;
                        // A `schema` another authority publishes; a null one counts as absent.
                        let unbound = entry
                            .get("schema")
                            .filter(|schema| !schema.is_null())
                            .is_some_and(|schema| !schema.as_str().is_some_and(|url| authority::binds(name, url)));
                        if unbound {
                            if unbound_capabilities.last() != Some(name) {
                                unbound_capabilities.push(name.clone());
                            }
                            continue;
                        }
                        // A spec only needs to be https; one that is not is noted like a missing one.
                        let spec_ok =
                            entry.get("spec").and_then(Value::as_str).is_some_and(|spec| spec.starts_with("https://"));
                        if (!spec_ok || entry.get("schema").is_none_or(Value::is_null))
                            && incomplete_capabilities.last() != Some(name)
                        {
                            incomplete_capabilities.push(name.clone());
                        }
                        versions.push(entry_version.to_owned());
                        if let Some(url) = entry.pointer("/config/webhook_url").and_then(Value::as_str) {
                            webhook_urls.entry(name.clone()).or_insert_with(|| url.to_owned());
                        }
                    }
                    if !versions.is_empty() || entries.is_empty() {
                        capabilities.insert(name.clone(), versions);
                    }
                }
            }
            Some(_) => return Err(malformed("ucp.capabilities is not an object".into())),
        }
        let mut keys = Vec::new();
        for field in ["keys", "signing_keys"] {
            match document.get(field) {
                None => {}
                Some(Value::Array(items)) => {
                    if keys.len() + items.len() > MAX_KEYS {
                        return Err(malformed(format!("the profile publishes more than {MAX_KEYS} keys")));
                    }
                    for (index, key) in items.iter().enumerate() {
                        if key.get("kid").and_then(Value::as_str).is_none()
                            || key.get("kty").and_then(Value::as_str).is_none()
                        {
                            return Err(malformed(format!("{field}[{index}] lacks kid or kty")));
                        }
                        if key.get("d").is_some() {
                            return Err(malformed(format!("{field}[{index}] publishes a private key member")));
                        }
                        keys.push(key.clone());
                    }
                }
                Some(_) => return Err(malformed(format!("{field} is not an array"))),
            }
        }
        let payment_handlers = ucp
            .get("payment_handlers")
            .and_then(Value::as_object)
            .map(|handlers| handlers.iter().take(MAX_DECLARED).map(|(name, entries)| declared(name, entries)).collect())
            .unwrap_or_default();
        Ok(PlatformProfile {
            version: version.to_owned(),
            capabilities,
            keys,
            payment_handlers,
            incomplete_capabilities,
            unbound_capabilities,
            missing_members: ["services", "payment_handlers"]
                .into_iter()
                .filter(|member| ucp.get(*member).is_none())
                .collect(),
            webhook_urls,
        })
    }
}

/// The most payment handlers, and instrument types per handler, read from a platform profile
/// (bounding what a call does with them).
const MAX_DECLARED: usize = 64;

/// A handler a platform declares as `name`: the instrument types of its entries'
/// `available_instruments`, or every type (`None`) when an entry has none (the schema's
/// "absent = everything allowed") or the declaration is not a list of entries.
fn declared(name: &str, entries: &Value) -> PlatformHandler {
    let mut types: Vec<String> = Vec::new();
    let entries = entries.as_array().map(Vec::as_slice).unwrap_or_default();
    for entry in entries {
        let Some(instruments) = entry.get("available_instruments").and_then(Value::as_array) else {
            return PlatformHandler { name: name.to_owned(), instrument_types: None };
        };
        for kind in instruments.iter().filter_map(|instrument| instrument.get("type")?.as_str()) {
            if types.len() < MAX_DECLARED && !types.iter().any(|known| known == kind) {
                types.push(kind.to_owned());
            }
        }
    }
    let every = entries.is_empty();
    PlatformHandler { name: name.to_owned(), instrument_types: (!every).then_some(types) }
}

/// Whether `text` has the `YYYY-MM-DD` shape of a UCP version.
pub fn is_date_version(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() == 10
        && bytes
            .iter()
            .enumerate()
            .all(|(index, byte)| if index == 4 || index == 7 { *byte == b'-' } else { byte.is_ascii_digit() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_profiles_tolerate_missing_spec_but_not_missing_version() {
        let good = br#"{"ucp":{"version":"2026-04-08","capabilities":{"dev.ucp.shopping.catalog.search":[{"version":"2026-04-08"}]},"payment_handlers":{"com.example.pay":[]}},"keys":[{"kid":"k","kty":"EC"}]}"#;
        let profile = PlatformProfile::parse(good).unwrap();
        assert_eq!(profile.capabilities["dev.ucp.shopping.catalog.search"], vec!["2026-04-08"]);
        assert_eq!(profile.incomplete_capabilities, ["dev.ucp.shopping.catalog.search"]);
        assert_eq!(
            profile.payment_handlers,
            [PlatformHandler { name: "com.example.pay".into(), instrument_types: None }],
            "no entries: every type"
        );
        // Checklist 139: each handler's instrument types, from its entries' `available_instruments`.
        let declaring = br#"{"ucp":{"version":"2026-04-08","payment_handlers":{
            "a":[{"id":"1","version":"2026-04-08","available_instruments":[{"type":"card","constraints":{"brands":["visa"]}}]},
                 {"id":"2","version":"2026-04-08","available_instruments":[{"type":"wallet"},{"type":"card"}]}],
            "b":[{"id":"3","version":"2026-04-08","available_instruments":[{"type":"card"}]},{"id":"4","version":"2026-04-08"}]}}}"#;
        let declared = PlatformProfile::parse(declaring).unwrap();
        let types = |name: &str| {
            declared.payment_handlers.iter().find(|handler| handler.name == name).unwrap().instrument_types.clone()
        };
        assert_eq!(types("a"), Some(vec!["card".to_owned(), "wallet".to_owned()]));
        assert_eq!(types("b"), None, "an entry without available_instruments allows every type");
        assert_eq!(profile.keys.len(), 1);
        assert!(profile.webhook_urls.is_empty());
        let with_hook = br#"{"ucp":{"version":"2026-04-08","capabilities":{"dev.ucp.shopping.order":[{"version":"2026-04-08"},{"version":"2026-04-08","config":{"webhook_url":"https://p.example/hooks"}}]}}}"#;
        let profile = PlatformProfile::parse(with_hook).unwrap();
        assert_eq!(profile.webhook_urls["dev.ucp.shopping.order"], "https://p.example/hooks");
        for (bad, reason) in [
            (&br#"{}"#[..], "no \"ucp\" object"),
            (br#"{"ucp":{}}"#, "no ucp.version"),
            (br#"{"ucp":{"version":"draft"}}"#, "ucp.version \"draft\" is not YYYY-MM-DD"),
            (br#"{"ucp":{"version":"2026-04-08","capabilities":[]}}"#, "ucp.capabilities is not an object"),
            (
                br#"{"ucp":{"version":"2026-04-08"},"keys":[{"kid":"k","kty":"EC","d":"x"}]}"#,
                "keys[0] publishes a private key member",
            ),
        ] {
            assert_eq!(PlatformProfile::parse(bad).unwrap_err(), ProfileError::Malformed(reason.into()));
        }
        assert!(PlatformProfile::parse(b"<html>").unwrap_err().to_string().starts_with("not JSON ("));
    }

    // A stranger's profile is bounded where it is read: so many capabilities, versions, keys
    // or so long a name is malformed, and a capability lacking spec on every entry is logged
    // once, not once per entry (a 256 KB profile of one long name in 5,000 entries was 700 MB
    // of copies of that name).
    #[test]
    fn platform_profiles_are_bounded_where_they_are_read() {
        let profile = |capabilities: serde_json::Value, keys: usize| {
            let keys: Vec<_> = (0..keys).map(|n| serde_json::json!({ "kid": format!("k{n}"), "kty": "EC" })).collect();
            serde_json::to_vec(&serde_json::json!({
                "ucp": { "version": "2026-04-08", "capabilities": capabilities }, "keys": keys
            }))
            .unwrap()
        };
        let entries = |count: usize| vec![serde_json::json!({ "version": "2026-04-08" }); count];
        let named = |count: usize| {
            (0..count)
                .map(|n| (format!("dev.example.{n}"), serde_json::json!(entries(1))))
                .collect::<serde_json::Map<_, _>>()
        };
        let long = "x".repeat(MAX_CAPABILITY_NAME_BYTES);
        let most = PlatformProfile::parse(&profile(
            serde_json::json!({ long.clone(): entries(MAX_CAPABILITY_VERSIONS) }),
            MAX_KEYS,
        ))
        .unwrap();
        assert_eq!(most.incomplete_capabilities, std::slice::from_ref(&long), "one line per capability");
        assert_eq!((most.capabilities[&long].len(), most.keys.len()), (MAX_CAPABILITY_VERSIONS, MAX_KEYS));
        assert_eq!(
            PlatformProfile::parse(&profile(named(MAX_CAPABILITIES).into(), 0)).unwrap().capabilities.len(),
            MAX_CAPABILITIES
        );
        for (bad, reason) in [
            (
                profile(named(MAX_CAPABILITIES + 1).into(), 0),
                format!("ucp.capabilities declares more than {MAX_CAPABILITIES} capabilities"),
            ),
            (
                profile(serde_json::json!({ format!("{long}x"): entries(1) }), 0),
                format!("ucp.capabilities has a name longer than {MAX_CAPABILITY_NAME_BYTES} bytes"),
            ),
            (
                profile(serde_json::json!({ "a": entries(MAX_CAPABILITY_VERSIONS + 1) }), 0),
                format!("ucp.capabilities[\"a\"] lists more than {MAX_CAPABILITY_VERSIONS} entries"),
            ),
            (profile(serde_json::json!({}), MAX_KEYS + 1), format!("the profile publishes more than {MAX_KEYS} keys")),
        ] {
            assert_eq!(PlatformProfile::parse(&bad).unwrap_err(), ProfileError::Malformed(reason));
        }
        let split = serde_json::json!({ "ucp": { "version": "2026-04-08" }, "keys": [{ "kid": "a", "kty": "EC" }], "signing_keys": vec![serde_json::json!({ "kid": "b", "kty": "EC" }); MAX_KEYS] });
        assert!(
            PlatformProfile::parse(&serde_json::to_vec(&split).unwrap()).is_err(),
            "keys and signing_keys count together"
        );
    }

    // A profile's JSON is counted before it becomes a tree: 256 KB of one-member objects was
    // 24 MB of maps for each fetch at once. At the bounds it parses; one past either is refused
    // by name, and bad JSON still reads as such.
    #[test]
    fn platform_profiles_are_counted_before_they_are_parsed() {
        // The outer object, `ucp` and its version, and the array `x` of `items`.
        let with = |items: &str| format!(r#"{{"ucp":{{"version":"2026-04-08"}},"x":[{items}]}}"#).into_bytes();
        let objects = |count: usize| vec![r#"{"":0}"#; count].join(",");
        let zeros = |count: usize| vec!["0"; count].join(",");
        // 2 objects of the envelope; each object item is 2 values.
        assert!(PlatformProfile::parse(&with(&objects(MAX_PROFILE_OBJECTS - 2))).is_ok());
        assert_eq!(
            PlatformProfile::parse(&with(&objects(MAX_PROFILE_OBJECTS - 1))).unwrap_err(),
            ProfileError::Malformed(format!("the profile holds more than {MAX_PROFILE_OBJECTS} JSON objects"))
        );
        assert!(PlatformProfile::parse(&with(&zeros(MAX_PROFILE_VALUES - 4))).is_ok());
        assert_eq!(
            PlatformProfile::parse(&with(&zeros(MAX_PROFILE_VALUES - 3))).unwrap_err(),
            ProfileError::Malformed(format!("the profile holds more than {MAX_PROFILE_VALUES} JSON values"))
        );
        for bad in [&br#"{"ucp":{"version":"2026-04-08"}} x"#[..], b"[1e400]", br#"{"a":"\udc00"}"#, b""] {
            let error = PlatformProfile::parse(bad).unwrap_err().to_string();
            assert!(error.starts_with("not JSON ("), "{error}");
        }
    }

    #[test]
    fn business_profiles_round_trip_with_one_or_many_parents() {
        let entry = CapabilityEntry {
            version: "2026-04-08".into(),
            spec: "https://ucp.dev/2026-04-08/specification/discount".into(),
            schema: "https://ucp.dev/2026-04-08/schemas/shopping/discount.json".into(),
            extends: Extends::of(&["a".into(), "b".into()]),
        };
        let value = serde_json::to_value(&entry).unwrap();
        assert_eq!(value["extends"], serde_json::json!(["a", "b"]));
        assert_eq!(serde_json::from_value::<CapabilityEntry>(value).unwrap(), entry);
        assert_eq!(serde_json::to_value(Extends::of(&["a".into()])).unwrap(), serde_json::json!("a"));
        assert_eq!(Extends::of(&[]), None);
    }
}
