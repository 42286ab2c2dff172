//! RFC 9421 §2: the `Signature-Input` and `Signature` dictionaries, parsed with `sfv` (labels,
//! covered components and parameters as sent, never a fixed list), and the signature base.

use std::convert::Infallible;

use axum::http::HeaderMap;
use sfv::visitor::{DictionaryVisitor, EntryVisitor, Ignored};

use crate::error::{ApiError, ErrorKind};

fn invalid(reason: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::SignatureInvalid, reason)
}

/// What is signed: a request or a response, seen through its derived components and headers.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Request {
        method: &'a str,
        /// Host[:port] as received (lowercased in the base).
        authority: &'a str,
        /// The absolute path as received, percent-encoding kept.
        path: &'a str,
        /// The raw query without `?`, if the target has one.
        query: Option<&'a str>,
    },
    Response {
        status: u16,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    pub target: Target<'a>,
    pub headers: &'a HeaderMap,
}

/// One member of `Signature-Input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureInput {
    pub label: String,
    /// Covered component identifiers in order (`@method`, `content-digest`, …).
    pub components: Vec<String>,
    pub created: Option<i64>,
    pub expires: Option<i64>,
    pub keyid: Option<String>,
    pub alg: Option<String>,
    pub tag: Option<String>,
    /// The `@signature-params` value: the inner list and its parameters, serialized (RFC 8941
    /// canonical form).
    pub params_line: String,
}

/// A header value that is not visible ASCII (it cannot appear in a signature base).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotAscii;

/// The values of header `name` (lowercase), trimmed and joined with `, ` (RFC 9421 §2.1);
/// `Ok(None)` when absent; an error when a value is not visible ASCII.
pub fn joined_field(headers: &HeaderMap, name: &str) -> Result<Option<String>, NotAscii> {
    let mut joined: Option<String> = None;
    for value in headers.get_all(name) {
        let text = value.to_str().map_err(|_| NotAscii)?.trim();
        match &mut joined {
            Some(joined) => {
                joined.push_str(", ");
                joined.push_str(text);
            }
            None => joined = Some(text.to_owned()),
        }
    }
    Ok(joined)
}

/// Counts dictionary member names, to find a label sent twice (which `sfv` would silently
/// reduce to its last occurrence).
struct Names(Vec<String>);

impl<'de> DictionaryVisitor<'de> for Names {
    type Out = Vec<String>;
    type Error = Infallible;

    fn entry(&mut self, key: &'de sfv::KeyRef) -> Result<impl EntryVisitor<'de>, Self::Error> {
        self.0.push(key.as_str().to_owned());
        Ok(Ignored)
    }

    fn finish(self) -> Result<Self::Out, Self::Error> {
        Ok(self.0)
    }
}

/// The most bytes of `Signature-Input` or `Signature` (all field lines together) read. A
/// signature with a dozen components is about 200 bytes of `Signature-Input`, and an RSA-4096
/// signature 700 of `Signature`; without a cap, a 400 KB header was parsed, then checked for
/// duplicate components, before anything else.
pub const MAX_DICTIONARY_BYTES: usize = 8 * 1024;

/// The most signatures (members of `Signature-Input`) one message may carry: each is tried,
/// at the price of a signature base and a verification.
pub const MAX_SIGNATURES: usize = 8;

/// The most components one signature may cover (the spec's full set is about ten).
pub const MAX_COMPONENTS: usize = 32;

/// Parses a dictionary header (`Signature-Input`, `Signature`) of at most
/// [`MAX_DICTIONARY_BYTES`] and [`MAX_SIGNATURES`] members, refusing a label that appears
/// twice (on one field line or across lines).
fn dictionary(headers: &HeaderMap, name: &str) -> Result<Option<sfv::Dictionary>, ApiError> {
    let bytes = headers.get_all(name).iter().fold(0usize, |total, value| total.saturating_add(value.len() + 2));
    if bytes > MAX_DICTIONARY_BYTES {
        return Err(invalid(format!("{name} is longer than {MAX_DICTIONARY_BYTES} bytes")));
    }
    let Some(text) = joined_field(headers, name).map_err(|_| invalid(format!("{name} is not visible ASCII")))? else {
        return Ok(None);
    };
    let garbled = || invalid(format!("{name} is not an RFC 8941 dictionary"));
    let names = sfv::Parser::new(&text).parse_dictionary_with_visitor(Names(Vec::new())).map_err(|_| garbled())?;
    if names.len() > MAX_SIGNATURES {
        return Err(invalid(format!("{name} has more than {MAX_SIGNATURES} members")));
    }
    let mut sorted = names.clone();
    sorted.sort();
    if let Some(pair) = sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(invalid(format!("{name} carries the label {} more than once", pair[0])));
    }
    sfv::Parser::new(&text).parse_dictionary().map(Some).map_err(|_| garbled())
}

