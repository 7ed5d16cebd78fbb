//! The prescan: where every template, link, comment, extension tag and
//! `<div>`/`<table>` block ends, found in one pass so that rendering never
//! searches for a closer.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Comments and the bare `<noinclude>`-style tags: render nothing.
    Comment,
    /// Extension tags whose output is not article prose (`<ref>`, `<math>`…).
    Drop,
    /// `<nowiki>`/`<pre>`: content shown verbatim.
    Literal {
        cs: usize,
        ce: usize,
    },
    Template,
    TplArg,
    Link,
    /// `<div>`/`<table>` blocks, which TextExtracts drops with their text.
    HtmlDrop,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Mark {
    pub(super) end: usize,
    pub(super) kind: Kind,
}

pub(super) type Marks = HashMap<usize, Mark, BuildHasherDefault<PosHasher>>;

/// Keys are byte offsets, not attacker-chosen strings, and the map is hit
/// for every markup character: a multiplicative hash is enough and several
/// times cheaper than SipHash.
#[derive(Default)]
pub(super) struct PosHasher(u64);

impl Hasher for PosHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(26);
    }
}

const DROP_TAGS: &[&str] = &[
    "ref",
    "references",
    "math",
    "chem",
    "ce",
    "gallery",
    "timeline",
    "source",
    "syntaxhighlight",
    "poem",
    "imagemap",
    "inputbox",
    "categorytree",
    "mapframe",
    "maplink",
    "score",
    "graph",
    "hiero",
    "templatedata",
    "templatestyles",
    "indicator",
    "section",
    "includeonly",
    "charinsert",
    "dynamicpagelist",
    "rss",
];

const LITERAL_TAGS: &[&str] = &["nowiki", "pre"];

const TRANSPARENT_TAGS: &[&str] = &["noinclude", "onlyinclude"];

pub(super) struct Tag {
    name_start: usize,
    name_end: usize,
    closing: bool,
    self_closing: bool,
    /// Position just after `>`.
    pub(super) end: usize,
}

impl Tag {
    pub(super) fn name<'a>(&self, b: &'a [u8]) -> &'a [u8] {
        &b[self.name_start..self.name_end]
    }
}

/// Parses `<name attrs>` / `</name>` / `<name/>` at `i` (which holds `<`).
/// The attribute scan stops at the next `<`, so a run of broken tags costs
/// linear time in total.
pub(super) fn parse_tag(b: &[u8], i: usize, e: usize) -> Option<Tag> {
    let mut j = i + 1;
    let closing = j < e && b[j] == b'/';
    if closing {
        j += 1;
    }
    let name_start = j;
    if j >= e || !b[j].is_ascii_alphabetic() {
        return None;
    }
    while j < e && b[j].is_ascii_alphanumeric() {
        j += 1;
    }
    let name_end = j;
    if j >= e {
        return None;
    }
    if !(b[j] == b'>' || b[j] == b'/' || b[j].is_ascii_whitespace()) {
        return None;
    }
    while j < e && b[j] != b'>' {
        if b[j] == b'<' {
            return None;
        }
        j += 1;
    }
    if j >= e {
        return None;
    }
    let self_closing = b[j - 1] == b'/';
    Some(Tag {
        name_start,
        name_end,
        closing,
        self_closing,
        end: j + 1,
    })
}

pub(super) fn in_list(name: &[u8], list: &[&str]) -> bool {
    list.iter().any(|t| name.eq_ignore_ascii_case(t.as_bytes()))
}

/// Finds `</name\s*>` at or after `from`; returns (start, end).
fn find_close_tag(b: &[u8], from: usize, name: &[u8]) -> Option<(usize, usize)> {
    let mut i = from;
    while let Some(off) = find_bytes(&b[i..], b"</") {
        let s = i + off;
        let n = s + 2;
        if n + name.len() <= b.len() && b[n..n + name.len()].eq_ignore_ascii_case(name) {
            let mut j = n + name.len();
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if j < b.len() && b[j] == b'>' {
                return Some((s, j + 1));
            }
        }
        i = s + 2;
    }
    None
}

fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut i = 0;
    while i + needle.len() <= hay.len() {
        match hay[i..=hay.len() - needle.len()]
            .iter()
            .position(|&c| c == first)
        {
            None => return None,
            Some(p) => {
                let s = i + p;
                if &hay[s..s + needle.len()] == needle {
                    return Some(s);
                }
                i = s + 1;
            }
        }
    }
    None
}

