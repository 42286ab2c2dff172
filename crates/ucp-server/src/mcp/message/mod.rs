//! A JSON-RPC message as the MCP endpoint reads it: the four members it acts on, parsed in one
//! pass over the body, every other member skipped without being built (a `serde_json::Value`
//! of the whole message was 7 % of a `ping`: a map, a `String` per key, then lookups in it).
//! `params` is read the same way, in the same pass: the members a method reads (a `tools/call`'s
//! `name`, and of its `arguments` the `meta`, the `id` and the payload members; `initialize`'s
//! `protocolVersion`), each other member skipped (a `Value` of a tool call's whole `params`,
//! built, looked up and dropped, was a tenth of a cached `get_product`). A payload member is
//! kept as its text, validated but not built: the operation parses it into its own request
//! (a `Value` of it, built then converted, was most of what remained of that tenth).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The body's top-level value, as far as the endpoint cares.
#[derive(Debug, PartialEq)]
#[expect(clippy::large_enum_variant, reason = "one per request, on the stack: boxing would allocate per request")]
pub(super) enum Message<'a> {
    /// An object: its `jsonrpc`, `id`, `method` and `params` members when it has them (of a
    /// member named twice, the last, as a parsed object would keep). `id` as a JSON value;
    /// `jsonrpc` and `method` as text, borrowed from the body unless escaped; `params` as
    /// [`Params`].
    Object { jsonrpc: Option<Text<'a>>, id: Option<Value>, method: Option<Text<'a>>, params: Option<Params<'a>> },
    /// An object with a `result` or an `error` and no `method`: a JSON-RPC response, which a
    /// client sends only to answer a server's request (we send none).
    Response,
    /// An array (a batch, which we do not take).
    Array,
    /// Any other JSON value.
    Other,
}

/// `params`: `null`, an object's members that a method reads, or some other JSON value. Of a
/// member named twice, the last, as a parsed object would keep.
#[derive(Debug, PartialEq)]
pub(super) enum Params<'a> {
    Null,
    Object {
        /// A `tools/call`'s tool.
        name: Option<Text<'a>>,
        /// What `initialize` asks for.
        protocol_version: Option<Text<'a>>,
        /// A `tools/call`'s arguments.
        arguments: Option<Arguments<'a>>,
    },
    Other,
}

/// The payload members an operation may take (`ucp_protocol::Payload::member`), in
/// [`Arguments::Object`]'s `payloads`.
pub(super) const PAYLOAD_MEMBERS: [&str; 3] = ["catalog", "cart", "checkout"];

/// A tool call's `arguments`: an object's `meta` as [`Meta`], its `id` as a JSON value and its
/// payload members as their text in the body (parsed once, into the operation's request, by
/// `dispatch`), or that they were some other JSON value (`null` too).
#[derive(Debug, PartialEq)]
pub(super) enum Arguments<'a> {
    Object { meta: Option<Meta<'a>>, id: Option<Value>, payloads: [Option<Json<'a>>; PAYLOAD_MEMBERS.len()] },
    Other,
}

/// `arguments.meta`: of an object, the members a tool call reads (`ucp-agent` and
/// `idempotency-key`, the last of a member named twice), or that it was some other JSON value
/// (`null` too). A `Value` of it (two maps and their strings, looked up and dropped) was 3 %
/// of a cached `get_product`.
#[derive(Debug, PartialEq)]
pub(super) enum Meta<'a> {
    Object { agent: Option<Agent<'a>>, idempotency_key: Option<Text<'a>> },
    Other,
}

/// `meta["ucp-agent"]`: an object's `profile`, or that it was some other JSON value.
#[derive(Debug, PartialEq)]
pub(super) enum Agent<'a> {
    Object { profile: Option<Text<'a>> },
    Other,
}

/// A JSON value as its text in the body, validated. Two are equal when they hold the same
/// value, however written.
#[derive(Debug, Clone, Copy)]
pub(super) struct Json<'a>(pub(super) &'a RawValue);

impl PartialEq for Json<'_> {
    fn eq(&self, other: &Json<'_>) -> bool {
        let value = |json: &Json<'_>| serde_json::from_str::<Value>(json.0.get()).ok();
        value(self) == value(other)
    }
}

/// A member that should be a string: the string, or that it was some other JSON value.
#[derive(Debug, PartialEq)]
pub(super) enum Text<'a> {
    Str(Cow<'a, str>),
    NotAString,
}

impl Text<'_> {
    /// The string, when `text` is one.
    pub(super) fn as_str<'t>(text: &'t Option<Text<'_>>) -> Option<&'t str> {
        match text {
            Some(Text::Str(text)) => Some(text),
            _ => None,
        }
    }
}

impl<'a> Message<'a> {
    /// The message in `bytes`, or serde_json's error when they are not one JSON value.
    ///
    /// The body is checked for UTF-8 once, a word at a time, and parsed as text: from bytes,
    /// serde_json checks each string it reads on its own, every member name included (about
    /// 1,300 instructions of a tool call). Bytes that are not UTF-8 are parsed as bytes, for
    /// serde_json's own answer to them.
    pub(super) fn parse(bytes: &'a [u8]) -> serde_json::Result<Message<'a>> {
        match std::str::from_utf8(bytes) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(bytes),
        }
    }
}

/// A visitor's answers to what it does not look into: an array, skipped element by element
/// (so a malformed one is still an error), and a boolean or a number.
macro_rules! skipped {
    ($de:lifetime, array: $array:expr, scalars: $scalar:expr) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($array)
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($scalar)
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($scalar)
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($scalar)
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($scalar)
        }
    };
}

