//! The visible text cut into blocks at block-element boundaries, each with
//! the link characters that its weight is judged by.

use super::arena::{ANode, Kind, Page};
use super::whitespace::{count_chars, is_invisible};
use std::fmt::Write;

/// Class of a block of text for the output layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum BlockKind {
    Para,
    Heading(u8),
    ListItem,
    Cell,
    Pre,
}

pub(super) struct Block {
    pub(super) text: String,
    pub(super) owner: u32,
    pub(super) kind: BlockKind,
    pub(super) chars: u32,
    pub(super) link_chars: u32,
    pub(super) long_link_chars: u32,
}

/// Links with at least this many characters read like titles, not menu entries.
const LONG_LINK: u32 = 30;

/// Labels that put a link to another page between an article's paragraphs ("Related: <a>…</a>",
/// "Читайте также: <a>…</a>"), in lower case.
const TEASER_LABELS: &[&str] = &[
    "related",
    "related reading",
    "related article",
    "related articles",
    "related story",
    "related stories",
    "related post",
    "related content",
    "see also",
    "read more",
    "read next",
    "read also",
    "also read",
    "more",
    "recommended",
    "recommended reading",
    "you may also like",
    "you might also like",
    "don't miss",
    "must read",
    "читайте также",
    "читать также",
    "также читайте",
    "смотрите также",
    "см. также",
    "по теме",
    "читайте по теме",
    "рекомендуем",
    "вам может быть интересно",
];
/// Share of a teaser's characters after its label that are its link.
const TEASER_LINK_SHARE: f32 = 0.7;

/// Labels that file a post under its site's tags or categories ("Topics Apple", "Posted in
/// Blockchain, Technologies", "Теги: экономика"): with a colon or without, as sites print
/// them; in lower case (a page's are compared folded to it, in its letter case: one byte
/// length for both cases in English and Russian).
const FILING_LABELS: &[&str] = &[
    "tags",
    "tag",
    "tagged",
    "tagged with",
    "tagged as",
    "topics",
    "topic",
    "related topics",
    "filed under",
    "filed in",
    "posted in",
    "categories",
    "category",
    "labels",
    "more on these topics",
    "explore more on these topics",
    "теги",
    "метки",
    "рубрика",
    "рубрики",
    "темы",
    "тема",
];
/// Share of a filing line's characters after its label that are links: every tag is one, and
/// the commas between them are not.
const FILING_LINK_SHARE: f32 = 0.8;

impl Block {
    /// A paragraph that only points to another page: a label from [`TEASER_LABELS`], a colon,
    /// and a link ("Read more: 8 Great Benefits of Working From Home").
    pub(super) fn is_teaser(&self) -> bool {
        if !matches!(self.kind, BlockKind::Para | BlockKind::ListItem) || self.link_chars == 0 {
            return false;
        }
        let Some((label, _)) = self.text.split_once(':') else {
            return false;
        };
        // In characters: a Russian label takes two bytes a letter.
        if label.chars().count() > 24 {
            return false;
        }
        let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
        let label = label.to_lowercase().replace('’', "'");
        if !TEASER_LABELS.contains(&label.as_str()) {
            return false;
        }
        self.links_after(count_chars(&label) + 1, TEASER_LINK_SHARE)
    }

    /// Whether at least `share` of the block's characters after its first `head` ones (its
    /// label) are links.
    fn links_after(&self, head: u32, share: f32) -> bool {
        let rest = self.chars.saturating_sub(head);
        rest > 0 && self.link_chars as f32 >= share * rest as f32
    }

