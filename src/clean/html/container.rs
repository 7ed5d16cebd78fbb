//! The main content container: block weights, the first guess and its
//! widening, link-heavy subtrees pruned inside it, and its text assembled
//! without the title heading and repeated quotes.

use super::arena::{Kind, Page};
use super::blocks::{Block, BlockKind};
use super::hints::HINT_CONTENT;
use super::whitespace::normalize_space;

/// Block weight: non-link characters count for the block, characters in
/// short (menu-like) links against it, and every block pays a fixed cost so
/// that runs of tiny fragments (menus, button rows, meta lines) score low.
const SHORT_LINK_PENALTY: f32 = 1.0;
const BLOCK_COST: f32 = 25.0;
/// Share of the page's non-link text the chosen container must hold.
const MIN_TEXT_SHARE: f32 = 0.45;
/// How far up to look for a run of same-markup siblings, and how much more
/// content the run must hold than the winner alone.
const CLUSTER_CLIMB: usize = 7;
const CLUSTER_GAIN: f32 = 1.5;
/// Share of the winner's weight an element named as content must hold to
/// be taken instead of it.
const NAMED_SHARE: f32 = 0.8;
/// Climb to the parent while it keeps this share of the score and adds this
/// factor of positive weight.
const EXPAND_KEEP: f32 = 0.6;
const EXPAND_GAIN: f32 = 1.3;
const PRUNE_SCORE: f32 = -80.0;
const PRUNE_LINK_DENSITY: f32 = 0.4;
/// A paragraph this long with few links is prose that pruning keeps.
const PROSE_CHARS: u32 = 150;
/// Sibling paragraphs taken with the container: this many characters with
/// few links, or shorter ones without links that end a sentence
/// (Readability's values).
const SIBLING_PARA_CHARS: u32 = 80;
const SIBLING_LINK_DENSITY: f32 = 0.25;
/// Cards of other posts ([`Page::teaser_cards`]): how many siblings make a run of them, the
/// most characters of one, the share of its heading that its link is, and the share of the
/// container that they may be and still be dropped.
const CARD_RUN: usize = 3;
const CARD_CHARS: u32 = 600;
const CARD_TITLE_LINK_SHARE: f32 = 0.9;
const CARDS_SHARE: f32 = 0.3;
/// Lines at least this long that a quote repeats are dropped from it.
const QUOTE_MIN_WORDS: usize = 5;
/// Characters above the title heading that may be dropped as page furniture.
const MAX_ABOVE_TITLE: u32 = 400;

/// Tag name and first class of an element ([`Page::signature`]).
type Markup<'a> = Option<(&'a str, &'a str)>;