/// The `Deserialize` of a value the reader takes an object's members from, with anything else
/// skipped without a look: an array as `array`, `null` as `unit` (both `Other` unless given), a
/// string or a scalar as `Other`. The visitor around the `visit_map` given.
macro_rules! object_or_other {
    ($de:lifetime, $ty:ident, $visitor:ident, |$map:ident| $body:block) => {
        object_or_other!($de, $ty, $visitor, array: $ty::Other, unit: $ty::Other, |$map| $body);
    };
    ($de:lifetime, $ty:ident, $visitor:ident, array: $array:expr, unit: $unit:expr, |$map:ident| $body:block) => {
        impl<$de> Deserialize<$de> for $ty<$de> {
            fn deserialize<D: Deserializer<$de>>(deserializer: D) -> Result<$ty<$de>, D::Error> {
                deserializer.deserialize_any($visitor)
            }
        }

        struct $visitor;

        impl<$de> Visitor<$de> for $visitor {
            type Value = $ty<$de>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a JSON value")
            }

            fn visit_map<A: MapAccess<$de>>(self, mut $map: A) -> Result<$ty<$de>, A::Error> $body

            skipped!($de, array: $array, scalars: $ty::Other);

            fn visit_str<E: de::Error>(self, _: &str) -> Result<$ty<$de>, E> {
                Ok($ty::Other)
            }

            fn visit_unit<E: de::Error>(self) -> Result<$ty<$de>, E> {
                Ok($unit)
            }
        }
    };
}

object_or_other!('de, Message, MessageVisitor, array: Message::Array, unit: Message::Other, |map| {
    let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
    let mut answers = false;
    while let Some(key) = map.next_key::<Key>()? {
        match key {
            Key::Answer => {
                answers = true;
                map.next_value::<IgnoredAny>()?;
            }
            Key::Jsonrpc => jsonrpc = Some(map.next_value::<Text<'de>>()?),
            Key::Id => id = Some(map.next_value::<Value>()?),
            Key::Method => method = Some(map.next_value::<Text<'de>>()?),
            Key::Params => params = Some(map.next_value::<Params<'de>>()?),
            Key::Other => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    if answers && method.is_none() {
        return Ok(Message::Response);
    }
    Ok(Message::Object { jsonrpc, id, method, params })
});

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text<'de>, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'de>, E> {
        Ok(Text::Str(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'de>, E> {
        Ok(Text::Str(Cow::Owned(text.to_owned())))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Text::NotAString)
    }

    skipped!('de, array: Text::NotAString, scalars: Text::NotAString);

    fn visit_unit<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(Text::NotAString)
    }
}

// `null` is a `Params` of its own: a method without parameters.
object_or_other!('de, Params, ParamsVisitor, array: Params::Other, unit: Params::Null, |map| {
    let (mut name, mut protocol_version, mut arguments) = (None, None, None);
    while let Some(key) = map.next_key::<Text<'de>>()? {
        match &key {
            Text::Str(key) if key == "name" => name = Some(map.next_value::<Text<'de>>()?),
            Text::Str(key) if key == "protocolVersion" => protocol_version = Some(map.next_value::<Text<'de>>()?),
            Text::Str(key) if key == "arguments" => arguments = Some(map.next_value::<Arguments<'de>>()?),
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(Params::Object { name, protocol_version, arguments })
});

object_or_other!('de, Arguments, ArgumentsVisitor, |map| {
    let (mut meta, mut id, mut payloads) = (None, None, [None, None, None]);
    while let Some(key) = map.next_key::<Text<'de>>()? {
        let Text::Str(key) = key else {
            map.next_value::<IgnoredAny>()?;
            continue;
        };
        if key == "meta" {
            meta = Some(map.next_value::<Meta<'de>>()?);
        } else if key == "id" {
            id = Some(map.next_value::<Value>()?);
        } else if let Some(index) = PAYLOAD_MEMBERS.iter().position(|member| *member == key) {
            payloads[index] = Some(Json(map.next_value::<&'de RawValue>()?));
        } else {
            map.next_value::<IgnoredAny>()?;
        }
    }
    Ok(Arguments::Object { meta, id, payloads })
});

object_or_other!('de, Meta, MetaVisitor, |map| {
    let (mut agent, mut idempotency_key) = (None, None);
    while let Some(key) = map.next_key::<Text<'de>>()? {
        match &key {
            Text::Str(key) if key == "ucp-agent" => agent = Some(map.next_value::<Agent<'de>>()?),
            Text::Str(key) if key == "idempotency-key" => idempotency_key = Some(map.next_value::<Text<'de>>()?),
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(Meta::Object { agent, idempotency_key })
});

object_or_other!('de, Agent, AgentVisitor, |map| {
    let mut profile = None;
    while let Some(key) = map.next_key::<Text<'de>>()? {
        match &key {
            Text::Str(key) if key == "profile" => profile = Some(map.next_value::<Text<'de>>()?),
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
    }
    Ok(Agent::Object { profile })
});

/// A member's name, matched where it lies in the body (no `String` made for it).
enum Key {
    Jsonrpc,
    Id,
    Method,
    Params,
    /// `result` or `error`: the message is a response.
    Answer,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
        Ok(match name {
            "jsonrpc" => Key::Jsonrpc,
            "id" => Key::Id,
            "method" => Key::Method,
            "params" => Key::Params,
            "result" | "error" => Key::Answer,
            _ => Key::Other,
        })
    }
}

#[cfg(test)]
mod tests;
