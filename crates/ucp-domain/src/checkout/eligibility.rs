//! Eligibility claims (`context.eligibility`, checkout.md "Eligibility claims"; checklist 138):
//! a platform's reverse-domain claims of a buyer's benefits (`com.example.loyalty_gold`). This
//! business recognizes none, so a claim never changes a price or blocks a session: it is kept
//! in the session's context, echoed there, and answered with an `eligibility_not_accepted`
//! warning at its path.
//!
//! What is kept is what the wire schema allows (`types/reverse_domain_name.json`, unique items)
//! of the first [`MAX_CLAIMS`] items: a value that is not a reverse-domain name, or one sent
//! twice, is dropped as it is read, and the items past the limit are skipped unread. Nothing a
//! platform puts there fails a request: the schema asks a business to ignore the values it
//! does not recognize, without error.
//!
//! The context's `currency` is read the same way (a code, or nothing): a session is in the
//! store's currency, and one asked for in another gets a `currency_unavailable` note.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Message;
use super::model::Context;

/// Most eligibility claims a cart or checkout may carry.
const MAX_CLAIMS: usize = 16;
/// Longest claim kept, in bytes (a DNS name's limit).
const MAX_CLAIM_BYTES: usize = 253;

/// Whether `text` is a reverse-domain name: `^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$`.
fn is_claim(text: &str) -> bool {
    if text.len() > MAX_CLAIM_BYTES {
        return false;
    }
    let mut segments = text.split('.');
    let first_ok = segments.next().is_some_and(|first| segment(first, false));
    let mut rest = 0;
    let rest_ok = segments.all(|part| {
        rest += 1;
        segment(part, true)
    });
    first_ok && rest_ok && rest > 0
}

/// A segment: a lowercase letter, then lowercase letters and digits (and `_` after the first).
fn segment(part: &str, underscore: bool) -> bool {
    let mut bytes = part.bytes();
    bytes.next().is_some_and(|byte| byte.is_ascii_lowercase())
        && bytes.all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || (underscore && byte == b'_'))
}

/// A visitor's answer, `$ignored`, to the values it does not look into: scalars, `null`, and
/// maps, read through unbuilt.
macro_rules! ignores_the_rest {
    ($de:lifetime, $ignored:expr) => {
        fn visit_map<A: MapAccess<$de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($ignored)
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($ignored)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($ignored)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($ignored)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($ignored)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($ignored)
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($ignored)
        }
    };
}

/// Deserializes `context.eligibility`: the reverse-domain names of a list, each once, in order,
/// of its first [`MAX_CLAIMS`] items; `None` when that leaves none. Anything else the member
/// holds (another type, an item that is not a string, the items past the limit, skipped
/// unread) is ignored, as the schema asks of values a business does not recognize.
pub(super) fn claims<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Claims;
    impl<'de> Visitor<'de> for Claims {
        type Value = Option<Vec<String>>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a list of eligibility claims")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut kept: Vec<String> = Vec::new();
            let mut read = 0;
            while read < MAX_CLAIMS {
                let Some(item) = seq.next_element::<Item>()? else { break };
                read += 1;
                if let Item(Some(claim)) = item
                    && is_claim(&claim)
                    && !kept.contains(&claim)
                {
                    kept.push(claim);
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok((!kept.is_empty()).then_some(kept))
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(None)
        }

        ignores_the_rest!('de, None);
    }
    deserializer.deserialize_any(Claims)
}

/// Deserializes `context.currency`: an ISO 4217 code (three ASCII letters), upper-cased; `None`
/// for anything else, read through and not kept, as before the member was read at all.
pub(super) fn currency_hint<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    struct Currency;
    impl<'de> Visitor<'de> for Currency {
        type Value = Option<String>;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str("a currency code")
        }

        fn visit_str<E: de::Error>(self, code: &str) -> Result<Self::Value, E> {
            let valid = code.len() == 3 && code.bytes().all(|byte| byte.is_ascii_alphabetic());
            Ok(valid.then(|| code.to_ascii_uppercase()))
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(None)
        }

        ignores_the_rest!('de, None);
    }
    deserializer.deserialize_any(Currency)
}

/// An item of the list: a string, or `None` for any other value (read through, not kept).
struct Item(Option<String>);

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Item, D::Error> {
        struct ItemVisitor;
        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = Item;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an eligibility claim")
            }

            fn visit_str<E: de::Error>(self, claim: &str) -> Result<Item, E> {
                Ok(Item(Some(claim.to_owned())))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Item(None))
            }

            ignores_the_rest!('de, Item(None));
        }
        deserializer.deserialize_any(ItemVisitor)
    }
}

