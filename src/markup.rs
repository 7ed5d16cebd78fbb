//! Guarded reading of untrusted bodies. Every HTML parse in the crate (cleaning, link
//! extraction, search-result pages) goes through [`parse_html`], which bounds what one page can
//! cost: a size cut, a nesting guard that flattens hostile nesting before html5ever sees it, and
//! a time budget checked while the parser is fed. [`looks_binary`] is the one test of whether a
//! decoded body is text at all. Pure functions: no IO, nothing else of the crate.

use html5ever::tendril::TendrilSink;
use scraper::Html;
use std::time::{Duration, Instant};

/// What one parse may cost.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Larger inputs are cut at a character boundary: parsing time and memory grow with the
    /// input, and no real article needs more.
    pub max_bytes: usize,
    /// Deeper nesting is flattened (see [`limit_nesting`]).
    pub max_depth: usize,
    /// Wall time the parse may take; past it the page is [`TooComplex`].
    pub budget: Duration,
}

impl Limits {
    /// For whole pages: the cleaner and the crawler's link extraction.
    pub const PAGE: Limits = Limits {
        max_bytes: 8 << 20,
        max_depth: MAX_DEPTH,
        // With the nesting guard a parse is linear, about 1 s for the 8 MiB cut on a slow
        // core; the budget is a backstop against what the guard does not foresee, generous
        // enough that a loaded machine does not turn a real page away.
        budget: Duration::from_secs(20),
    };
}

/// A page whose parse ran past its time budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooComplex {
    /// How far into the input the parser got, in bytes.
    pub parsed_bytes: usize,
}

impl TooComplex {
    /// The name reports and statuses use.
    pub const REASON: &'static str = "too-complex";
}

impl std::fmt::Display for TooComplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the parse ran out of its time budget after {} bytes",
            Self::REASON,
            self.parsed_bytes
        )
    }
}

/// The parser is fed in slices of this size, and the clock is read between them.
const FEED_BYTES: usize = 64 << 10;

/// Parses an HTML document within `limits`, with scripting off, so `<noscript>` content
/// (often the only server-rendered copy of a JS app's text) becomes a normal subtree.
pub fn parse_html(html: &str, limits: &Limits) -> Result<Html, TooComplex> {
    let started = Instant::now();
    let html = truncate_at_char_boundary(html, limits.max_bytes);
    let html = limit_nesting(html, limits.max_depth);
    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut parser = html5ever::driver::parse_document(Html::new_document(), opts);
    let mut fed = 0;
    while fed < html.len() {
        if started.elapsed() > limits.budget {
            return Err(TooComplex { parsed_bytes: fed });
        }
        let end = truncate_at_char_boundary(&html, fed + FEED_BYTES).len();
        let end = if end <= fed { html.len() } else { end };
        parser.process(html[fed..end].into());
        fed = end;
    }
    let doc = parser.finish();
    if started.elapsed() > limits.budget {
        return Err(TooComplex { parsed_bytes: fed });
    }
    Ok(doc)
}

/// Whether a decoded body is not text: binary bytes served as text, which decode into control
/// characters (any single-byte charset) or replacement characters (UTF-8). Real text, in any
/// language, has almost none of either; a little is tolerated because real pages carry a stray
/// one now and then.
pub fn looks_binary(text: &str) -> bool {
    // Counted on bytes, not decoded chars (3 % of a plain-text build's CPU), in passes the
    // compiler vectorises: a char starts at every byte that is not a continuation byte, and
    // U+FFFD is the one non-ASCII odd char.
    const LIMIT: usize = 64 << 10;
    let bytes = text.as_bytes();
    let head = if bytes.len() <= LIMIT {
        bytes
    } else {
        let mut starts = 0usize;
        let cut = bytes
            .iter()
            .position(|&b| {
                let start = b & 0xc0 != 0x80;
                starts += usize::from(start);
                start && starts > LIMIT
            })
            .unwrap_or(bytes.len());
        &bytes[..cut]
    };
    // One pass, a block of 64 bytes at a time into byte-sized counters, every test a
    // comparison without a branch: the form the compiler turns into vector operations (the
    // two filtered counts before it were 16 instructions a byte).
    let (mut chars, mut controls) = (0usize, 0usize);
    for block in head.chunks(64) {
        let (mut starts, mut odd) = (0u8, 0u8);
        for &b in block {
            starts += u8::from(b & 0xc0 != 0x80);
            let control = (b < b' ') & (b != b'\t') & (b != b'\n') & (b != b'\r') & (b != 0x0c);
            odd += u8::from(control | (b == 0x7f));
        }
        chars += usize::from(starts);
        controls += usize::from(odd);
    }
    let replacement = "\u{fffd}".as_bytes();
    let replacements = if head.contains(&replacement[0]) {
        head.windows(3).filter(|w| *w == replacement).count()
    } else {
        0
    };
    chars >= 16 && (controls + replacements) * 100 > chars * 2
}

