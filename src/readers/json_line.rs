//! The common JSONL line read without serde: an object whose members are `id`, `text`, `url`
//! and `title` with string values (`url` and `title` may be `null`). Anything else, and any
//! line that is not valid JSON, is left to serde_json, which reads every line and names what
//! is wrong with it; so this path only has to be right on the lines it takes, and gives up on
//! the others.
//!
//! Why: serde_json looks for a string's end and escapes eight bytes at a time and copies a
//! text with escapes twice (into its scratch buffer, then into the string). A text's line
//! ends in an escape every 75 bytes on the dev corpus, so that was a ninth of the first pass
//! of `collect dedup` (README, "JSONL lines read without serde").

use super::local::{JsonDoc, JsonId};
use std::borrow::Cow;

/// The document of `line` when the line is of the common shape, else None.
pub fn read(line: &str) -> Option<JsonDoc<'_>> {
    let b = line.as_bytes();
    let mut at = skip_space(b, 0);
    if b.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(b, at + 1);
    let (mut id, mut text, mut url, mut title) = (None, None, None, None);
    if b.get(at) != Some(&b'}') {
        loop {
            let (key, after) = string(line, at)?;
            at = skip_space(b, after);
            if b.get(at) != Some(&b':') {
                return None;
            }
            at = skip_space(b, at + 1);
            let slot = match &*key {
                "id" => Slot::Id(&mut id),
                "text" => Slot::Text(&mut text),
                "url" => Slot::Optional(&mut url),
                "title" => Slot::Optional(&mut title),
                // An unknown member's value may be of any kind; serde_json passes over it.
                _ => return None,
            };
            at = slot.fill(line, at)?;
            at = skip_space(b, at);
            match b.get(at) {
                Some(b',') => at = skip_space(b, at + 1),
                Some(b'}') => break,
                _ => return None,
            }
        }
    }
    if skip_space(b, at + 1) != b.len() {
        return None;
    }
    Some(JsonDoc {
        id: JsonId::Str(id?),
        text: text?,
        url: url.flatten(),
        title: title.flatten(),
    })
}

/// Where a member's value goes; a member given twice is left to serde_json, which refuses it.
enum Slot<'s, 'a> {
    Id(&'s mut Option<String>),
    Text(&'s mut Option<Cow<'a, str>>),
    Optional(&'s mut Option<Option<String>>),
}

impl<'a> Slot<'_, 'a> {
    /// Reads the value at `at` into the slot; returns where it ends.
    fn fill(self, line: &'a str, at: usize) -> Option<usize> {
        match self {
            Slot::Id(slot) => {
                let (s, end) = string(line, at)?;
                slot.replace(s.into_owned()).is_none().then_some(end)
            }
            Slot::Text(slot) => {
                let (s, end) = string(line, at)?;
                slot.replace(s).is_none().then_some(end)
            }
            Slot::Optional(slot) => {
                let (value, end) = if line.as_bytes()[at..].starts_with(b"null") {
                    (None, at + 4)
                } else {
                    let (s, end) = string(line, at)?;
                    (Some(s.into_owned()), end)
                };
                slot.replace(value).is_none().then_some(end)
            }
        }
    }
}

/// Past the JSON whitespace at `at`.
fn skip_space(b: &[u8], mut at: usize) -> usize {
    while matches!(b.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The string whose opening quote is at `at`, unescaped (borrowed when it has no escapes),
/// and the place after its closing quote. None for a string serde_json would refuse or read
/// otherwise: a control char in it, an unknown escape, a `\u` escape that is not four hex
/// digits or is half of a surrogate pair alone.
fn string(line: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let b = line.as_bytes();
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut i = start + special_from(&b[start..]);
    if *b.get(i)? == b'"' {
        return Some((Cow::Borrowed(&line[start..i]), i + 1));
    }
    // The quote and backslash are ASCII, so every cut made at one is a char boundary.
    let mut out = String::with_capacity(b.len() - start);
    let mut from = start;
    loop {
        match *b.get(i)? {
            b'"' => {
                out.push_str(&line[from..i]);
                return Some((Cow::Owned(out), i + 1));
            }
            b'\\' => {
                out.push_str(&line[from..i]);
                i = escape(b, i + 1, &mut out)?;
                from = i;
            }
            _ => return None,
        }
        i += special_from(&b[i..]);
    }
}

/// Pushes the char of the escape whose letter is at `at` (after the backslash); returns where
/// the escape ends.
fn escape(b: &[u8], at: usize, out: &mut String) -> Option<usize> {
    let c = match *b.get(at)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let unit = hex4(b, at + 1)?;
            if (0xD800..0xDC00).contains(&unit) {
                // A leading surrogate, which the escape after it must complete.
                if b.get(at + 5..at + 7)? != b"\\u" {
                    return None;
                }
                let low = hex4(b, at + 7)?;
                if !(0xDC00..0xE000).contains(&low) {
                    return None;
                }
                let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                out.push(char::from_u32(c)?);
                return Some(at + 11);
            }
            out.push(char::from_u32(unit)?);
            return Some(at + 5);
        }
        _ => return None,
    };
    out.push(c);
    Some(at + 1)
}

/// The four hex digits at `at` as a number.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    digits
        .iter()
        .try_fold(0u32, |n, &d| Some(n << 4 | char::from(d).to_digit(16)?))
}

