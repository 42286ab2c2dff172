//! How single settings read: flags, comma-separated lists, country and currency codes, URLs.
//! Each reader checks and normalizes its value, so a bad one fails at load, named by its key.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use ucp_domain::money::CurrencyCode;

/// A boolean: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off` (environment values arrive as text).
pub(super) fn flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    struct Flag;
    impl Visitor<'_> for Flag {
        type Value = bool;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a boolean (true, false, 1, 0, yes, no, on, off)")
        }
        fn visit_bool<E: de::Error>(self, value: bool) -> Result<bool, E> {
            Ok(value)
        }
        fn visit_u64<E: de::Error>(self, value: u64) -> Result<bool, E> {
            match value {
                0 | 1 => Ok(value == 1),
                _ => Err(E::invalid_value(de::Unexpected::Unsigned(value), &self)),
            }
        }
        fn visit_i64<E: de::Error>(self, value: i64) -> Result<bool, E> {
            match value {
                0 | 1 => Ok(value == 1),
                _ => Err(E::invalid_value(de::Unexpected::Signed(value), &self)),
            }
        }
        fn visit_str<E: de::Error>(self, value: &str) -> Result<bool, E> {
            match value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" | "" => Ok(false),
                _ => Err(E::invalid_value(de::Unexpected::Str(value), &self)),
            }
        }
    }
    deserializer.deserialize_any(Flag)
}

/// An optional [`flag`].
pub(super) fn optional_flag<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
    #[derive(Deserialize)]
    struct Wrapped(#[serde(deserialize_with = "flag")] bool);
    Ok(Option::<Wrapped>::deserialize(deserializer)?.map(|Wrapped(value)| value))
}

/// Text, also when the environment's value reads as a number or a boolean
/// (`UCPD_BUSINESS_NAME=1999` is the name "1999").
pub(super) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    struct Text;
    impl Visitor<'_> for Text {
        type Value = String;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("text")
        }
        fn visit_str<E: de::Error>(self, value: &str) -> Result<String, E> {
            Ok(value.to_owned())
        }
        fn visit_bool<E: de::Error>(self, value: bool) -> Result<String, E> {
            Ok(value.to_string())
        }
        fn visit_u64<E: de::Error>(self, value: u64) -> Result<String, E> {
            Ok(value.to_string())
        }
        fn visit_i64<E: de::Error>(self, value: i64) -> Result<String, E> {
            Ok(value.to_string())
        }
        fn visit_f64<E: de::Error>(self, value: f64) -> Result<String, E> {
            Ok(value.to_string())
        }
    }
    deserializer.deserialize_any(Text)
}

/// A path, read as [`text`].
pub(super) fn path<'de, D: Deserializer<'de>>(deserializer: D) -> Result<std::path::PathBuf, D::Error> {
    text(deserializer).map(std::path::PathBuf::from)
}

/// A list of strings: a TOML array, or one string of comma-separated items (the environment).
pub(super) fn list<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct Items;
    impl<'de> Visitor<'de> for Items {
        type Value = Vec<String>;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a list of strings, or one string of comma-separated items")
        }
        fn visit_str<E: de::Error>(self, text: &str) -> Result<Vec<String>, E> {
            Ok(text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect())
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut items: A) -> Result<Vec<String>, A::Error> {
            let mut list = Vec::new();
            while let Some(item) = items.next_element::<String>()? {
                list.push(item);
            }
            Ok(list)
        }
    }
    deserializer.deserialize_any(Items)
}

fn check_each<E: de::Error>(
    items: Vec<String>,
    check: impl Fn(&str) -> Result<String, String>,
) -> Result<Vec<String>, E> {
    items.iter().map(|item| check(item).map_err(E::custom)).collect()
}