/// html5ever's tree builder scans the stack of open elements for many tags,
/// so time grows with the square of the nesting depth (100k nested `<div>`s
/// take minutes); real pages stay far below this depth.
pub const MAX_DEPTH: usize = 400;

/// Elements that never have content or whose end tag is usually implied, so
/// they do not deepen the tree in the estimate below.
fn is_flat_tag(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
            | "p"
            | "li"
            | "dt"
            | "dd"
            | "tr"
            | "td"
            | "th"
            | "option"
            | "optgroup"
            | "thead"
            | "tbody"
            | "tfoot"
            | "rb"
            | "rt"
            | "rp"
            | "!doctype"
    )
}

fn is_raw_text_tag(name: &str) -> bool {
    matches!(
        name,
        "script" | "style" | "textarea" | "title" | "xmp" | "iframe" | "noembed" | "noframes"
    )
}

/// Drops start and end tags nested deeper than `max` (keeping their text), by
/// a rough tag scan that only has to be right for hostile input: the input is
/// returned untouched unless the estimated depth exceeds `max`.
pub fn limit_nesting(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
    // First pass only measures; second pass (rare) rewrites.
    for rewrite in [false, true] {
        let bytes = html.as_bytes();
        let mut out = String::new();
        let mut depth = 0usize;
        let mut too_deep = false;
        let mut copied = 0usize;
        let mut i = 0usize;
        while let Some(off) = memchr_lt(&bytes[i..]) {
            let start = i + off;
            let rest = &html[start..];
            let (len, name, is_end) = scan_tag(rest);
            i = start + len.max(1);
            let Some(name) = name else { continue };
            if is_flat_tag(&name) {
                continue;
            }
            if !is_end && is_raw_text_tag(&name) {
                let close = format!("</{name}");
                let after = &html[i..];
                i += find_ascii_ci(after, &close).unwrap_or(after.len());
                continue;
            }
            let self_closing = !is_end && rest[..len.min(rest.len())].ends_with("/>");
            if self_closing {
                continue;
            }
            let drop = if is_end {
                let d = depth > max;
                depth = depth.saturating_sub(1);
                d
            } else {
                depth += 1;
                depth > max
            };
            if drop {
                too_deep = true;
                if rewrite {
                    out.push_str(&html[copied..start]);
                    copied = i;
                }
            }
        }
        if !too_deep {
            return std::borrow::Cow::Borrowed(html);
        }
        if rewrite {
            out.push_str(&html[copied..]);
            return std::borrow::Cow::Owned(out);
        }
    }
    std::borrow::Cow::Borrowed(html)
}

fn memchr_lt(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'<')
}

/// Returns the byte length of the markup at `s` (which starts with '<'), its
/// lower-cased tag name if it is a tag, and whether it is an end tag.
fn scan_tag(s: &str) -> (usize, Option<String>, bool) {
    let b = s.as_bytes();
    if let Some(body) = s.strip_prefix("<!--") {
        let len = body.find("-->").map_or(s.len(), |p| p + 7);
        return (len, None, false);
    }
    let is_end = b.get(1) == Some(&b'/');
    let name_start = if is_end { 2 } else { 1 };
    let name_len = b[name_start.min(b.len())..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'!' || **c == b'-')
        .count();
    if name_len == 0 {
        return (1, None, false);
    }
    let len = s.find('>').map_or(s.len(), |p| p + 1);
    let name = s[name_start..name_start + name_len].to_ascii_lowercase();
    (len, Some(name), is_end)
}

