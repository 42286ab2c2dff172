//! The JSON string escape of a serialized UCP body, for the `content[0].text` mirror of every
//! MCP tool result (and of the rendered catalog pieces kept for it): byte for byte what
//! `serde_json` writes.
//!
//! A serialized JSON text has no raw control character, so its escapes are all a backslash
//! before a `"` or a `\`, about one every eight bytes of a product's JSON. The escape goes eight
//! bytes at a time. A window without escapes is copied as a word; in a window with escapes,
//! each run up to an escape is copied as a whole word too (written past the run, and
//! overwritten by what follows), so an escape costs a few instructions rather than a
//! `memcpy` call. Text with a control character (never a serialized body, but
//! [`json_string`] takes any text) goes byte by byte from the window that holds it.

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

/// Appends `text` to `out` as a JSON string literal, quotes included. `out` is bytes: UTF-8
/// as long as what was written before is (only ASCII bytes are replaced, by ASCII), with no
/// check of it over again.
pub fn json_string(out: &mut Vec<u8>, text: &str) {
    out.reserve(text.len() + text.len() / 16 + 2);
    out.push(b'"');
    escape_into(out, text.as_bytes());
    out.push(b'"');
}

/// The length of the escape of `json`, JSON text fixed at compile time ([`escape_const`]): each
/// `"` and `\` gains a backslash. Such text holds no control character (it would not compile).
pub const fn escaped_len(json: &[u8]) -> usize {
    let (mut length, mut at) = (json.len(), 0);
    while at < json.len() {
        assert!(json[at] >= 0x20, "fixed JSON text holds no control character");
        if json[at] == b'"' || json[at] == b'\\' {
            length += 1;
        }
        at += 1;
    }
    length
}

/// The escape of `json`, JSON text fixed at compile time, `N` being [`escaped_len`]`(json)`: what
/// [`escape_into`] writes for it, made by the compiler (the `literal!` pairs of the catalog
/// bodies' writers).
pub const fn escape_const<const N: usize>(json: &[u8]) -> [u8; N] {
    let mut out = [0; N];
    let (mut from, mut to) = (0, 0);
    while from < json.len() {
        if json[from] == b'"' || json[from] == b'\\' {
            out[to] = b'\\';
            to += 1;
        }
        out[to] = json[from];
        (from, to) = (from + 1, to + 1);
    }
    assert!(to == N, "N is escaped_len(json)");
    out
}

/// The inside of the JSON string literal of `input` (UTF-8 text), without quotes, in a buffer
/// sized for a product's JSON (an escape every eight bytes) with room to spare.
pub fn escaped(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + input.len() / 4);
    escape_into(&mut out, input);
    out
}

/// Appends the inside of the JSON string literal of `input` (UTF-8 text) to `out`, without
/// quotes. Escaping text in parts and joining them gives the escape of the joined text: each
/// byte is escaped alone.
pub fn escape_into(out: &mut Vec<u8>, input: &[u8]) {
    let done = escape_words(out, input);
    escape_bytes(out, &input[done..]);
}

/// How far past where it starts a window's writes may reach: its eight bytes, a backslash
/// for each, and a whole word copied from its last escape.
const WINDOW_REACH: usize = 24;