/// How many bytes `b` starts with that a string takes as they are: up to the first quote,
/// backslash or control char, or all of them.
fn special_from(b: &[u8]) -> usize {
    let mut n = 0;
    #[cfg(target_arch = "x86_64")]
    while let Some(block) = b.get(n..n + 16) {
        // SAFETY: SSE2 is part of every x86_64 CPU, and the load reads the 16 bytes of
        // `block`; an unaligned load takes any address.
        let mask = unsafe {
            use std::arch::x86_64::*;
            let v = _mm_loadu_si128(block.as_ptr() as *const __m128i);
            let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // A byte is below 0x20 when the unsigned minimum with 0x1F leaves it as it is.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
        };
        if mask != 0 {
            return n + mask.trailing_zeros() as usize;
        }
        n += 16;
    }
    n + b[n..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .unwrap_or(b.len() - n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde_json's reading of `line`, as the fields compared.
    fn by_serde(line: &str) -> Option<(String, String, Option<String>, Option<String>)> {
        let d: JsonDoc = serde_json::from_str(line).ok()?;
        Some((d.id.into_string(), d.text.into_owned(), d.url, d.title))
    }

    fn by_us(line: &str) -> Option<(String, String, Option<String>, Option<String>)> {
        read(line).map(|d| (d.id.into_string(), d.text.into_owned(), d.url, d.title))
    }

    /// Every line this path takes, serde_json takes and reads the same.
    fn agrees(line: &str) {
        if let Some(ours) = by_us(line) {
            assert_eq!(Some(ours), by_serde(line), "{line:?}");
        }
    }

    #[test]
    fn the_common_lines_are_read_as_serde_json_reads_them() {
        for line in [
            r#"{"id": "a", "text": "plain"}"#,
            r#"  {"text":"x\ny \"q\" \\ \/ \b\f\r\t","id":"b"}  "#,
            "{\"id\":\"c\",\"text\":\"\u{451}\u{436} \\u0451\\u0416 \\ud83d\\ude00\",\"url\":null,\"title\":\"T\"}",
            r#"{"id":"d","text":"","url":"http://x/","title":null}"#,
            r#"{"i\u0064": "e", "text": "a key with an escape"}"#,
            "{\"id\":\"e\",\r\n\t\"text\" : \"long enough to cross a block of sixteen bytes, \\\"twice\\\"\"}\r\n",
        ] {
            assert!(by_us(line).is_some(), "{line:?}");
            agrees(line);
        }
    }

    #[test]
    fn lines_of_other_shapes_and_bad_lines_are_left_to_serde_json() {
        for line in [
            r#"{"id": 7, "text": "numeric id"}"#,
            r#"{"id": "a", "text": "t", "lang": "en"}"#,
            r#"{"id": "a", "text": "t", "id": "b"}"#,
            r#"{"id": "a"}"#,
            r#"{"text": "t"}"#,
            r#"["a", "t"]"#,
            r#"{"id": "a", "text": "t"} x"#,
            r#"{"id": "a", "text": "t",}"#,
            r#"{"id": "a", "text": "\x"}"#,
            r#"{"id": "a", "text": "\ud800"}"#,
            r#"{"id": "a", "text": "\ud800\u0041"}"#,
            r#"{"id": "a", "text": "\udc00"}"#,
            r#"{"id": "a", "text": "\u12G4"}"#,
            "{\"id\": \"a\", \"text\": \"raw\ttab\"}",
            r#"{"id": "a", "text": "unterminated}"#,
            r#"{"id": "a", "text": "t", "url": nul}"#,
            "",
            "{",
        ] {
            assert!(by_us(line).is_none(), "{line:?}");
        }
    }

    #[test]
    fn lines_made_of_random_pieces_are_never_read_otherwise_than_serde_json_reads_them() {
        let mut rng = crate::sign::test_support::Lcg(17);
        let pieces = [
            "{",
            "}",
            "\"",
            "\\",
            "\"id\"",
            "\"text\"",
            "\"url\"",
            "\"title\"",
            ":",
            ",",
            " ",
            "\t",
            "\n",
            "null",
            "nul",
            "a",
            "\u{451}",
            "\\n",
            "\\\"",
            "\\u0041",
            "\\ud83d",
            "\\ude00",
            "\\u00",
            "\u{1}",
            "7",
            "twenty bytes of text",
        ];
        let mut taken = 0;
        for _ in 0..200_000 {
            // Half the lines start from a good line, so that many are taken.
            let mut line = if rng.below(2) == 0 {
                String::from(r#"{"id":"a","text":"b"#)
            } else {
                String::new()
            };
            for _ in 0..rng.below(12) {
                line.push_str(pieces[rng.below(pieces.len() as u64) as usize]);
            }
            if rng.below(2) == 0 {
                line.push_str("\"}");
            }
            agrees(&line);
            taken += usize::from(by_us(&line).is_some());
        }
        assert!(taken > 1000, "{taken}");
    }
}