/// Byte offset of `needle` (ASCII) in `hay`, ignoring ASCII case.
fn find_ascii_ci(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() || h.len() < n.len() {
        return None;
    }
    (0..=h.len() - n.len()).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// `s` cut to at most `max` bytes, at a character boundary.
pub fn truncate_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARA: &str =
        "A paragraph of ordinary prose, long enough to be read as the text of a page.";

    #[test]
    fn nesting_limit_keeps_text_and_normal_pages() {
        let normal = format!("<div><script>if (a<b) {{}}</script><p>{PARA}</div>");
        assert!(matches!(
            limit_nesting(&normal, 5),
            std::borrow::Cow::Borrowed(_)
        ));
        let deep = format!("{}text{}", "<div>".repeat(20), "</div>".repeat(20));
        let cut = limit_nesting(&deep, 5);
        assert_eq!(cut.matches("<div>").count(), 5);
        assert_eq!(cut.matches("</div>").count(), 5);
        assert!(cut.contains("text"));
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let s = "жжж";
        assert_eq!(truncate_at_char_boundary(s, 3), "ж");
        assert_eq!(truncate_at_char_boundary(s, 100), s);
    }

    #[test]
    fn a_parse_over_its_budget_is_too_complex_and_one_within_is_not() {
        let page = format!(
            "<html><body>{}</body></html>",
            format!("<p>{PARA}</p>").repeat(20_000)
        );
        let tight = Limits {
            budget: Duration::ZERO,
            ..Limits::PAGE
        };
        let err = parse_html(&page, &tight).unwrap_err();
        assert!(err.parsed_bytes < page.len(), "{err}");
        let doc = parse_html(&page, &Limits::PAGE).expect("within the page budget");
        let sel = scraper::Selector::parse("p").unwrap();
        assert_eq!(doc.select(&sel).count(), 20_000);
    }

    #[test]
    fn feeding_in_slices_keeps_multibyte_text_whole() {
        let page = format!("<p>{}</p>", "ж€😀".repeat(40_000));
        let doc = parse_html(&page, &Limits::PAGE).unwrap();
        let sel = scraper::Selector::parse("p").unwrap();
        let text: String = doc.select(&sel).next().unwrap().text().collect();
        assert_eq!(text, "ж€😀".repeat(40_000));
    }

    #[test]
    fn binary_test_counts_chars_as_decoded_chars_would() {
        let by_chars = |text: &str| {
            let (mut chars, mut odd) = (0usize, 0usize);
            for c in text.chars().take(64 << 10) {
                chars += 1;
                let control = (c < ' ' && !matches!(c, '\t' | '\n' | '\r' | '\x0c')) || c == '\x7f';
                odd += usize::from(control || c == '\u{fffd}');
            }
            chars >= 16 && odd * 100 > chars * 2
        };
        let pieces = [
            "a", "\u{fffd}", "\u{1}", "\x7f", "ж", "€", "😀", "\u{fffc}", "\u{ffff}", "\t",
        ];
        let mut seed = 11u64;
        for round in 0..3000 {
            let mut text = String::new();
            let len = if round % 100 == 0 { 70_000 } else { round % 90 };
            for _ in 0..len {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (seed >> 33) as usize;
                // Mostly letters, so that both sides of the 2 % line are reached.
                text.push_str(if r % 40 < 36 {
                    pieces[(r % 2) * 4]
                } else {
                    pieces[r % pieces.len()]
                });
            }
            assert_eq!(looks_binary(&text), by_chars(&text), "round {round}");
        }
        // Only the first 64 Ki chars count, however many bytes they take.
        for letter in ["a", "ж", "😀"] {
            let text = letter.repeat(64 << 10) + &"\u{1}".repeat(10_000);
            assert!(!looks_binary(&text) && !by_chars(&text));
        }
    }

    #[test]
    fn binary_bodies_are_told_from_text() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..20_000)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect();
        let as_utf8 = String::from_utf8_lossy(&noise);
        let (as_1252, _, _) = encoding_rs::WINDOWS_1252.decode(&noise);
        assert!(looks_binary(&as_utf8));
        assert!(looks_binary(&as_1252));
        for text in [
            "Обычный русский текст.\n\nС абзацами\tи табуляцией.",
            "Plain English text with a form feed\x0c and one stray \u{fffd} in a long enough line of prose.",
            "",
        ] {
            assert!(!looks_binary(text), "{text:?}");
        }
    }
}
