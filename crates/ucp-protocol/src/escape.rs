//! The JSON string escape of a serialized UCP body, for the `content[0].text` mirror of every
//! MCP tool result (and of the rendered catalog pieces kept for it): byte for byte what `serde_json` writes, eight bytes at a time where nothing
//! needs escaping (most of a JSON document), which is several times faster than the
//! byte-at-a-time escaper on the 50 KB answers of a search or a lookup.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is below 0x20, a `"` or a `\`, possibly with
/// false positives above the lowest one (borrows), never below it: only the lowest set bit is
/// used. (Bytes of 0x80 and above never match.)
fn escape_mask(word: u64) -> u64 {
    let has_zero = |value: u64| value.wrapping_sub(ONES) & !value & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    below_space | has_zero(word ^ (ONES * u64::from(b'"'))) | has_zero(word ^ (ONES * u64::from(b'\\')))
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
    // Runs without escapes are copied whole; the lowest flagged byte of each 8-byte window is
    // where the next escape is, and scanning resumes right after it.
    let (mut at, mut copied) = (0, 0);
    while let Some(window) = input.get(at..at + 8) {
        let word = u64::from_le_bytes(window.try_into().unwrap_or([0; 8]));
        let mask = escape_mask(word);
        if mask == 0 {
            at += 8;
            continue;
        }
        let found = at + (mask.trailing_zeros() / 8) as usize;
        out.extend_from_slice(&input[copied..found]);
        push_escaped(out, input[found]);
        at = found + 1;
        copied = at;
    }
    out.extend_from_slice(&input[copied..at]);
    for byte in &input[at..] {
        push_escaped(out, *byte);
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
