//! Inline rendering: one walk over the text that jumps over dropped
//! constructs and writes the visible part of links, external links, inline
//! templates and HTML tags.

use super::escape::{push_escaped, TAG_BOUNDARY};
use super::languages::LANG_CODES;
use super::prescan::{in_list, parse_tag, Kind, Mark, Marks};
use super::Config;
use std::cell::Cell;

/// HTML tags MediaWiki lets through; any other `<x>` is shown as text.
const HTML_TAGS: &[&str] = &[
    "abbr",
    "b",
    "bdi",
    "bdo",
    "big",
    "blockquote",
    "br",
    "caption",
    "center",
    "cite",
    "code",
    "data",
    "dd",
    "del",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "link",
    "mark",
    "meta",
    "ol",
    "p",
    "q",
    "rb",
    "rp",
    "rt",
    "rtc",
    "ruby",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "td",
    "th",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

const BLOCK_TAGS: &[&str] = &[
    "blockquote",
    "p",
    "li",
    "dd",
    "dt",
    "dl",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "center",
];

/// Nesting limit for rendering link labels and inline-template arguments;
/// deeper content is dropped, which bounds recursion on hostile input.
const MAX_DEPTH: usize = 24;

fn is_special(c: u8) -> bool {
    matches!(c, b'<' | b'{' | b'[' | b'_')
}

pub(super) struct Inline<'a> {
    pub(super) src: &'a str,
    b: &'a [u8],
    marks: &'a Marks,
    cfg: &'a Config,
    /// Last failed search for an external link's `]`: (from, to). A later
    /// `[http…` inside that span cannot succeed either.
    ext_fail: Cell<(usize, usize)>,
}

impl<'a> Inline<'a> {
    pub(super) fn new(src: &'a str, marks: &'a Marks, cfg: &'a Config) -> Self {
        Inline {
            src,
            b: src.as_bytes(),
            marks,
            cfg,
            ext_fail: Cell::new((usize::MAX, 0)),
        }
    }

    fn mark(&self, i: usize, e: usize) -> Option<Mark> {
        self.marks.get(&i).copied().filter(|m| m.end <= e)
    }

    pub(super) fn render(&self, s: usize, e: usize, out: &mut String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let b = self.b;
        let mut i = s;
        let mut run = s;
        while i < e {
            if !is_special(b[i]) {
                i += 1;
                continue;
            }
            out.push_str(&self.src[run..i]);
            i = self.construct(i, e, out, depth);
            run = i;
        }
        out.push_str(&self.src[run..e]);
    }

    /// Renders the construct starting at `i` (a special byte) and returns
    /// the position after it; unknown constructs emit their first byte.
    fn construct(&self, i: usize, e: usize, out: &mut String, depth: usize) -> usize {
        let b = self.b;
        if let Some(m) = self.mark(i, e) {
            match m.kind {
                Kind::Comment | Kind::Drop | Kind::HtmlDrop => {}
                Kind::Literal { cs, ce } => push_escaped(out, &self.src[cs..ce]),
                Kind::Template => self.template(i + 2, m.end - 2, out, depth),
                Kind::TplArg => {
                    if let Some(p) = self.split(i + 3, m.end - 3).get(1) {
                        self.render(p.0, p.1, out, depth + 1);
                    }
                }
                Kind::Link => self.link(i + 2, m.end - 2, out, depth),
            }
            return m.end;
        }
        match b[i] {
            b'<' => self.html_tag(i, e, out),
            b'[' => self.ext_link(i, e, out, depth),
            b'_' => self.behaviour_switch(i, e).unwrap_or_else(|| {
                out.push('_');
                i + 1
            }),
            c => {
                out.push(c as char);
                i + 1
            }
        }
    }

    fn html_tag(&self, i: usize, e: usize, out: &mut String) -> usize {
        match parse_tag(self.b, i, e) {
            Some(tag) if in_list(tag.name(self.b), HTML_TAGS) => {
                let name = tag.name(self.b);
                if in_list(name, BLOCK_TAGS) {
                    out.push('\n');
                } else if name.eq_ignore_ascii_case(b"br") {
                    out.push(' ');
                } else {
                    // Keeps `''θ''<sub>''i''</sub>` from merging into one
                    // run of four apostrophes; removed in `clean_inline`.
                    out.push(TAG_BOUNDARY);
                }
                tag.end
            }
            _ => {
                out.push('<');
                i + 1
            }
        }
    }

    /// `__NOTOC__`, `__БЕЗ_ОГЛАВЛЕНИЯ__`: two underscores, upper-case letters
    /// with single underscores, two underscores.
    fn behaviour_switch(&self, i: usize, e: usize) -> Option<usize> {
        let lim = e.min(i + 80);
        if !self.b[i..lim].starts_with(b"__") {
            return None;
        }
        let body = self.src.get(i + 2..lim).or_else(|| {
            // `lim` may split a character: shrink to a boundary.
            let mut l = lim;
            while !self.src.is_char_boundary(l) {
                l -= 1;
            }
            self.src.get(i + 2..l)
        })?;
        let mut prev_us = false;
        let mut letters = 0;
        for (k, ch) in body.char_indices() {
            if ch == '_' {
                if prev_us {
                    return (letters > 1).then_some(i + 2 + k + 1);
                }
                prev_us = true;
            } else if ch.is_uppercase() {
                if prev_us && letters == 0 {
                    return None;
                }
                prev_us = false;
                letters += 1;
            } else {
                return None;
            }
        }
        None
    }

