//! The JSON string escape of a serialized UCP body, for the `content[0].text` mirror of every
//! MCP tool result (and of the rendered catalog pieces kept for it): byte for byte what `serde_json` writes, eight bytes at a time where nothing
//! needs escaping (most of a JSON document), which is several times faster than the
//! byte-at-a-time escaper on the 50 KB answers of a search or a lookup.

const ONES: u64 = 0x0101_0101_0101_0101;
const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `word` that is zero, exactly (no borrow crosses a byte).
fn zero_bytes(word: u64) -> u64 {
    !((word & LOW_SEVEN).wrapping_add(LOW_SEVEN) | word | LOW_SEVEN)
}

/// The high bit of each byte of `word` that is below 0x20, a `"` or a `\`, and of no other.
fn escape_mask(word: u64) -> u64 {
    zero_bytes(word & (ONES * 0xe0))
        | zero_bytes(word ^ (ONES * u64::from(b'"')))
        | zero_bytes(word ^ (ONES * u64::from(b'\\')))
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

fn push_escaped(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x00..=0x1f => {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]])
        }
        _ => out.push(byte),
    }
}

/// Appends `text` to `out` as a JSON string literal, quotes included.
pub fn json_string(out: &mut String, text: &str) {
    let mut bytes = std::mem::take(out).into_bytes();
    bytes.reserve(text.len() + text.len() / 16 + 2);
    bytes.push(b'"');
    escape_into(&mut bytes, text.as_bytes());
    bytes.push(b'"');
    // Only ASCII bytes were replaced, by ASCII: still the UTF-8 it was.
    *out = String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
}

/// Appends the inside of the JSON string literal of `input` (UTF-8 text) to `out`, without
/// quotes. Escaping text in parts and joining them gives the escape of the joined text: each
/// byte is escaped alone.
pub fn escape_into(out: &mut Vec<u8>, input: &[u8]) {
    out.reserve(input.len() + input.len() / 8);
    // Eight bytes at a time: a window without escapes costs its mask; in one with escapes each
    // flagged byte is handled in turn, the runs between them copied whole.
    let (mut at, mut copied) = (0, 0);
    while let Some(window) = input.get(at..at + 8) {
        let mut mask = escape_mask(u64::from_le_bytes(window.try_into().unwrap_or([0; 8])));
        while mask != 0 {
            let found = at + (mask.trailing_zeros() / 8) as usize;
            mask &= mask - 1;
            copied = escape_at(out, input, copied, found);
        }
        at += 8;
    }
    for found in at..input.len() {
        if needs_escape(input[found]) {
            copied = escape_at(out, input, copied, found);
        }
    }
    out.extend_from_slice(&input[copied..]);
}

/// Appends `input[copied..found]` and the escape of `input[found]`; answers where copying
/// resumes. A `"` or a `\` (most escapes in a JSON text) is escaped by the backslash alone, the
/// byte itself going out with the next run.
fn escape_at(out: &mut Vec<u8>, input: &[u8], copied: usize, found: usize) -> usize {
    out.extend_from_slice(&input[copied..found]);
    match input[found] {
        b'"' | b'\\' => {
            out.push(b'\\');
            found
        }
        byte => {
            push_escaped(out, byte);
            found + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str) -> String {
        let mut out = String::from("prefix:");
        json_string(&mut out, text);
        out
    }

    // The mask flags exactly the bytes that need an escape, whatever their neighbours: no
    // borrow from one byte reaches another.
    #[test]
    fn the_mask_flags_exactly_the_bytes_to_escape() {
        for filler in [0x00u8, 0x1f, 0x20, b'"', b'\\', b'a', 0x7f, 0x80, 0xff] {
            for byte in 0..=255u8 {
                for position in 0..8 {
                    let mut window = [filler; 8];
                    window[position] = byte;
                    let mask = escape_mask(u64::from_le_bytes(window));
                    for (at, value) in window.iter().enumerate() {
                        let flagged = mask & (0x80 << (8 * at)) != 0;
                        assert_eq!(flagged, needs_escape(*value), "{window:?} at {at}");
                    }
                    assert_eq!(mask & !(ONES * 0x80), 0, "only high bits");
                }
            }
        }
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "plain ascii text that is longer than eight bytes".into(),
            r#"{"a":"quote \" and backslash \\ inside","b":[1,2]}"#.into(),
            "tab\tnewline\ncarriage\rbell\u{7}backspace\u{8}formfeed\u{c}nul\u{0}unit\u{1f}del\u{7f}".into(),
            "naïve café — ünïcödé ✓ 日本語 🚀 \"q\"".into(),
            "\"\\\"\\\n\t\u{1}é\"\"".repeat(7),
            r#"{"id":"p1","title":"Mug","variants":[{"id":"v1","price":{"amount":1200}}]}"#.repeat(5),
        ];
        // Every byte value below 0x80 at every offset of a chunk.
        for offset in 0..9 {
            for code in 0u8..0x80 {
                let mut text = "x".repeat(offset);
                text.push(char::from(code));
                text.push_str("tail-of-it");
                samples.push(text);
            }
        }
        for text in samples {
            let expected = format!("prefix:{}", serde_json::to_string(&text).unwrap());
            assert_eq!(escaped(&text), expected, "{text:?}");
        }
    }
}
