//! The deserializer of [`Filters`], by hand: a derive drops the members it does not know (and
//! search_filters.json is open to merchant filters), and `#[serde(flatten)]` would buffer each
//! of them as a `Value`. An unknown member's name is copied only while the list has room
//! ([`MAX_UNSUPPORTED_FILTERS`]), and its value is skipped unread. A request without unknown
//! filters allocates nothing more than the derive did, and runs the same steps: the known names
//! are matched inline, the unknown ones handled out of line.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use super::{Filters, MAX_FILTER_NAME_CHARS, MAX_OPTIONS, MAX_UNSUPPORTED_FILTERS, bounded};

impl<'de> Deserialize<'de> for Filters {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Filters, D::Error> {
        deserializer.deserialize_map(FilterMembers)
    }
}

/// The visitor of a `filters` object.
struct FilterMembers;

/// Reads a member name of `filters`, copying an unknown one into the list ([`keep`]).
struct FilterName<'a>(&'a mut Vec<String>);

/// A member of `filters`, as [`FilterName`] tells it.
enum FilterKey {
    Categories,
    Price,
    Other,
}

/// `categories` under its bound, as the field's `deserialize_with` says.
struct Categories(Option<Vec<String>>);

impl<'de> Deserialize<'de> for Categories {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Categories, D::Error> {
        bounded::optional_list::<_, _, MAX_OPTIONS>(deserializer).map(Categories)
    }
}

impl<'de> Visitor<'de> for FilterMembers {
    type Value = Filters;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("struct Filters")
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Filters, A::Error> {
        let (mut categories, mut price, mut unsupported) = (None, None, Vec::new());
        while let Some(name) = map.next_key_seed(FilterName(&mut unsupported))? {
            match name {
                FilterKey::Other => _ = map.next_value::<IgnoredAny>()?,
                FilterKey::Categories if categories.is_some() => return Err(de::Error::duplicate_field("categories")),
                FilterKey::Categories => categories = Some(map.next_value::<Categories>()?.0),
                FilterKey::Price if price.is_some() => return Err(de::Error::duplicate_field("price")),
                FilterKey::Price => price = Some(map.next_value()?),
            }
        }
        Ok(Filters { categories: categories.flatten(), price: price.flatten(), unsupported })
    }
}

impl<'de> DeserializeSeed<'de> for FilterName<'_> {
    type Value = FilterKey;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<FilterKey, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FilterName<'_> {
    type Value = FilterKey;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a filter name")
    }

    #[inline]
    fn visit_str<E: de::Error>(self, name: &str) -> Result<FilterKey, E> {
        Ok(match name {
            "categories" => FilterKey::Categories,
            "price" => FilterKey::Price,
            _ => {
                keep(self.0, name);
                FilterKey::Other
            }
        })
    }
}

/// Copies an unknown name, cut to [`MAX_FILTER_NAME_CHARS`], into `kept` unless that is full
/// or has it already. Out of line, so the known names' path stays small.
#[cold]
#[inline(never)]
fn keep(kept: &mut Vec<String>, name: &str) {
    if kept.len() == MAX_UNSUPPORTED_FILTERS {
        return;
    }
    let end = name.char_indices().nth(MAX_FILTER_NAME_CHARS).map_or(name.len(), |(at, _)| at);
    let name = &name[..end];
    if !kept.iter().any(|seen| seen == name) {
        kept.push(name.to_owned());
    }
}