    /// A paragraph that only files the page under its tags or categories: a label from
    /// [`FILING_LABELS`] (a colon after it or not) and then links alone.
    pub(super) fn is_filing(&self) -> bool {
        if !matches!(self.kind, BlockKind::Para | BlockKind::ListItem) || self.link_chars == 0 {
            return false;
        }
        FILING_LABELS.iter().any(|label| {
            let Some(after) = self
                .text
                .get(..label.len())
                .filter(|head| head.chars().flat_map(char::to_lowercase).eq(label.chars()))
                .map(|_| &self.text[label.len()..])
            else {
                return false;
            };
            let after = after.strip_prefix(':').unwrap_or(after);
            if !after.starts_with(char::is_whitespace) {
                return false;
            }
            let head = count_chars(&self.text[..self.text.len() - after.len()]);
            self.links_after(head, FILING_LINK_SHARE)
        })
    }
}

impl Page<'_> {
    /// Cuts the visible text into blocks at block-element boundaries.
    pub(super) fn blocks(&self) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut open: Vec<u32> = Vec::new();
        let mut pre_depth = 0u32;
        let mut cur = String::new();
        let mut cur_owner = self.body;
        // Link characters so far in the current block: all, and those in
        // links long enough to be titles rather than menu entries.
        let mut cur_link = (0u32, 0u32);
        let mut pending_space = false;
        // Adjacent links are usually laid out apart by CSS, so words meeting at
        // a link edge are kept apart (but no space is put before punctuation).
        let mut soft_space = false;
        let mut link_end = 0u32;
        // Open `<ol>`s with the number of their last item, and the marker
        // ("3. ") waiting for the first text of the item just opened, with
        // the item's end: an item without text passes it to nobody.
        let mut ordered: Vec<(u32, i64)> = Vec::new();
        let mut marker: Option<(i64, u32)> = None;
        let start = self.body as usize;
        let end = self.nodes[start].end as usize;
        let mut i = start;
        let flush = |cur: &mut String,
                     cur_owner: u32,
                     cur_link: &mut (u32, u32),
                     blocks: &mut Vec<Block>,
                     nodes: &Vec<ANode>| {
            let t = cur.trim();
            if !t.is_empty() {
                let kind = match nodes[cur_owner as usize].kind {
                    Kind::Heading(l) => BlockKind::Heading(l),
                    Kind::ListItem => BlockKind::ListItem,
                    Kind::Cell => BlockKind::Cell,
                    Kind::Pre => BlockKind::Pre,
                    _ => BlockKind::Para,
                };
                let chars = count_chars(t);
                blocks.push(Block {
                    text: t.to_string(),
                    owner: cur_owner,
                    kind,
                    chars,
                    link_chars: cur_link.0.min(chars),
                    // A long link cut by a block element inside it was
                    // credited in full when it opened.
                    long_link_chars: cur_link.1.min(cur_link.0).min(chars),
                });
            }
            cur.clear();
            *cur_link = (0, 0);
        };
        while i < end {
            while let Some(&top) = open.last() {
                if i as u32 >= self.nodes[top as usize].end {
                    open.pop();
                    if self.nodes[top as usize].kind == Kind::Pre {
                        pre_depth -= 1;
                    }
                    flush(&mut cur, cur_owner, &mut cur_link, &mut blocks, &self.nodes);
                    pending_space = false;
                    cur_owner = open.last().copied().unwrap_or(self.body);
                } else {
                    break;
                }
            }
            if link_end != 0 && i as u32 >= link_end {
                link_end = 0;
                soft_space = true;
            }
            let n = &self.nodes[i];
            if n.removed {
                i = n.end.max(i as u32 + 1) as usize;
                continue;
            }
            match n.kind {
                Kind::Text => {
                    if pre_depth > 0 {
                        for c in n.text.chars() {
                            if is_invisible(c) {
                                continue;
                            }
                            cur.push(if c == '\u{a0}' { ' ' } else { c });
                        }
                    } else {
                        for c in n.text.chars() {
                            if is_invisible(c) {
                                continue;
                            }
                            if c.is_whitespace() {
                                pending_space = true;
                            } else {
                                let space = if pending_space {
                                    !cur.is_empty() && !cur.ends_with('\n')
                                } else {
                                    soft_space
                                        && c.is_alphanumeric()
                                        && cur
                                            .chars()
                                            .next_back()
                                            .is_some_and(char::is_alphanumeric)
                                };
                                if let Some((k, _)) = marker.take().filter(|&(_, e)| e > i as u32) {
                                    if !cur.is_empty() && !cur.ends_with('\n') {
                                        cur.push(' ');
                                    }
                                    let _ = write!(cur, "{k}. ");
                                } else if space {
                                    cur.push(' ');
                                }
                                pending_space = false;
                                soft_space = false;
                                cur.push(c);
                            }
                        }
                    }
                    if n.in_link {
                        cur_link.0 += n.chars;
                    }
                }
                Kind::Br => {
                    if !cur.is_empty() && !cur.ends_with('\n') {
                        cur.push('\n');
                    }
                    pending_space = false;
                }
                Kind::Link => {
                    soft_space = true;
                    if link_end == 0 {
                        link_end = n.end;
                    }
                    if n.chars >= LONG_LINK {
                        cur_link.1 += n.chars;
                    }
                }
                Kind::Inline => {
                    if n.el.is_some_and(spaced_before) {
                        soft_space = true;
                    }
                }
                _ => {
                    if n.kind == Kind::ListItem {
                        marker = self.item_number(i, n, &mut ordered).map(|k| (k, n.end));
                    }
                    flush(&mut cur, cur_owner, &mut cur_link, &mut blocks, &self.nodes);
                    pending_space = false;
                    if n.end > i as u32 + 1 {
                        open.push(i as u32);
                        if n.kind == Kind::Pre {
                            pre_depth += 1;
                        }
                        cur_owner = i as u32;
                    }
                }
            }
            i += 1;
        }
        flush(&mut cur, cur_owner, &mut cur_link, &mut blocks, &self.nodes);
        blocks
    }

    /// The number a browser shows before item `i` when its list is an
    /// `<ol>` (`start` and `value` honoured): the reader sees "3. Step", and
    /// a step or a ranked entry without its number reads as another text.
    /// `ordered` holds the open lists' last numbers, outermost first.
    fn item_number(&self, i: usize, n: &ANode, ordered: &mut Vec<(u32, i64)>) -> Option<i64> {
        while ordered
            .last()
            .is_some_and(|&(ol, _)| i as u32 >= self.nodes[ol as usize].end)
        {
            ordered.pop();
        }
        let list = self.nodes[n.parent as usize].el?;
        if list.name() != "ol" || n.el.is_none_or(|el| el.name() != "li") {
            return None;
        }
        let value = |el: &scraper::node::Element, attr: &str| -> Option<i64> {
            el.attr(attr)?.trim().parse().ok()
        };
        if ordered.last().is_none_or(|&(ol, _)| ol != n.parent) {
            let start = value(list, "start").unwrap_or(1);
            ordered.push((n.parent, start.saturating_sub(1)));
        }
        let last = &mut ordered.last_mut()?.1;
        *last =
            n.el.and_then(|el| value(el, "value"))
                .unwrap_or(last.saturating_add(1));
        Some(*last)
    }
}

/// Whether an inline element's class names put space before it, as utility CSS does with a
/// left padding or margin (`pl-1`, `ml-2`, `px-1`, `ms-1`): "Written by<span class="pl-1">Ann
/// Lee</span>" reads "Written by Ann Lee" on the page, not "byAnn".
fn spaced_before(el: &scraper::node::Element) -> bool {
    el.attr("class").is_some_and(|class| {
        class.split_ascii_whitespace().any(|c| {
            ["pl-", "ml-", "px-", "mx-", "ps-", "ms-", "p-", "m-"]
                .iter()
                .filter_map(|prefix| c.strip_prefix(prefix))
                .any(|size| {
                    size != "0" && size.starts_with(|ch: char| ch.is_ascii_digit() || ch == '[')
                })
        })
    })
}
