//! A platform profile's size in JSON values, counted before it is parsed into a tree.
//!
//! A profile is a stranger's document, fetched before any credential is checked. Parsed into
//! `serde_json::Value`, 256 KB of `{"":0},` is 37,000 one-member maps, about 24 MB on the heap
//! (a map's node is 660 bytes), for each of the fetches running at once. The count walks the
//! body with serde_json's own parser, allocating nothing, and refuses a document of more than
//! [`MAX_VALUES`] values or [`MAX_OBJECTS`] objects, so the tree built afterwards is at most
//! about a megabyte beyond the body (0.8 MB of VmHWM measured for the largest; about 1.1 MB of
//! allocations counting their headers). Real profiles hold a few hundred values.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The most JSON values (objects, arrays and scalars alike) a platform profile may hold.
pub const MAX_VALUES: usize = 8_192;
/// The most JSON objects a platform profile may hold.
pub const MAX_OBJECTS: usize = 1_024;

/// Why a body did not pass the count.
#[derive(Debug)]
pub(super) enum Refused {
    /// Not JSON at all (serde_json's own message).
    Syntax(serde_json::Error),
    /// JSON, but over a bound (which one, in words).
    Over(String),
}

/// Counts `body`'s values and objects, without building them.
pub(super) fn check(body: &[u8]) -> Result<(), Refused> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let mut budget = Budget::default();
    let counted = (&mut budget).deserialize(&mut deserializer).and_then(|()| deserializer.end());
    match (counted, budget.over) {
        (_, Some(reason)) => Err(Refused::Over(reason)),
        (Ok(()), None) => Ok(()),
        (Err(error), None) => Err(Refused::Syntax(error)),
    }
}

#[derive(Default)]
struct Budget {
    values: usize,
    objects: usize,
    /// Set when a bound is passed (the walk then stops with an error of no meaning).
    over: Option<String>,
}

impl Budget {
    fn value<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(self.refuse(format!("the profile holds more than {MAX_VALUES} JSON values")));
        }
        Ok(())
    }

    fn object<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.objects += 1;
        if self.objects > MAX_OBJECTS {
            return Err(self.refuse(format!("the profile holds more than {MAX_OBJECTS} JSON objects")));
        }
        Ok(())
    }

    fn refuse<E: serde::de::Error>(&mut self, reason: String) -> E {
        self.over = Some(reason);
        E::custom("over budget")
    }
}

impl<'de> DeserializeSeed<'de> for &mut Budget {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for &mut Budget {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.value()
    }

    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.value()
    }

    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.value()
    }

    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.value()
    }

    fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<(), E> {
        self.value()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.value()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        self.value()?;
        while items.next_element_seed(&mut *self)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        self.value()?;
        self.object()?;
        while members.next_key::<IgnoredAny>()?.is_some() {
            members.next_value_seed(&mut *self)?;
        }
        Ok(())
    }
}