struct Piece {
    open: u8,
    /// Start of the run of opening characters.
    pos: usize,
    count: usize,
}

pub(super) fn prescan(b: &[u8]) -> Marks {
    let n = b.len();
    let mut marks: Marks = HashMap::default();
    let mut stack: Vec<Piece> = Vec::new();
    // Once a closing tag is known to be absent, later openers of that name are
    // text at once: this is what keeps many unclosed `<ref>`s linear.
    let mut no_close: Vec<Vec<u8>> = Vec::new();
    let mut div_stack: Vec<usize> = Vec::new();
    let mut table_stack: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < n {
        match b[i] {
            b'<' => {
                if b[i..].starts_with(b"<!--") {
                    let end = find_bytes(&b[i + 4..], b"-->").map_or(n, |p| i + 4 + p + 3);
                    marks.insert(
                        i,
                        Mark {
                            end,
                            kind: Kind::Comment,
                        },
                    );
                    i = end;
                    continue;
                }
                let Some(tag) = parse_tag(b, i, n) else {
                    i += 1;
                    continue;
                };
                let name = tag.name(b);
                if in_list(name, TRANSPARENT_TAGS) {
                    marks.insert(
                        i,
                        Mark {
                            end: tag.end,
                            kind: Kind::Comment,
                        },
                    );
                    i = tag.end;
                    continue;
                }
                let drop = in_list(name, DROP_TAGS);
                let literal = in_list(name, LITERAL_TAGS);
                if !tag.closing && (drop || literal) {
                    if tag.self_closing {
                        let kind = if drop { Kind::Drop } else { Kind::Comment };
                        marks.insert(i, Mark { end: tag.end, kind });
                        i = tag.end;
                        continue;
                    }
                    let lname = name.to_ascii_lowercase();
                    if !no_close.contains(&lname) {
                        if let Some((cs, end)) = find_close_tag(b, tag.end, &lname) {
                            let kind = if drop {
                                Kind::Drop
                            } else {
                                Kind::Literal {
                                    cs: tag.end,
                                    ce: cs,
                                }
                            };
                            marks.insert(i, Mark { end, kind });
                            i = end;
                            continue;
                        }
                        no_close.push(lname);
                    }
                    i = tag.end;
                    continue;
                }
                for (tname, st) in [(&b"div"[..], &mut div_stack), (b"table", &mut table_stack)] {
                    if name.eq_ignore_ascii_case(tname) {
                        if tag.closing {
                            if let Some(open) = st.pop() {
                                marks.insert(
                                    open,
                                    Mark {
                                        end: tag.end,
                                        kind: Kind::HtmlDrop,
                                    },
                                );
                            }
                        } else if !tag.self_closing {
                            st.push(i);
                        }
                    }
                }
                i = tag.end;
            }
            c @ (b'{' | b'[') => {
                let run = b[i..].iter().take_while(|&&x| x == c).count();
                if run >= 2 {
                    stack.push(Piece {
                        open: c,
                        pos: i,
                        count: run,
                    });
                }
                i += run;
            }
            c @ (b'}' | b']') => {
                let open = if c == b'}' { b'{' } else { b'[' };
                let Some(top) = stack.last_mut() else {
                    i += 1;
                    continue;
                };
                if top.open != open {
                    i += 1;
                    continue;
                }
                // Only "at least 2" and "at least 3" matter; counting the whole run
                // here would make `}}}}…` quadratic.
                let count = b[i..]
                    .iter()
                    .take(top.count.min(3))
                    .take_while(|&&x| x == c)
                    .count();
                if count < 2 {
                    i += count;
                    continue;
                }
                let (matching, kind) = if open == b'[' {
                    (2, Kind::Link)
                } else if count >= 3 {
                    (3, Kind::TplArg)
                } else {
                    (2, Kind::Template)
                };
                let start = top.pos + top.count - matching;
                marks.insert(
                    start,
                    Mark {
                        end: i + matching,
                        kind,
                    },
                );
                top.count -= matching;
                if top.count < 2 {
                    stack.pop();
                }
                i += matching;
            }
            _ => i += 1,
        }
    }
    marks
}