impl Page<'_> {
    fn block_weight(b: &Block) -> f32 {
        let short_link = b.link_chars.saturating_sub(b.long_link_chars) as f32;
        let text = b.chars.saturating_sub(b.link_chars) as f32;
        text - SHORT_LINK_PENALTY * short_link - BLOCK_COST
    }

    /// Picks the element whose subtree has the largest total block weight.
    fn choose_container(&self, blocks: &[Block]) -> (usize, Vec<f32>) {
        let mut score = vec![0f32; self.nodes.len()];
        let mut positive = vec![0f32; self.nodes.len()];
        for b in blocks {
            let w = Self::block_weight(b);
            score[b.owner as usize] += w;
            positive[b.owner as usize] += w.max(0.0);
        }
        let body = self.body as usize;
        for i in (body + 1..self.nodes.len()).rev() {
            let p = self.nodes[i].parent as usize;
            score[p] += score[i];
            positive[p] += positive[i];
        }
        let mut best = body;
        let body_end = self.nodes[body].end as usize;
        for i in body..body_end {
            if self.nodes[i].kind != Kind::Text && score[i] > score[best] {
                best = i;
            }
        }
        if score[best] < 100.0 {
            best = body;
        } else if let Some(named) = self.named_content(best, &score) {
            best = named;
        }
        // A table of contents or a link list between sections can make one
        // section outscore the whole text; climb while an ancestor brings
        // much more content for little extra boilerplate.
        while best != body {
            let p = self.nodes[best].parent as usize;
            if score[p] >= EXPAND_KEEP * score[best] && positive[p] >= EXPAND_GAIN * positive[best]
            {
                best = p;
            } else {
                break;
            }
        }
        // Landing and product pages are many small sections, none of which
        // wins clearly: take the smallest ancestor holding enough of the text.
        let own_text =
            |i: usize| self.nodes[i].chars.saturating_sub(self.nodes[i].link_chars) as f32;
        while best != body && own_text(best) < MIN_TEXT_SHARE * own_text(body) {
            best = self.nodes[best].parent as usize;
        }
        // Forum posts, reviews and listing cards come as runs of siblings
        // with the same markup; when the winner is one of them, take them all.
        let mut x = best;
        for _ in 0..CLUSTER_CLIMB {
            if x == body {
                break;
            }
            let p = self.nodes[x].parent as usize;
            let sig = self.signature(x);
            let (mut same, mut same_positive) = (0, 0.0);
            for c in self.children(p).filter(|&c| self.signature(c) == sig) {
                same += 1;
                same_positive += positive[c];
            }
            if same >= 2 && same_positive >= CLUSTER_GAIN * positive[x] && score[p] > 0.0 {
                best = p;
                break;
            }
            x = p;
        }
        (best, score)
    }

    /// Newsletter pitches, member offers and author bios are prose too, and
    /// beside a short article they can lift the page wrapper above it. An
    /// element the markup names as content (`<article>`, `<main>`,
    /// `itemprop=articleBody`, `class="entry-content"`) holding most of the
    /// winner's weight is the article, unless it is one post or card of a run.
    fn named_content(&self, best: usize, score: &[f32]) -> Option<usize> {
        let mut named: Option<usize> = None;
        for i in best + 1..self.nodes[best].end as usize {
            let n = &self.nodes[i];
            if n.kind != Kind::Text
                && !n.removed
                && score[i] >= NAMED_SHARE * score[best]
                && named.is_none_or(|c| score[i] >= score[c])
                && self.content_named(i)
            {
                named = Some(i);
            }
        }
        named.filter(|&c| !self.in_sibling_run(c, best))
    }

    /// Whether `i` or an ancestor below `top`, named as content, repeats its
    /// markup in a sibling: one post or card of a run, not the article.
    fn in_sibling_run(&self, i: usize, top: usize) -> bool {
        let mut x = i;
        while x != top {
            let p = self.nodes[x].parent as usize;
            let sig = self.signature(x);
            if self.content_named(x)
                && sig.is_some_and(|(_, class)| !class.is_empty())
                && self
                    .children(p)
                    .any(|c| c != x && self.nodes[c].kind != Kind::Text && self.signature(c) == sig)
            {
                return true;
            }
            x = p;
        }
        false
    }

    /// The children of `p`, in document order.
    fn children(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        let end = self.nodes[p].end as usize;
        let first = (p + 1 < end).then_some(p + 1);
        std::iter::successors(first, move |&c| {
            let next = (self.nodes[c].end as usize).max(c + 1);
            (next < end).then_some(next)
        })
    }

    fn content_named(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        n.hint == HINT_CONTENT || (self.use_class && n.hint == 0 && n.class_hint == HINT_CONTENT)
    }

    /// Tag name and first class, the part of markup that repeats across posts or cards.
    fn signature(&self, i: usize) -> Markup<'_> {
        let el = self.nodes[i].el?;
        let class = el.attr("class").unwrap_or("");
        Some((
            el.name(),
            class.split_ascii_whitespace().next().unwrap_or(""),
        ))
    }

    pub(super) fn main_text(&self, blocks: &[Block], title: Option<&str>) -> String {
        if blocks.is_empty() {
            return String::new();
        }
        let (best, score) = self.choose_container(blocks);
        let (lo, hi) = (best as u32, self.nodes[best].end);
        // Link-heavy parts with a clearly negative weight inside the container
        // are menus, tag clouds or "related" lists that the class hints missed.
        let mut dropped = vec![false; self.nodes.len()];
        let c = &self.nodes[best];
        let container_density = c.link_chars as f32 / c.chars.max(1) as f32;
        let density_limit = PRUNE_LINK_DENSITY.max(2.0 * container_density);
        // A table of contents boxed with the lead paragraph must not take the
        // paragraph with it: a subtree holding prose is entered, not dropped.
        let mut prose = vec![false; self.nodes.len()];
        for b in blocks {
            if b.kind == BlockKind::Para
                && b.chars >= PROSE_CHARS
                && (b.link_chars as f32) < SIBLING_LINK_DENSITY * b.chars as f32
            {
                prose[b.owner as usize] = true;
            }
        }
        let in_flow = self.in_text_flow(best, blocks, &prose);
        for i in (best + 1..hi as usize).rev() {
            if prose[i] {
                prose[self.nodes[i].parent as usize] = true;
            }
        }
        let mut i = best + 1;
        while i < hi as usize {
            let n = &self.nodes[i];
            // Kept whole: a table's rows of links are its data, not a menu.
            if in_flow[i] {
                i = n.end as usize;
            } else if n.kind != Kind::Text
                && !prose[i]
                && score[i] < PRUNE_SCORE
                && n.link_chars as f32 > density_limit * n.chars as f32
            {
                for d in &mut dropped[i..n.end as usize] {
                    *d = true;
                }
                i = n.end as usize;
            } else {
                i += 1;
            }
        }
        for card in self.teaser_cards(best) {
            for d in &mut dropped[card..self.nodes[card].end as usize] {
                *d = true;
            }
        }
        let mut out = String::new();
        let mut prev: Option<BlockKind> = None;
        let mut take = vec![false; blocks.len()];
        for (t, b) in take.iter_mut().zip(blocks) {
            *t = b.owner >= lo
                && b.owner < hi
                && !dropped[b.owner as usize]
                && !b.is_teaser()
                && !b.is_filing();
        }
        self.take_siblings(best, blocks, &mut take);
        let chosen: Vec<&Block> = blocks
            .iter()
            .zip(&take)
            .filter(|(_, t)| **t)
            .map(|(b, _)| b)
            .collect();
        // The title heading is kept as `title`, not in the text; short lines
        // above it (breadcrumbs, category, date) are page furniture too.
        let heading = title.and_then(|t| {
            chosen
                .iter()
                .position(|b| b.kind == BlockKind::Heading(1) && same_text(&b.text, t))
        });
        let skip = match heading {
            Some(k) => {
                let before: u32 = chosen[..k].iter().map(|b| b.chars).sum();
                let total: u32 = chosen.iter().map(|b| b.chars).sum();
                if before <= MAX_ABOVE_TITLE && before * 5 <= total {
                    k + 1
                } else {
                    0
                }
            }
            None => 0,
        };
        let mut seen_lines: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut current_quote: Option<(usize, bool)> = None;
        for (idx, b) in chosen.iter().enumerate().skip(skip) {
            if Some(idx) == heading {
                continue;
            }
            // A quote of an earlier post repeats its text: keep the original
            // only, and when nothing of the quote is new, drop its
            // attribution line ("X said:") with it.
            let quote = self.quote_of(b.owner as usize, best);
            if quote.is_some() && quote != current_quote.map(|(q, _)| q) {
                let substantial: Vec<String> = chosen[idx..]
                    .iter()
                    .take_while(|c| self.quote_of(c.owner as usize, best) == quote)
                    .flat_map(|c| c.text.lines())
                    .filter(|l| l.split_whitespace().nth(QUOTE_MIN_WORDS - 1).is_some())
                    .map(normalize_space)
                    .collect();
                let repeated =
                    !substantial.is_empty() && substantial.iter().all(|l| seen_lines.contains(l));
                current_quote = quote.map(|q| (q, repeated));
            }
            if quote.is_some() && current_quote.is_some_and(|(_, repeated)| repeated) {
                continue;
            }
            let text = if quote.is_some() {
                let fresh: Vec<&str> = b
                    .text
                    .lines()
                    .filter(|l| !seen_lines.contains(&normalize_space(l)))
                    .collect();
                if fresh.iter().all(|l| l.trim().is_empty()) {
                    continue;
                }
                std::borrow::Cow::Owned(fresh.join("\n"))
            } else {
                std::borrow::Cow::Borrowed(b.text.as_str())
            };
            for l in text.lines() {
                if l.split_whitespace().nth(QUOTE_MIN_WORDS - 1).is_some() {
                    seen_lines.insert(normalize_space(l));
                }
            }
            if let Some(p) = prev {
                let tight = matches!(
                    (p, b.kind),
                    (BlockKind::ListItem, BlockKind::ListItem) | (BlockKind::Cell, BlockKind::Cell)
                );
                out.push_str(if tight { "\n" } else { "\n\n" });
            }
            out.push_str(&text);
            prev = Some(b.kind);
        }
        out
    }

    /// The lists and tables inside the container that belong to the text's flow, which
    /// pruning keeps even when they are mostly links (steps, further reading, a comparison
    /// whose first column links to the products): one between two prose paragraphs of the
    /// same element, or right after a paragraph that announces it with a colon. `prose` marks
    /// the blocks' owners that are prose.
    fn in_text_flow(&self, best: usize, blocks: &[Block], prose: &[bool]) -> Vec<bool> {
        let end = self.nodes[best].end as usize;
        let mut in_flow = vec![false; self.nodes.len()];
        // The first and the last prose paragraph each element holds as a child.
        let mut prose_span = vec![(usize::MAX, 0); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate().take(end).skip(best + 1) {
            if prose[i] && n.kind == Kind::Para {
                let span = &mut prose_span[n.parent as usize];
                span.0 = span.0.min(i);
                span.1 = i;
            }
        }
        for (i, n) in self.nodes.iter().enumerate().take(end).skip(best + 1) {
            let (first, last) = prose_span[n.parent as usize];
            in_flow[i] = matches!(n.kind, Kind::List | Kind::Table) && first < i && i < last;
        }
        for b in blocks {
            let o = b.owner as usize;
            if b.kind != BlockKind::Para
                || o <= best
                || o >= end
                || !b.text.trim_end().ends_with(':')
            {
                continue;
            }
            let parent_end = self.nodes[self.nodes[o].parent as usize].end as usize;
            let mut next = self.nodes[o].end as usize;
            while next < parent_end
                && self.nodes[next].kind == Kind::Text
                && self.nodes[next].chars == 0
            {
                next = self.nodes[next].end as usize;
            }
            if next < parent_end && matches!(self.nodes[next].kind, Kind::List | Kind::Table) {
                in_flow[next] = true;
            }
        }
        in_flow
    }

    /// Readability's sibling step: a paragraph of the article that sits
    /// beside the container rather than in it (when one long paragraph won on
    /// its own, or the closing ones follow an inline widget) is taken when it
    /// reads like prose. Only paragraphs: sibling boxes with good scores are
    /// as often author bios and comment forms as article text.
    fn take_siblings(&self, best: usize, blocks: &[Block], take: &mut [bool]) {
        if best == self.body as usize {
            return;
        }
        let p = self.nodes[best].parent as usize;
        let end = self.nodes[p].end as usize;
        let best_end = self.nodes[best].end as usize;
        // The blocks of one sibling's subtree are consecutive: one pass finds
        // each paragraph sibling's run of blocks.
        let mut k = 0;
        while k < blocks.len() {
            let o = blocks[k].owner as usize;
            if o <= p || o >= end || (best..best_end).contains(&o) {
                k += 1;
                continue;
            }
            let mut c = o;
            while c > p && self.nodes[c].parent as usize != p {
                c = self.nodes[c].parent as usize;
            }
            if c <= p || c >= end || c == best || self.nodes[c].kind != Kind::Para {
                k += 1;
                continue;
            }
            let c_end = self.nodes[c].end as usize;
            let run = blocks[k..]
                .iter()
                .take_while(|b| (c..c_end).contains(&(b.owner as usize)))
                .count();
            let n = &self.nodes[c];
            let prose = if n.chars >= SIBLING_PARA_CHARS {
                (n.link_chars as f32) < SIBLING_LINK_DENSITY * n.chars as f32
            } else {
                n.link_chars == 0
                    && blocks[k + run - 1]
                        .text
                        .trim_end()
                        .ends_with(['.', '!', '?'])
            };
            if prose {
                take[k..k + run].iter_mut().for_each(|t| *t = true);
            }
            k += run;
        }
    }

    /// Cards of other posts inside the container ("related posts", "latest from the blog"):
    /// runs of at least [`CARD_RUN`] siblings of one markup (tag and first class), each a
    /// teaser card ([`Page::is_teaser_card`]), all of them together a small share of the
    /// container: where they are much of it, the page is a list of posts and they are its
    /// content.
    fn teaser_cards(&self, best: usize) -> Vec<usize> {
        let container = &self.nodes[best];
        let mut cards = Vec::new();
        let mut groups: Vec<(Markup<'_>, Vec<(usize, bool)>)> = Vec::new();
        for p in best..container.end as usize {
            if self.nodes[p].kind == Kind::Text {
                continue;
            }
            let children: Vec<(usize, bool)> = self
                .children(p)
                .filter(|&c| self.nodes[c].kind != Kind::Text && self.nodes[c].chars > 0)
                .map(|c| (c, self.is_teaser_card(c)))
                .collect();
            // The markup is asked only where there could be a run.
            if children.iter().filter(|(_, card)| *card).count() < CARD_RUN {
                continue;
            }
            groups.clear();
            for &(c, card) in &children {
                let sig = self.signature(c);
                match groups.iter_mut().find(|(s, _)| *s == sig) {
                    Some((_, members)) => members.push((c, card)),
                    None => groups.push((sig, vec![(c, card)])),
                }
            }
            for (_, members) in groups.drain(..) {
                // A run of cards is all of its markup's siblings: a forum's posts are of
                // one markup, and only a few of them are short and dated under a linked
                // title.
                if members.len() >= CARD_RUN && members.iter().all(|(_, card)| *card) {
                    cards.extend(members.into_iter().map(|(c, _)| c));
                }
            }
        }
        let chars: u32 = cards.iter().map(|&c| self.nodes[c].chars).sum();
        if (chars as f32) < CARDS_SHARE * container.chars as f32 {
            cards
        } else {
            Vec::new()
        }
    }

    /// A short box headed by a heading that is one link, dated: a card of another post.
    /// (Undated, such boxes are a service's features or a manual's sections with their
    /// anchors.)
    fn is_teaser_card(&self, c: usize) -> bool {
        let n = &self.nodes[c];
        if n.kind == Kind::Text || n.chars == 0 || n.chars > CARD_CHARS || n.link_chars == 0 {
            return false;
        }
        let titled = (c + 1..n.end as usize)
            .find(|&d| matches!(self.nodes[d].kind, Kind::Heading(_)))
            .is_some_and(|h| {
                let h = &self.nodes[h];
                h.chars > 0 && h.link_chars as f32 >= CARD_TITLE_LINK_SHARE * h.chars as f32
            });
        titled && self.has_date(c)
    }

    /// Whether the text of element `c` holds a date: a year from 1900 on beside a month's
    /// name ("Feb 26, 2026", "11 March, 2026", "21 Nov 2025") or a date in ISO form.
    fn has_date(&self, c: usize) -> bool {
        const MONTHS: &[&str] = &[
            "jan",
            "feb",
            "mar",
            "apr",
            "may",
            "jun",
            "jul",
            "aug",
            "sep",
            "sept",
            "oct",
            "nov",
            "dec",
            "january",
            "february",
            "march",
            "april",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ];
        let year = |w: &str| {
            w.len() == 4
                && w.bytes().all(|b| b.is_ascii_digit())
                && (w.starts_with("19") || w.starts_with("20"))
        };
        let iso = |w: &str| {
            let mut parts = w.split('-');
            parts.next().is_some_and(year)
                && parts.next().is_some_and(|m| m.len() == 2)
                && parts.next().is_some_and(|d| d.len() == 2)
        };
        let (mut month, mut dated) = (false, false);
        for t in (c..self.nodes[c].end as usize).filter(|&t| self.nodes[t].kind == Kind::Text) {
            for w in self.nodes[t]
                .text
                .split(|ch: char| !(ch.is_alphanumeric() || ch == '-'))
            {
                month |= MONTHS.iter().any(|m| m.eq_ignore_ascii_case(w));
                dated |= year(w);
                if iso(w) {
                    return true;
                }
            }
        }
        month && dated
    }

    /// The outermost `<blockquote>` below the container that holds a block.
    fn quote_of(&self, owner: usize, container: usize) -> Option<usize> {
        let mut quote = None;
        let mut i = owner;
        while i > container {
            if self.nodes[i].el.is_some_and(|el| el.name() == "blockquote") {
                quote = Some(i);
            }
            i = self.nodes[i].parent as usize;
        }
        quote
    }
}

fn same_text(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let (a, b) = (norm(a), norm(b));
    !a.is_empty() && (a == b || b.starts_with(&a) || a.starts_with(&b))
}
