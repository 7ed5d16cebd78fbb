//! PDF: text per page (pdf-extract, chosen by measurement: README "Documents"), then the page
//! furniture left out — lines at the top or bottom of a page that recur on at least half the
//! pages (running headers and footers, digits counted as one), and page numbers — and lines
//! put back into paragraphs: a blank line ends one, a word hyphenated at a line's end is joined.

use super::DocumentFailure;
use std::collections::HashMap;

/// How many non-blank lines at each end of a page may be furniture.
const EDGE_LINES: usize = 3;

pub(super) fn paragraphs(bytes: &[u8]) -> Result<Vec<String>, DocumentFailure> {
    let pages = pdf_extract::extract_text_from_mem_by_pages(bytes).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("ncrypt") || msg.contains("decrypt") || msg.contains("password") {
            DocumentFailure::Encrypted
        } else {
            DocumentFailure::Corrupt(format!("not a readable PDF: {msg}"))
        }
    })?;
    Ok(paragraphs_of_pages(&pages))
}

/// The paragraphs of a document given as the text of its pages.
pub(super) fn paragraphs_of_pages(pages: &[String]) -> Vec<String> {
    let pages: Vec<Vec<&str>> = pages
        .iter()
        .map(|p| p.lines().map(str::trim).collect())
        .collect();
    let mut seen_on: HashMap<String, usize> = HashMap::new();
    for lines in &pages {
        let mut keys: Vec<String> = edges(lines)
            .into_iter()
            .map(|i| furniture_key(lines[i]))
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            *seen_on.entry(k).or_default() += 1;
        }
    }
    let recurring = |line: &str| {
        let n = seen_on.get(&furniture_key(line)).copied().unwrap_or(0);
        pages.len() >= 2 && n >= 2 && n * 2 >= pages.len()
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    for lines in &pages {
        let edge = edges(lines);
        let kept: Vec<&str> = (0..lines.len())
            .filter(|i| !(edge.contains(i) && (is_page_number(lines[*i]) || recurring(lines[*i]))))
            .map(|i| lines[i])
            .collect();
        // The blank lines around a header or footer are no paragraph break: a paragraph cut by
        // the page break goes on over it.
        let first = kept
            .iter()
            .position(|l| !l.is_empty())
            .unwrap_or(kept.len());
        let last = kept
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(first, |i| i + 1);
        for line in &kept[first..last.max(first)] {
            if line.is_empty() {
                end_paragraph(&mut cur, &mut out);
            } else {
                append_line(&mut cur, &unligature(line));
            }
        }
        // A paragraph runs on over the page break unless its sentence has ended.
        if cur
            .trim_end()
            .ends_with(['.', '!', '?', ':', '"', '\u{201D}', '\u{BB}'])
        {
            end_paragraph(&mut cur, &mut out);
        }
    }
    end_paragraph(&mut cur, &mut out);
    out
}

/// Indices of the first and last `EDGE_LINES` non-blank lines.
fn edges(lines: &[&str]) -> Vec<usize> {
    let filled: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
    let tail = filled.len().saturating_sub(EDGE_LINES);
    let mut idx: Vec<usize> = filled
        .iter()
        .take(EDGE_LINES)
        .chain(filled.iter().skip(tail))
        .copied()
        .collect();
    idx.sort_unstable();
    idx.dedup();
    idx
}

/// A line as furniture recurs: case and spacing ignored, every number the same.
fn furniture_key(line: &str) -> String {
    let mut key = String::with_capacity(line.len());
    let mut last_digit = false;
    for w in line.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
            last_digit = false;
        }
        for c in w.chars() {
            if c.is_ascii_digit() {
                if !last_digit {
                    key.push('#');
                }
                last_digit = true;
            } else {
                key.extend(c.to_lowercase());
                last_digit = false;
            }
        }
    }
    key
}

/// Typographic ligatures (PDF fonts map them to one glyph) back to their letters.
fn unligature(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains(|c| ('\u{FB00}'..='\u{FB06}').contains(&c)) {
        return line.into();
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            c => out.push(c),
        }
    }
    out.into()
}

/// `12`, `- 12 -`, `Page 12`, `12 of 40`, `xiv`, `стр. 12`.
fn is_page_number(line: &str) -> bool {
    let t = line
        .trim_matches(|c: char| c.is_whitespace() || matches!(c, '-' | '–' | '—' | '|' | '[' | ']'))
        .to_lowercase();
    let t = ["page ", "p. ", "стр. ", "страница ", "с. "]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .unwrap_or(&t)
        .trim();
    let number = |s: &str| !s.is_empty() && s.len() <= 6 && s.chars().all(|c| c.is_ascii_digit());
    let roman = |s: &str| !s.is_empty() && s.len() <= 7 && s.chars().all(|c| "ivxlcdm".contains(c));
    if number(t) || roman(t) {
        return true;
    }
    let parts: Vec<&str> = t.split([' ', '/']).filter(|s| !s.is_empty()).collect();
    matches!(parts.as_slice(), [a, "of" | "из", b] | [a, b] if number(a) && number(b))
}

/// Adds a line to the paragraph: a word split by a hyphen at the line's end (before a
/// lower-case continuation) or by a soft hyphen is joined, other lines meet with a space.
fn append_line(cur: &mut String, line: &str) {
    if cur.is_empty() {
        cur.push_str(line);
        return;
    }
    if cur.ends_with('\u{AD}') {
        cur.pop();
        cur.push_str(line);
        return;
    }
    let mut tail = cur.chars().rev();
    let hyphenated = tail.next() == Some('-') && tail.next().is_some_and(char::is_alphabetic);
    if hyphenated && line.chars().next().is_some_and(char::is_lowercase) {
        cur.pop();
        cur.push_str(line);
        return;
    }
    cur.push(' ');
    cur.push_str(line);
}

fn end_paragraph(cur: &mut String, out: &mut Vec<String>) {
    let p = std::mem::take(cur);
    let p = p.trim();
    if !p.is_empty() {
        out.push(p.to_string());
    }
}
