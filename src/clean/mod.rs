//! Cleaners: raw bodies → plain text (docs/method.md §9.1). One file per kind of input.

pub mod html;
pub mod language;
pub mod mojibake;
pub mod text;
pub mod wikitext;

use crate::acquire::Payload;
pub use language::{detect_language, detect_language_in, LANGUAGE_SAMPLE_BYTES};
pub use mojibake::repair_mojibake;

/// A cleaned document: plain text, paragraphs separated by blank lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Cleaned {
    /// Title found in the input, if any.
    pub title: Option<String>,
    /// The plain text.
    pub text: String,
    /// Detected language (ISO 639-1), when detection is confident.
    pub lang: Option<String>,
    /// Why the body gave no text to judge, when it did not.
    pub defect: Option<Defect>,
}

/// Why a body gives no text: the filter stage keeps such documents out with this as the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    /// Its parse ran out of its time budget (`crate::markup::Limits`).
    TooComplex,
    /// Binary bytes under a text type (`crate::markup::looks_binary`).
    NotText,
    /// A document (PDF, DOCX, ODT, EPUB) read whole that holds no text: a scan.
    NoText,
    /// A document that needs a password.
    Encrypted,
    /// A document broken beyond reading (cut short, not of its format, its parser gave up).
    Corrupt,
}

impl Defect {
    /// The reason's name in statuses and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Defect::TooComplex => crate::markup::TooComplex::REASON,
            Defect::NotText => "not-text",
            Defect::NoText => "no-text",
            Defect::Encrypted => "encrypted",
            Defect::Corrupt => "corrupt",
        }
    }
}

/// What a cleaner knows besides the body.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleanContext<'a> {
    /// Address of the page, when known.
    pub url: Option<&'a str>,
    /// Language the source declares (a wiki's content language), when known.
    pub lang: Option<&'a str>,
}

/// Turns one kind of raw body into plain text.
pub trait Cleaner: Send + Sync {
    /// Cleans `body`; returns the title found in it, if any, and the text.
    fn clean(&self, body: &str, ctx: &CleanContext<'_>)
        -> Result<(Option<String>, String), Defect>;
}

/// The cleaner for a payload kind.
pub fn cleaner_for(payload: Payload) -> &'static dyn Cleaner {
    match payload {
        Payload::Html => &html::HtmlCleaner,
        Payload::Wikitext => &wikitext::WikitextCleaner,
        // Readers turn a document's bytes into plain text before cleaning.
        Payload::PlainText | Payload::Document => &text::TextCleaner,
    }
}

/// Cleans a body of the given kind and detects its language.
pub fn clean(payload: Payload, body: &str, ctx: &CleanContext<'_>) -> Cleaned {
    match clean_text(payload, body, ctx) {
        Ok((title, text)) => {
            let lang = detect_language(&text);
            Cleaned {
                title,
                text,
                lang,
                defect: None,
            }
        }
        Err(defect) => Cleaned {
            title: None,
            text: String::new(),
            lang: None,
            defect: Some(defect),
        },
    }
}

/// Title and text of a body of the given kind, or why it has none; text decoded twice is
/// decoded once first ([`repair_mojibake`]).
pub fn clean_text(
    payload: Payload,
    body: &str,
    ctx: &CleanContext<'_>,
) -> Result<(Option<String>, String), Defect> {
    if crate::markup::looks_binary(body) {
        return Err(Defect::NotText);
    }
    // Before the cleaner: a space decoded twice ("Â\u{a0}") is still one char for it to tidy.
    cleaner_for(payload).clean(&repair_mojibake(body), ctx)
}

/// Normalises whitespace: trims lines, collapses blank runs to one blank line, no trailing space.
pub fn tidy_paragraphs(text: &str) -> String {
    // Written straight into the output: a string per line and the char decoding of
    // `str::split` were 5 % of a plain-text build's CPU.
    let mut out = String::with_capacity(text.len());
    let mut blank_pending = false;
    for line in lines_of(text) {
        let mut first = true;
        let mut push = |words: &str| {
            if first {
                if !out.is_empty() {
                    out.push('\n');
                    if blank_pending {
                        out.push('\n');
                    }
                }
                first = false;
            } else {
                out.push(' ');
            }
            out.push_str(words);
        };
        // Most lines of most texts are already tidy and go in whole, and so do most of the
        // rest once the spaces and tabs at their ends are cut: an indented line was read a
        // byte at a time (a tenth of the dev corpus's bytes, a third of tidying's time).
        let line = trim_blanks(line);
        if is_tidy(line) {
            push(line);
        } else {
            for_each_word(line, push);
        }
        blank_pending = if first { !out.is_empty() } else { false };
    }
    out
}

/// The lines of `text` as `str::lines` gives them, found by the `memchr` crate's vector search
/// (the standard library's search for the line ends was a sixth of tidying's time).
fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .map(Some)
        .chain([None])
        .filter_map(move |end| match end {
            Some(end) => {
                let line = &text[start..end];
                start = end + 1;
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            // The last line, when something follows the last line break.
            None => (start < text.len()).then(|| &text[start..]),
        })
}

/// `line` without the spaces and tabs at its ends.
fn trim_blanks(line: &str) -> &str {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let bytes = line.as_bytes();
    let start = bytes.iter().take_while(|b| blank(b)).count();
    let end = bytes.len() - bytes[start..].iter().rev().take_while(|b| blank(b)).count();
    // Both ends are next to ASCII bytes, so on char boundaries.
    &line[start..end]
}