/// A `currency_unavailable` note when the context asks for another currency than the
/// session's (carts and checkouts are in the store's; the catalog says the same of its answers).
pub(super) fn other_currency(context: Option<&Context>, currency: &str, messages: &mut Vec<Message>) {
    if let Some(asked) = context.and_then(|context| context.currency.as_deref()).filter(|asked| *asked != currency) {
        messages.push(Message::info(
            "currency_unavailable",
            format!("Prices are in {currency}; {asked} is not offered for carts and checkouts."),
            Some("$.context.currency".into()),
        ));
    }
}

/// One `eligibility_not_accepted` warning per claim the session's context carries, at the
/// claim's path: none is recognized, and none blocks (a warning changes no status).
pub(super) fn not_accepted(context: Option<&Context>, messages: &mut Vec<Message>) {
    let claims = context.and_then(|context| context.eligibility.as_deref()).unwrap_or_default();
    for (index, claim) in claims.iter().enumerate() {
        messages.push(Message::warning(
            "eligibility_not_accepted",
            // Read by agents and shown on the buyer's pages alike.
            format!("This store does not recognize the eligibility claim {claim}; it does not change the price."),
            Some(format!("$.context.eligibility[{index}]")),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_reverse_domain_names() {
        for good in ["com.example.loyalty_gold", "org.school.student", "a.b", "dev.ucp2.x_1"] {
            assert!(is_claim(good), "{good}");
        }
        let long = format!("com.{}", "a".repeat(MAX_CLAIM_BYTES));
        for bad in [
            "",
            "com",
            "Com.example",
            "com..example",
            "com.example.",
            ".com.example",
            "com._x",
            "1com.x",
            "com.ex-ample",
            "com_x.y",
            "com.exämple",
            long.as_str(),
        ] {
            assert!(!is_claim(bad), "{bad}");
        }
    }

    #[test]
    fn claims_keep_each_well_formed_claim_once_of_the_first_few_and_ignore_the_rest() {
        let read = |json: &str| serde_json::from_str::<Context>(json).map(|context| context.eligibility).unwrap();
        assert_eq!(read("{}"), None);
        assert_eq!(read(r#"{"eligibility":null}"#), None);
        assert_eq!(
            read(r#"{"eligibility":["com.a.b","Not A Claim",1,{"x":[1]},["com.x.y"],null,"com.a.b","org.c.d"]}"#),
            Some(vec!["com.a.b".to_owned(), "org.c.d".to_owned()])
        );
        for other in [r#"5"#, r#""com.a.b""#, r#"{"com.a.b":true}"#, "[]", r#"["Nope"]"#, "true"] {
            assert_eq!(read(&format!(r#"{{"eligibility":{other},"postal_code":"1"}}"#)), None, "{other}");
        }
        let many: Vec<String> = (0..MAX_CLAIMS + 3).map(|index| format!("com.example.c{index}")).collect();
        let json = serde_json::json!({ "eligibility": many, "postal_code": "1" }).to_string();
        let context: Context = serde_json::from_str(&json).unwrap();
        assert_eq!(context.eligibility.as_deref(), Some(&many[..MAX_CLAIMS]), "the first {MAX_CLAIMS}");
        assert_eq!(context.postal_code.as_deref(), Some("1"), "read on past the skipped claims");
    }

    #[test]
    fn a_currency_hint_is_three_letters_or_nothing() {
        let read = |json: &str| serde_json::from_str::<Context>(json).map(|context| context.currency).unwrap();
        assert_eq!(read(r#"{"currency":"eur"}"#), Some("EUR".to_owned()));
        for other in [r#"5"#, r#""EURO""#, r#""€€""#, r#"{"a":[1]}"#, "null", r#"["EUR"]"#, r#""""#] {
            assert_eq!(read(&format!(r#"{{"currency":{other},"postal_code":"1"}}"#)), None, "{other}");
        }
    }

    #[test]
    fn each_claim_is_warned_about_at_its_path() {
        let context = Context { eligibility: Some(vec!["com.a.b".into(), "org.c.d".into()]), ..Context::default() };
        let mut messages = Vec::new();
        not_accepted(Some(&context), &mut messages);
        let paths: Vec<_> = messages.iter().map(|message| (message.code.as_str(), message.path.as_deref())).collect();
        assert_eq!(
            paths,
            [
                ("eligibility_not_accepted", Some("$.context.eligibility[0]")),
                ("eligibility_not_accepted", Some("$.context.eligibility[1]"))
            ]
        );
        not_accepted(None, &mut messages);
        assert_eq!(messages.len(), 2);
    }
}
