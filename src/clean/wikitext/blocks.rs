//! The line-based phase: tables, headings, lists, paragraphs and apparatus
//! sections, with MediaWiki's reading of `''` and `'''` runs.

use super::entities::clean_inline;
use super::{normalize_heading, Config};
use std::borrow::Cow;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Para,
    Heading,
    Item,
}

struct Writer {
    out: String,
    last: Option<Block>,
    para: String,
}

impl Writer {
    fn emit(&mut self, kind: Block, raw: &str) {
        let text = clean_inline(raw);
        if text.is_empty() {
            return;
        }
        if let Some(last) = self.last {
            let tight = last == Block::Item && kind == Block::Item;
            self.out.push_str(if tight { "\n" } else { "\n\n" });
        }
        self.out.push_str(&text);
        self.last = Some(kind);
    }

    fn flush(&mut self) {
        if !self.para.is_empty() {
            let p = std::mem::take(&mut self.para);
            self.emit(Block::Para, &p);
        }
    }
}

/// `(level, text)` for a `== Heading ==` line.
fn heading(line: &str) -> Option<(usize, &str)> {
    let l = line.trim_end();
    let lead = l.bytes().take_while(|&c| c == b'=').count();
    let trail = l.bytes().rev().take_while(|&c| c == b'=').count();
    if lead == 0 || l.len() < 3 {
        return None;
    }
    let level = lead.min(trail).min(6);
    if l.len() <= 2 * level {
        return None;
    }
    Some((level, l[level..l.len() - level].trim()))
}

pub(super) fn blocks(mid: &str, cfg: &Config) -> String {
    let mut w = Writer {
        out: String::with_capacity(mid.len()),
        last: None,
        para: String::new(),
    };
    let mut table_depth = 0usize;
    let mut skip_level: Option<usize> = None;
    for line in mid.split('\n') {
        let line = strip_quotes(line);
        let line = line.as_ref();
        if let Some((level, text)) = heading(line) {
            // A heading also ends any table left open (an unclosed `{|`
            // would otherwise swallow the rest of the page).
            table_depth = 0;
            w.flush();
            if skip_level.is_some_and(|l| level > l) {
                continue;
            }
            skip_level = None;
            let norm = normalize_heading(&clean_inline(text));
            if cfg.drop.contains(&norm) {
                skip_level = Some(level);
                continue;
            }
            w.emit(Block::Heading, text);
            continue;
        }
        if skip_level.is_some() {
            continue;
        }
        let t = line.trim_start_matches([' ', '\t']);
        let tt = t.trim_start_matches([':', ' ', '\t']);
        if tt.starts_with("{|") {
            table_depth += 1;
            w.flush();
            continue;
        }
        if table_depth > 0 {
            if t.starts_with("|}") {
                table_depth -= 1;
            }
            continue;
        }
        if t.trim().is_empty() || t.starts_with("----") {
            w.flush();
            continue;
        }
        if t.starts_with(['*', '#', ':', ';']) {
            w.flush();
            let item = t.trim_start_matches(['*', '#', ':', ';', ' ', '\t']);
            w.emit(Block::Item, item);
            continue;
        }
        if !w.para.is_empty() {
            w.para.push(' ');
        }
        w.para.push_str(t);
    }
    w.flush();
    w.out
}

/// Removes `''` / `'''` markup from one source line the way MediaWiki's
/// doQuotes reads it, so that apostrophes next to markup survive
/// (`''Eagle'''s` is italic "Eagle" followed by "'s").
fn strip_quotes(line: &str) -> Cow<'_, str> {
    if !line.contains("''") {
        return Cow::Borrowed(line);
    }
    let b = line.as_bytes();
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\'' {
            let s = i;
            while i < b.len() && b[i] == b'\'' {
                i += 1;
            }
            if i - s >= 2 {
                runs.push((s, i - s));
            }
        } else {
            i += 1;
        }
    }
    // Literal apostrophes kept in front of each run's markup part, after
    // MediaWiki's rewriting of 4 → ' + 3 and >5 → extra apostrophes + 5.
    let mut keep: Vec<usize> = runs
        .iter()
        .map(|&(_, n)| match n {
            4 => 1,
            n if n > 5 => n - 5,
            _ => 0,
        })
        .collect();
    let markup = |k: usize, keep: &[usize]| runs[k].1 - keep[k];
    let italics = (0..runs.len())
        .filter(|&k| matches!(markup(k, &keep), 2 | 5))
        .count();
    let bolds = (0..runs.len())
        .filter(|&k| matches!(markup(k, &keep), 3 | 5))
        .count();
    if italics % 2 == 1 && bolds % 2 == 1 {
        // One bold is really an apostrophe followed by italics; pick it as
        // MediaWiki does: after a one-letter word, else after a longer word,
        // else after a space.
        let (mut single, mut multi, mut space) = (None, None, None);
        for k in 0..runs.len() {
            if markup(k, &keep) != 3 {
                continue;
            }
            let before = &line[..runs[k].0 + keep[k]];
            let mut rev = before.chars().rev();
            let (x1, x2) = (rev.next(), rev.next());
            if x1 == Some(' ') {
                space.get_or_insert(k);
            } else if x2 == Some(' ') || x2.is_none() {
                single = Some(k);
                break;
            } else {
                multi.get_or_insert(k);
            }
        }
        if let Some(k) = single.or(multi).or(space) {
            keep[k] += 1;
        }
    }
    let mut out = String::with_capacity(line.len());
    let mut last = 0;
    for (k, &(s, n)) in runs.iter().enumerate() {
        out.push_str(&line[last..s]);
        for _ in 0..keep[k] {
            out.push('\'');
        }
        last = s + n;
    }
    out.push_str(&line[last..]);
    Cow::Owned(out)
}