fn country(code: &str) -> Result<String, String> {
    let upper = code.trim().to_ascii_uppercase();
    if upper.len() == 2 && upper.bytes().all(|byte| byte.is_ascii_uppercase()) {
        Ok(upper)
    } else {
        Err(format!("{code:?} is not an ISO 3166-1 alpha-2 country code"))
    }
}

fn region(code: &str) -> Result<String, String> {
    let upper = code.trim().to_ascii_uppercase();
    if !upper.is_empty() && upper.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-') {
        Ok(upper)
    } else {
        Err(format!("{code:?} is not a region code"))
    }
}

fn currency(code: &str) -> Result<String, String> {
    CurrencyCode::from_str(code).map(String::from)
}

/// An ISO 3166-1 alpha-2 country code, upper-cased.
pub(super) fn country_code<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    country(&String::deserialize(deserializer)?).map_err(de::Error::custom)
}

/// A [`list`] of country codes, upper-cased.
pub(super) fn country_codes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    check_each(list(deserializer)?, country)
}

/// A [`list`] of region codes (`CA`, `NY`), upper-cased.
pub(super) fn region_codes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    check_each(list(deserializer)?, region)
}

/// An optional region code, upper-cased.
pub(super) fn optional_region<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(deserializer)?.map(|code| region(&code).map_err(de::Error::custom)).transpose()
}

/// An ISO 4217 code, upper-cased.
pub(super) fn currency_code<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    currency(&String::deserialize(deserializer)?).map_err(de::Error::custom)
}

/// A [`list`] of ISO 4217 codes, upper-cased.
pub(super) fn currency_codes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    check_each(list(deserializer)?, currency)
}

/// An absolute `http` or `https` URL.
pub fn web_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text.trim()).map_err(|error| format!("{text:?} is not an absolute URL: {error}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{text:?} is not an http(s) URL"));
    }
    Ok(url)
}

/// A string that must be an absolute http(s) URL; kept as written.
pub(super) fn url_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    web_url(&text).map_err(de::Error::custom)?;
    Ok(text)
}

/// A map whose values are absolute http(s) URLs (`links`); with `keys_too`, its keys as well.
fn url_map<'de, D: Deserializer<'de>>(deserializer: D, keys_too: bool) -> Result<BTreeMap<String, String>, D::Error> {
    let map = BTreeMap::<String, String>::deserialize(deserializer)?;
    for (key, value) in &map {
        if keys_too {
            web_url(key).map_err(de::Error::custom)?;
        }
        web_url(value).map_err(|error| de::Error::custom(format!("{key}: {error}")))?;
    }
    Ok(map)
}

/// Link type → absolute URL.
pub(super) fn urls_by_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    url_map(deserializer, false)
}

/// Absolute URL → absolute URL.
pub(super) fn urls_by_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error> {
    url_map(deserializer, true)
}

/// An http(s) URL as a `url::Url`, serialized as its text.
pub(super) mod http_url {
    use super::*;

    pub(in crate::config) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<url::Url, D::Error> {
        web_url(&String::deserialize(deserializer)?).map_err(de::Error::custom)
    }

    pub(in crate::config) fn serialize<S: Serializer>(url: &url::Url, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(url.as_str())
    }
}

/// The base URL the business is reached at: `https`, or `http` on loopback; no user info,
/// query or fragment. Held without a trailing slash (`https://shop.example`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(String);

impl PublicUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for PublicUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<PublicUrl, String> {
        let url = url::Url::parse(text).map_err(|error| format!("public_url {text:?}: {error}"))?;
        let host = url.host_str().unwrap_or_default();
        let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            _ => return Err(format!("public_url {text:?} must be https (http only on localhost or 127.0.0.1)")),
        }
        if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
            return Err(format!("public_url {text:?} must not carry user info, a query or a fragment"));
        }
        Ok(PublicUrl(url.as_str().trim_end_matches('/').to_owned()))
    }
}

impl fmt::Display for PublicUrl {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for PublicUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PublicUrl, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(de::Error::custom)
    }
}

impl Serialize for PublicUrl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}
