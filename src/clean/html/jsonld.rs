//! `articleBody` read out of JSON-LD: pages rendered by scripts may carry
//! their text nowhere else, and where the page shows its text too, the
//! publisher's own statement of what the article is.

use super::whitespace::lowercase_words;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Word shingles the declared body must have before it is trusted to judge lines.
const MIN_DECLARED_SHINGLES: usize = 50;
/// Share of the shingles of the extracted text's lines, from the first line the body holds,
/// that the declared body must hold: a body cut short
/// (a teaser, a paywall's first paragraphs) holds less and judges nothing.
const DECLARED_COVER: f32 = 0.7;
/// A line holding less than this share of its shingles in the declared body is not part of
/// the article (a disclosure, a product card, an author box, a picture's caption).
const LINE_IN_DECLARED: f32 = 0.2;
/// Lines shorter than this many shingles (headings, list labels) are left alone.
const MIN_LINE_SHINGLES: usize = 3;
const SHINGLE_WORDS: usize = 4;

/// Decoded JSON string values following each occurrence of `key` (quoted),
/// found by a linear scan without parsing the whole document.
pub(super) fn json_strings_for_key(json: &str, key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = json;
    while let Some(pos) = rest.find(key) {
        rest = &rest[pos + key.len()..];
        let after = rest.trim_start();
        let Some(after) = after.strip_prefix(':') else {
            continue;
        };
        let after = after.trim_start();
        let Some(after) = after.strip_prefix('"') else {
            continue;
        };
        let mut val = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    end = i + 1;
                    break;
                }
                '\\' => match chars.next().map(|(_, e)| e) {
                    Some('n') => val.push('\n'),
                    Some('t' | 'r') => val.push(' '),
                    Some('u') => {
                        let hex: String = chars.by_ref().take(4).map(|(_, h)| h).collect();
                        let mut code = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                        if (0xD800..0xDC00).contains(&code) {
                            // A surrogate pair: `\uD83D\uDE00`.
                            let low: String = chars.clone().take(6).map(|(_, h)| h).collect();
                            if let Some(l) = low
                                .strip_prefix("\\u")
                                .and_then(|h| u32::from_str_radix(h, 16).ok())
                                .filter(|l| (0xDC00..0xE000).contains(l))
                            {
                                for _ in 0..6 {
                                    chars.next();
                                }
                                code = 0x10000 + ((code - 0xD800) << 10) + (l - 0xDC00);
                            }
                        }
                        val.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                    }
                    Some(e) => val.push(e),
                    None => break,
                },
                _ => val.push(c),
            }
        }
        rest = &after[end..];
        out.push(val);
    }
    out
}

/// `text` without the lines that the page's declared `articleBody` does not hold, when that
/// body is long and holds most of the text; `None` when it does not judge.
pub(super) fn keep_declared_lines(text: &str, declared: &str) -> Option<String> {
    let declared = shingles(&lowercase_words(&strip_markup(declared)));
    if declared.len() < MIN_DECLARED_SHINGLES {
        return None;
    }
    // Each line's shingles and how many of them the body holds, within the line: a shingle
    // across two lines is an artefact of where blocks meet.
    let lines: Vec<(&str, usize, usize)> = text
        .split('\n')
        .map(|line| {
            let own = shingles(&lowercase_words(line));
            let held = own.iter().filter(|s| declared.contains(s)).count();
            (line, own.len(), held)
        })
        .collect();
    let in_declared = |own: usize, held: usize| (held as f32) >= LINE_IN_DECLARED * own as f32;
    // Lines above the first one the body holds are the article's head: a standfirst or lead
    // that publishers keep out of `articleBody` but readers count as the article's text. They
    // are neither judged nor counted against the body's cover.
    let head = lines
        .iter()
        .position(|&(_, own, held)| own >= MIN_LINE_SHINGLES && in_declared(own, held))?;
    let total: usize = lines[head..].iter().map(|l| l.1).sum();
    let held: usize = lines[head..].iter().map(|l| l.2).sum();
    if (held as f32) < DECLARED_COVER * total as f32 {
        return None;
    }
    let mut kept = String::with_capacity(text.len());
    for (n, &(line, own, held)) in lines.iter().enumerate() {
        if n > head && own >= MIN_LINE_SHINGLES && !in_declared(own, held) {
            continue;
        }
        // A dropped paragraph leaves one paragraph break, not two.
        if line.trim().is_empty() && (kept.is_empty() || kept.ends_with("\n\n")) {
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    Some(kept.trim_end().to_string())
}

/// Tags and character references in an `articleBody` (some publishers put HTML there) are
/// word breaks, as the markup they stand for is in the page's text.
fn strip_markup(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let close = if tail.starts_with('<') { '>' } else { ';' };
        // A reference is short; a lone `<` or `&` in prose is kept as it is.
        let limit = if close == ';' { 10 } else { 500 };
        match tail[1..].find(close).filter(|&j| j <= limit) {
            Some(j)
                if close == '>'
                    || tail[1..1 + j]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '#') =>
            {
                out.push(' ');
                rest = &tail[j + 2..];
            }
            _ => {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn shingles(words: &[String]) -> HashSet<u64> {
    words
        .windows(SHINGLE_WORDS)
        .map(|w| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            w.hash(&mut h);
            h.finish()
        })
        .collect()
}