    /// Splits `s..e` at top-level `|`, skipping nested constructs.
    pub(super) fn split(&self, s: usize, e: usize) -> Vec<(usize, usize)> {
        let mut parts = Vec::new();
        let mut start = s;
        let mut i = s;
        while i < e {
            let c = self.b[i];
            if matches!(c, b'{' | b'[' | b'<') {
                if let Some(m) = self.mark(i, e) {
                    if m.kind != Kind::HtmlDrop {
                        i = m.end;
                        continue;
                    }
                }
            } else if c == b'|' {
                parts.push((start, i));
                start = i + 1;
            }
            i += 1;
        }
        parts.push((start, e));
        parts
    }

    /// Position of the first top-level `=` in a template part, if any.
    pub(super) fn equals(&self, s: usize, e: usize) -> Option<usize> {
        let mut i = s;
        while i < e {
            let c = self.b[i];
            if matches!(c, b'{' | b'[' | b'<') {
                if let Some(m) = self.mark(i, e) {
                    i = m.end;
                    continue;
                }
            } else if c == b'=' {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    pub(super) fn trimmed(&self, s: usize, e: usize) -> (usize, usize) {
        let b = self.b;
        let (mut s, mut e) = (s, e);
        while s < e && b[s].is_ascii_whitespace() {
            s += 1;
        }
        while e > s && b[e - 1].is_ascii_whitespace() {
            e -= 1;
        }
        (s, e)
    }

    /// `[[target|label]]`, with `s..e` between the brackets.
    fn link(&self, s: usize, e: usize, out: &mut String, depth: usize) {
        let parts = self.split(s, e);
        let (ts, te) = self.trimmed(parts[0].0, parts[0].1);
        let target = &self.src[ts..te];
        if target.contains(['\n', '{', '}', '[', ']', '<', '>']) && !target.contains("<!--") {
            // Not a valid title: the brackets are text.
            out.push_str("[[");
            self.render(s, e, out, depth + 1);
            out.push_str("]]");
            return;
        }
        let (visible, t) = match target.strip_prefix(':') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, target),
        };
        if !visible {
            if let Some(colon) = t.find(':') {
                let prefix = normalize_name(&t[..colon]);
                if self.cfg.hidden_ns.contains(&prefix) || LANG_CODES.contains(&prefix.as_str()) {
                    return;
                }
            }
        }
        if parts.len() > 1 {
            let (ls, le) = (parts[1].0, parts.last().map_or(e, |p| p.1));
            let (ls2, le2) = self.trimmed(ls, le);
            if ls2 == le2 {
                // Pipe trick: `[[Foo (bar)|]]` shows "Foo".
                let t = t.split_once(':').map_or(t, |(_, r)| r);
                let t = t.split(" (").next().unwrap_or(t);
                out.push_str(t);
            } else {
                self.render(ls, le, out, depth + 1);
            }
        } else {
            let tstart = ts + (target.len() - t.len());
            self.render(tstart, te, out, depth + 1);
        }
    }

    fn ext_link(&self, i: usize, e: usize, out: &mut String, depth: usize) -> usize {
        let b = self.b;
        let literal = |out: &mut String| {
            out.push('[');
            i + 1
        };
        let url_start = i + 1;
        if !starts_with_scheme(&b[url_start..e]) {
            return literal(out);
        }
        let (fs, fe) = self.ext_fail.get();
        if i >= fs && i < fe {
            return literal(out);
        }
        let mut j = url_start;
        while j < e && !matches!(b[j], b' ' | b'\t' | b']' | b'\n' | b'<' | b'[' | b'"') {
            j += 1;
        }
        let url_end = j;
        // The label runs to `]` on the same line; templates and tags inside
        // it are jumped over so that their own brackets do not end it.
        let mut k = j;
        while k < e && b[k] != b']' && b[k] != b'\n' {
            if let Some(m) = self.mark(k, e) {
                k = m.end;
                continue;
            }
            k += 1;
        }
        if k >= e || b[k] != b']' {
            self.ext_fail.set((i, k));
            return literal(out);
        }
        let (ls, le) = self.trimmed(url_end, k);
        if ls < le {
            self.render(ls, le, out, depth + 1);
        }
        k + 1
    }
}

fn starts_with_scheme(b: &[u8]) -> bool {
    const SCHEMES: &[&str] = &[
        "http://",
        "https://",
        "//",
        "ftp://",
        "ftps://",
        "mailto:",
        "news:",
        "irc://",
        "ircs://",
        "git://",
        "svn://",
        "sftp://",
        "ssh://",
        "telnet://",
        "gopher://",
        "nntp://",
        "urn:",
        "tel:",
        "sms:",
        "geo:",
        "xmpp:",
        "magnet:",
        "worldwind://",
        "mms://",
        "redis://",
    ];
    SCHEMES.iter().any(|s| {
        b.len() >= s.len() && b[..s.len()].eq_ignore_ascii_case(s.as_bytes()) && b.len() > s.len()
    })
}

/// Template and namespace names: trimmed, `_` as space, lowercased, so that
/// `{{ Nowrap }}`, `{{nowrap}}` and `[[File_:…]]`-style variants compare equal.
pub(super) fn normalize_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for w in raw.split(|c: char| c.is_whitespace() || c == '_') {
        if w.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w.to_lowercase());
    }
    out
}