/// Whether `b` can start a whitespace char beyond ASCII: the lead bytes of U+0085..U+3000.
fn may_start_unicode_space(b: u8) -> bool {
    matches!(b, 0xc2 | 0xe1 | 0xe2 | 0xe3)
}

/// The length of the whitespace char beyond ASCII at byte `i` of `line`, if there is one.
fn unicode_space_at(line: &str, i: usize) -> Option<usize> {
    line[i..]
        .chars()
        .next()
        .filter(|c| c.is_whitespace())
        .map(char::len_utf8)
}

/// Whether `line` is already as tidying leaves it: words joined by single spaces, none at
/// either end, no other whitespace. The checks are whole-line passes without an early exit,
/// which compile to vector code.
fn is_tidy(line: &str) -> bool {
    let bytes = line.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first == b' ' || last == b' ' {
        return false;
    }
    // Bit 0: ASCII whitespace other than the space, or a space after a space; bit 1: a byte
    // that may start a whitespace char beyond ASCII. Each byte is read beside the one before
    // it (a substring search for two spaces was a sixth of tidying's time).
    let flags = |b: u8| {
        let ascii = (b == b'\t') | (b == 0x0b) | (b == 0x0c) | (b == b'\r');
        ascii as u8 | (may_start_unicode_space(b) as u8) << 1
    };
    let found = bytes
        .iter()
        .zip(&bytes[1..])
        .fold(flags(first), |found, (&before, &b)| {
            found | flags(b) | ((before == b' ') & (b == b' ')) as u8
        });
    match found {
        0 => true,
        2 => !bytes
            .iter()
            .enumerate()
            .any(|(i, &b)| may_start_unicode_space(b) && unicode_space_at(line, i).is_some()),
        _ => false,
    }
}

/// Calls `f` on each run of non-whitespace chars (`char::is_whitespace`) of `line`, in order.
fn for_each_word(line: &str, mut f: impl FnMut(&str)) {
    let bytes = line.as_bytes();
    let mut start: Option<usize> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        // Only ASCII bytes and the bytes that may start a whitespace char beyond ASCII can
        // begin whitespace; any other byte belongs to a word.
        let space = match b {
            b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => Some(1),
            _ if may_start_unicode_space(b) => unicode_space_at(line, i),
            _ => None,
        };
        match space {
            Some(len) => {
                if let Some(s) = start.take() {
                    f(&line[s..i]);
                }
                i += len;
            }
            None => {
                start.get_or_insert(i);
                i += 1;
            }
        }
    }
    if let Some(s) = start {
        f(&line[s..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_body_is_decoded_once_before_cleaning() {
        let ctx = CleanContext::default();
        for payload in [Payload::PlainText, Payload::Html, Payload::Wikitext] {
            let body = "Don’t say it: donâ€™t.\n\nРџСЂРёРІРµС‚, РјРёСЂ.";
            let (_, text) = clean_text(payload, body, &ctx).unwrap();
            assert!(
                text.contains("don’t.") && text.contains("Привет, мир.") && !text.contains('â'),
                "{payload:?}: {text}"
            );
        }
    }

    /// `tidy_paragraphs` by its definition, a line and a word at a time.
    fn tidy_reference(text: &str) -> String {
        let mut out = String::new();
        let mut blank_pending = false;
        for line in text.lines() {
            let line = line.split(char::is_whitespace).filter(|w| !w.is_empty());
            let line = line.collect::<Vec<_>>().join(" ");
            if line.is_empty() {
                blank_pending = !out.is_empty();
                continue;
            }
            if !out.is_empty() {
                out.push('\n');
                if blank_pending {
                    out.push('\n');
                }
            }
            out.push_str(&line);
            blank_pending = false;
        }
        out
    }

    /// `n` texts of `pieces` drawn pseudo-randomly from `seed` on, fewer than `most` each.
    fn random_texts(pieces: &[&str], mut seed: u64, most: u64, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                let mut text = String::new();
                for _ in 0..(seed % most) {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                text
            })
            .collect()
    }

    #[test]
    fn tidying_matches_its_definition_on_every_kind_of_space() {
        let pieces = [
            "a", "Ёж", "x\u{300}", " ", "  ", "\t", "\n", "\r\n", "\r", "\u{b}", "\u{c}", "\u{85}",
            "\u{a0}", "\u{1680}", "\u{2000}", "\u{200a}", "\u{200b}", "\u{2028}", "\u{2029}",
            "\u{202f}", "\u{205f}", "\u{3000}", "\u{e2}", "\u{20ac}", "—", "日本", "\n\n\n", "",
        ];
        for text in random_texts(&pieces, 7, 23, 4000) {
            assert_eq!(tidy_paragraphs(&text), tidy_reference(&text), "{text:?}");
        }
        for c in (0..0x3100u32).filter_map(char::from_u32) {
            let text = format!(" a{c}b {c}\n\n{c}c ");
            assert_eq!(tidy_paragraphs(&text), tidy_reference(&text), "{c:?}");
        }
    }

    #[test]
    fn lines_are_those_of_str_lines() {
        let pieces = ["a", "\n", "\r", "\r\n", "\n\n", "ж", ""];
        for text in random_texts(&pieces, 3, 9, 3000) {
            let want: Vec<&str> = text.lines().collect();
            assert_eq!(lines_of(&text).collect::<Vec<_>>(), want, "{text:?}");
        }
    }

    #[test]
    fn tidies_paragraphs() {
        assert_eq!(
            tidy_paragraphs("  a \u{a0} b \n\n\n\n c\nd  \n"),
            "a b\n\nc\nd"
        );
    }
}
