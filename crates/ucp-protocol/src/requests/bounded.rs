//! Deserializers for bounded lists.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, SeqAccess, Visitor};

/// A list of at most `N` items; item `N + 1` is an error naming the limit.
pub fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    deserializer.deserialize_seq(Bounded::<T, N> { truncate: false, item: PhantomData })
}

/// `null`, absent or a list of at most `N` items.
pub fn optional_list<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    struct Optional<T, const N: usize>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Optional<T, N> {
        type Value = Option<Vec<T>>;
        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(formatter, "null or a list of at most {N} items")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            list::<D, T, N>(deserializer).map(Some)
        }
    }
    deserializer.deserialize_option(Optional::<T, N>(PhantomData))
}

/// The first `N` items of a list; the rest are skipped without being converted.
pub(super) fn truncated<'de, D: Deserializer<'de>, T: Deserialize<'de>, const N: usize>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    deserializer.deserialize_seq(Bounded::<T, N> { truncate: true, item: PhantomData })
}

struct Bounded<T, const N: usize> {
    truncate: bool,
    item: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Bounded<T, N> {
    type Value = Vec<T>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A truncating bound is only how much is read; the limit the caller enforces is its own.
        if self.truncate { write!(formatter, "a list") } else { write!(formatter, "a list of at most {N} items") }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut sequence: A) -> Result<Vec<T>, A::Error> {
        let mut items = Vec::with_capacity(sequence.size_hint().unwrap_or(0).min(N));
        while items.len() < N {
            match sequence.next_element()? {
                Some(item) => items.push(item),
                None => return Ok(items),
            }
        }
        if self.truncate {
            while sequence.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(items);
        }
        match sequence.next_element::<IgnoredAny>()? {
            Some(_) => Err(de::Error::custom(format_args!("holds more than {N} items; at most {N} are allowed"))),
            None => Ok(items),
        }
    }
}