/// The members of `Signature-Input`; `Ok(None)` when the header is absent.
pub fn parse_inputs(headers: &HeaderMap) -> Result<Option<Vec<SignatureInput>>, ApiError> {
    let Some(dictionary) = dictionary(headers, "signature-input")? else { return Ok(None) };
    if dictionary.is_empty() {
        return Err(invalid("Signature-Input has no member"));
    }
    let mut inputs = Vec::with_capacity(dictionary.len());
    for (label, entry) in &dictionary {
        let sfv::ListEntry::InnerList(list) = entry else {
            return Err(invalid(format!("Signature-Input {label} is not an inner list of components")));
        };
        if list.items.len() > MAX_COMPONENTS {
            return Err(invalid(format!("Signature-Input {label} covers more than {MAX_COMPONENTS} components")));
        }
        let mut components = Vec::with_capacity(list.items.len());
        for item in &list.items {
            let Some(name) = item.bare_item.as_string() else {
                return Err(invalid(format!("Signature-Input {label}: components are quoted strings")));
            };
            if !item.params.is_empty() {
                return Err(invalid(format!(
                    "Signature-Input {label}: component parameters (;sf, ;key, ;req, ;bs, ;tr) are not supported"
                )));
            }
            let name = name.as_str();
            if components.iter().any(|known: &String| known == name) {
                return Err(invalid(format!("Signature-Input {label} covers {name} twice")));
            }
            components.push(name.to_owned());
        }
        let integer = |key: &str| -> Result<Option<i64>, ApiError> {
            match list.params.get(key) {
                None => Ok(None),
                Some(value) => value
                    .as_integer()
                    .map(|value| Some(i64::from(value)))
                    .ok_or_else(|| invalid(format!("Signature-Input {label}: {key} is not an integer"))),
            }
        };
        let string = |key: &str| -> Result<Option<String>, ApiError> {
            match list.params.get(key) {
                None => Ok(None),
                Some(value) => value
                    .as_string()
                    .map(|value| Some(value.as_str().to_owned()))
                    .ok_or_else(|| invalid(format!("Signature-Input {label}: {key} is not a quoted string"))),
            }
        };
        let mut serializer = sfv::ListSerializer::new();
        serializer.members([entry]);
        let params_line =
            serializer.finish().ok_or_else(|| invalid(format!("Signature-Input {label} cannot be serialized")))?;
        inputs.push(SignatureInput {
            label: label.as_str().to_owned(),
            components,
            created: integer("created")?,
            expires: integer("expires")?,
            keyid: string("keyid")?,
            alg: string("alg")?,
            tag: string("tag")?,
            params_line,
        });
    }
    Ok(Some(inputs))
}

/// The members of `Signature`: label → signature bytes.
pub fn parse_signatures(headers: &HeaderMap) -> Result<Vec<(String, Vec<u8>)>, ApiError> {
    let Some(dictionary) = dictionary(headers, "signature")? else {
        return Err(invalid("Signature-Input is sent without a Signature header"));
    };
    let mut signatures = Vec::with_capacity(dictionary.len());
    for (label, entry) in &dictionary {
        let bytes = match entry {
            sfv::ListEntry::Item(item) => item.bare_item.as_byte_sequence(),
            sfv::ListEntry::InnerList(_) => None,
        }
        .ok_or_else(|| invalid(format!("Signature {label} is not a byte sequence (:base64:)")))?;
        signatures.push((label.as_str().to_owned(), bytes.to_vec()));
    }
    Ok(signatures)
}

/// The signature base of `input` over `message` (RFC 9421 §2.5): one line per covered
/// component, then `@signature-params`, joined by `\n` with no trailing newline. Each value is
/// written straight into the one buffer (no string per component).
pub fn signature_base(message: &Message<'_>, input: &SignatureInput) -> Result<String, ApiError> {
    let mut base = String::with_capacity(64 * (input.components.len() + 1) + input.params_line.len());
    for name in &input.components {
        base.push('"');
        base.push_str(name);
        base.push_str("\": ");
        let start = base.len();
        component(message, name, &mut base)?;
        if base[start..].contains(['\n', '\r']) {
            return Err(invalid(format!("the value of {name} contains a line break")));
        }
        base.push('\n');
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(&input.params_line);
    Ok(base)
}

/// Appends the value of component `name` to `base`.
fn component(message: &Message<'_>, name: &str, base: &mut String) -> Result<(), ApiError> {
    match (name, message.target) {
        ("@method", Target::Request { method, .. }) => push_mapped(base, method, str::make_ascii_uppercase),
        ("@authority", Target::Request { authority, .. }) => push_mapped(base, authority, str::make_ascii_lowercase),
        ("@path", Target::Request { path, .. }) => base.push_str(if path.is_empty() { "/" } else { path }),
        ("@query", Target::Request { query, .. }) => {
            base.push('?');
            base.push_str(query.unwrap_or_default());
        }
        ("@status", Target::Response { status }) => {
            use std::fmt::Write;
            let _ = write!(base, "{status}");
        }
        (derived, _) if derived.starts_with('@') => {
            return Err(invalid(format!(
                "the derived component {derived} is not supported here (@method, @authority, @path, @query on requests; @status on responses)"
            )));
        }
        (field, _) => {
            if field.bytes().any(|byte| byte.is_ascii_uppercase()) {
                return Err(invalid(format!("component {field} must be lowercase")));
            }
            let mut values = message.headers.get_all(field).iter().peekable();
            if values.peek().is_none() {
                return Err(invalid(format!("the signature covers {name}, which this message does not have")));
            }
            // RFC 9421 §2.1: each value trimmed, joined with `, ` (as `joined_field`).
            for (index, value) in values.enumerate() {
                let text = value.to_str().map_err(|_| invalid(format!("header {field} is not visible ASCII")))?;
                if index > 0 {
                    base.push_str(", ");
                }
                base.push_str(text.trim());
            }
        }
    }
    Ok(())
}

/// Appends `text` with its ASCII letters folded by `fold` in place.
fn push_mapped(base: &mut String, text: &str, fold: fn(&mut str)) {
    let start = base.len();
    base.push_str(text);
    fold(&mut base[start..]);
}