/// Escapes `input` window by window while a window leaves eight bytes after it (a run's word
/// copy reads up to seven bytes past its window), up to the first window with a control
/// character; answers how many bytes of `input` it escaped.
fn escape_words(out: &mut Vec<u8>, input: &[u8]) -> usize {
    let mut written = out.len();
    let mut at = 0;
    while let Some(src) = input.get(at..).and_then(<[u8]>::first_chunk::<16>) {
        let word = u64::from_le_bytes([src[0], src[1], src[2], src[3], src[4], src[5], src[6], src[7]]);
        let mut mask = escape_mask(word);
        if written + WINDOW_REACH > out.len() {
            // Room for the rest at a quarter more (a product's JSON needs an eighth), and for a
            // window's reach; made again only where the text is denser in escapes.
            let rest = input.len() - at;
            out.resize(written + rest + rest / 4 + WINDOW_REACH, 0);
        }
        let Some(dst) = out.get_mut(written..).and_then(<[u8]>::first_chunk_mut::<WINDOW_REACH>) else { break };
        if mask == 0 {
            dst[..8].copy_from_slice(&src[..8]);
            written += 8;
        } else if zero_bytes(word & (ONES * 0xe0)) != 0 {
            break;
        } else {
            // Each run up to an escaped byte, then its backslash: the byte itself starts the
            // next run. `run` is at most 7 and `put` at most 15 (seven bytes and eight
            // backslashes), which the masks tell the compiler, so no copy is bounds-checked.
            let (mut run, mut put) = (0, 0);
            while mask != 0 {
                let found = (mask.trailing_zeros() / 8) as usize;
                mask &= mask - 1;
                let (from, to) = (run & 7, put & 15);
                dst[to..to + 8].copy_from_slice(&src[from..from + 8]);
                put += found - run;
                dst[put & 15] = b'\\';
                put += 1;
                run = found;
            }
            let (from, to) = (run & 7, put & 15);
            dst[to..to + 8].copy_from_slice(&src[from..from + 8]);
            written += put + 8 - run;
        }
        at += 8;
    }
    out.truncate(written);
    at
}

/// [`escape_into`] byte by byte where a window has escapes, for any bytes.
fn escape_bytes(out: &mut Vec<u8>, input: &[u8]) {
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
        let mut out = b"prefix:".to_vec();
        json_string(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    // What the compiler makes of fixed JSON text is what the escape writes at run time.
    #[test]
    fn a_fixed_texts_escape_is_the_escape() {
        const TEXT: &[u8] = br#",{"a\\b":"c","d":[1,"\u00e9"]}"#;
        const ESCAPED: [u8; escaped_len(TEXT)] = escape_const(TEXT);
        let mut expected = Vec::new();
        escape_into(&mut expected, TEXT);
        assert_eq!(ESCAPED.as_slice(), expected.as_slice());
        assert_eq!(escape_const::<0>(b""), [0u8; 0]);
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

    // Texts of every length up to 100 characters of one to four bytes, drawn from characters
    // that need an escape and characters that do not: escapes fall at every place of a window,
    // up to eight in one, next to each other, at its edges and in the last bytes the word
    // copies must not read past; a control character sends the rest byte by byte wherever it
    // falls. And cut in two at any byte, mid-character too.
    #[test]
    fn escapes_any_text_as_serde_json_does() {
        // The control characters last.
        let alphabet = ["a", "b", "\"", "\\", "é", "🚀", " ", "{", ":", "\n", "\u{1}"];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for length in 0..100 {
            for round in 0..40 {
                // Half the rounds without control characters, so the windows run to the end.
                let letters = if round % 2 == 0 { alphabet.len() - 2 } else { alphabet.len() } as u64;
                let text: String = (0..length).map(|_| alphabet[(next() % letters) as usize]).collect();
                let expected = format!("prefix:{}", serde_json::to_string(&text).unwrap());
                assert_eq!(escaped(&text), expected, "{text:?}");
                // In two parts, at any byte: the escape of the whole.
                let cut = (next() as usize) % (text.len() + 1);
                let mut parts = Vec::from(&b"prefix:\""[..]);
                escape_into(&mut parts, &text.as_bytes()[..cut]);
                escape_into(&mut parts, &text.as_bytes()[cut..]);
                parts.push(b'"');
                assert_eq!(parts, expected.as_bytes(), "{text:?} cut at {cut}");
            }
        }
    }

    // Windows of nothing but escapes: eight backslashes to a window, the most it can hold.
    #[test]
    fn a_window_of_escapes_only() {
        for text in ["\"".repeat(40), "\\".repeat(41), "\"\\".repeat(23), format!("ab{}", "\"".repeat(30))] {
            assert_eq!(escaped(&text), format!("prefix:{}", serde_json::to_string(&text).unwrap()));
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
        // Every byte value below 0x80 at every offset of a window, after none to four clean
        // windows.
        for offset in 0..41 {
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
