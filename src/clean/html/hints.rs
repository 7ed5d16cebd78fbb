//! What the markup says about itself: tag, ARIA role, microdata, class/id
//! words and `data-nosnippet` scored as boilerplate or content hints, the
//! sign-up boxes around contact fields, and the pass that removes hinted
//! subtrees from the arena.

use super::arena::{Kind, Page};

/// Hint values: a hard hint removes the subtree, a weak one only if it is small.
pub(super) const HINT_HARD: i8 = -3;
pub(super) const HINT_WEAK: i8 = -2;
/// Layout names ("widget", "header"): weak, and void inside named content.
pub(super) const HINT_LAYOUT: i8 = -1;
pub(super) const HINT_COMMENTS: i8 = -4;
/// Text that must remain outside a comments section for it to be removed.
const MIN_TEXT_BESIDE_COMMENTS: u32 = 1000;
pub(super) const HINT_CONTENT: i8 = 1;
/// The largest box around a contact field that is still a sign-up box (its heading, its
/// plea and its small print), in non-whitespace characters; beyond it is the page around.
const SIGNUP_BOX_CHARS: u32 = 400;
/// Nodes a `<header>` around a heading alone may hold (the heading, its text, an anchor, a
/// span or two); a larger one is a page's or a post's header, and the cap keeps nested
/// headers from being walked over and over.
const HEADING_HEADER_NODES: usize = 32;
/// A hard-hinted element holding more of the page than this is a page
/// wrapper with an unlucky class name, not a comments section or sidebar.
const HARD_WRAPPER_SHARE: f32 = 0.6;

const NEG_WORDS: &[&str] = &[
    "nav",
    "navbar",
    "navigation",
    "menu",
    "menubar",
    "submenu",
    "megamenu",
    "footer",
    "masthead",
    "breadcrumb",
    "breadcrumbs",
    "crumbs",
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "share",
    "sharing",
    "sharebar",
    "social",
    "newsletter",
    "subscribe",
    "subscription",
    "signup",
    "ad",
    "ads",
    "advert",
    "advertisement",
    "adsense",
    "sponsor",
    "sponsored",
    "promo",
    "popup",
    "dialog",
    "offcanvas",
    "flyout",
    "overlay",
    "lightbox",
    "userextras",
    "userinfo",
    "usertitle",
    "userbanner",
    "expandlink",
    "vote",
    "votes",
    "voting",
    "votecell",
    "nojsonly",
    "browserwarning",
    "jswarning",
    "signature",
    "badgecount",
    "tooltip",
    "modal",
    "sidebar",
    "side",
    "readmore",
    "button",
    "buttons",
    "related",
    "recommended",
    "recommendations",
    "pagination",
    "pager",
    "toolbar",
    "caption",
    "figcaption",
    "outbrain",
    "taboola",
    "tagcloud",
    "login",
    "signin",
    "legal",
    "disclaimer",
    "copyright",
];

/// Reader comments: removed even when they fill most of the page, as long as
/// enough other text remains (on forums they are all there is). Pingbacks and trackbacks are
/// the notices a blog lists with its comments (WordPress's "entry-pings", "pingback").
const COMMENT_WORDS: &[&str] = &[
    "comments",
    "commentlist",
    "disqus",
    "respond",
    "pings",
    "pingback",
    "pingbacks",
    "trackback",
    "trackbacks",
];

const WEAK_WORDS: &[&str] = &["tags", "byline", "author", "rating", "print"];

/// Page-builder layout names: boilerplate around the content, but inside
/// an element named as content they are just its sections.
const LAYOUT_WORDS: &[&str] = &["widget", "widgets", "header", "banner"];

const POS_WORDS: &[&str] = &[
    "content",
    "article",
    "articlebody",
    "post",
    "entry",
    "main",
    "body",
    "story",
    "text",
    "blog",
    "prose",
    "markdown",
    "thread",
    "topic",
    "message",
    "richtext",
    // Page builders wrap each of the text's headings in a widget of its own
    // ("elementor-widget-heading"), beside the widgets holding its paragraphs.
    "heading",
];

/// Scores one class name or id. Compound names are judged by their last
/// known word, as in English compounds: "post-footer" is a footer, while
/// "widget-theme-post-content" is content.
pub(super) fn name_hint(name: &str) -> i8 {
    let lower = name.to_ascii_lowercase();
    // Flexbox utility classes (Bootstrap's "justify-content-start") name a
    // CSS property, not a part of the page: on an author box or a sidebar
    // they must not make it content, which would outrank its real name.
    if ["justify-content", "align-content", "place-content"]
        .iter()
        .any(|u| lower.starts_with(u))
    {
        return 0;
    }
    // Profile boxes beside forum posts (join date, post count, badges).
    if lower.contains("user-info") || lower.contains("user-details") {
        return HINT_HARD;
    }
    let mut last_neg: Option<usize> = None;
    let mut last_pos: Option<usize> = None;
    let mut weak = false;
    let mut layout = false;
    let mut hard = false;
    let mut comments = false;
    let mut prev = "";
    let mut owning = false;
    for (i, w) in lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let comment_list =
            matches!(prev, "comment" | "comments") && matches!(w, "list" | "section" | "area");
        // "post-with-sidebar", "has-nav", "anchorWithStickyNavbar", "no-footer": a wrapper
        // around the part and more (or beside it, or without it), neither the part nor the
        // content alone.
        owning |= matches!(prev, "has" | "with" | "no" | "without");
        // "map-and-related": a wrapper of the part and something else; "nav-and-search" is
        // still the part it names first.
        let beside = prev == "and" && last_neg.is_none_or(|n| n + 2 != i);
        if (owning || beside) && is_part_word(w) {
            return 0;
        }
        prev = w;
        if COMMENT_WORDS.contains(&w) || comment_list {
            comments = true;
            last_neg = Some(i);
        } else if WEAK_WORDS.contains(&w) {
            weak = true;
            last_neg = Some(i);
        } else if LAYOUT_WORDS.contains(&w) {
            layout = true;
            last_neg = Some(i);
        } else if is_part_word(w) {
            hard = true;
            last_neg = Some(i);
        } else if POS_WORDS.contains(&w) {
            last_pos = Some(i);
        }
    }
    match (last_neg, last_pos) {
        (Some(n), Some(p)) if p > n => HINT_CONTENT,
        (Some(_), _) if comments => HINT_COMMENTS,
        (Some(_), _) if weak => HINT_WEAK,
        (Some(_), _) if layout && !hard => HINT_LAYOUT,
        (Some(_), _) => HINT_HARD,
        (None, Some(_)) => HINT_CONTENT,
        (None, None) => 0,
    }
}

/// A word naming a part of the page around the content (a hard hint).
fn is_part_word(w: &str) -> bool {
    NEG_WORDS.contains(&w)
        || w.starts_with("cookie")
        || w.starts_with("newsletter")
        || w.starts_with("breadcrumb")
        || w.starts_with("sidebar")
        || w.starts_with("share")
        || w.starts_with("social")
        || w.starts_with("advert")
        || w.starts_with("footer")
        || w.starts_with("navbar")
        || w.starts_with("related")
        // A plea to subscribe, not a subscriber's article ("subscriptionPleaContainer").
        || w.starts_with("subscription")
        || (w.starts_with("subscribe") && !w.starts_with("subscriber"))
}

/// Hint from the tag name, ARIA role and microdata: structural and reliable.
pub(super) fn element_hint(name: &str, el: &scraper::node::Element) -> i8 {
    match name {
        "nav" | "aside" | "footer" | "menu" | "figcaption" | "head" => return HINT_HARD,
        // Forms hold search boxes, buy boxes and sign-up widgets; a form
        // around the whole page is caught by the wrapper-share check (a low share, as forums wrap posts in moderation forms).
        "form" | "fieldset" => return HINT_WEAK,
        "header" => return HINT_WEAK,
        "article" | "main" => return HINT_CONTENT,
        _ => {}
    }
    if let Some(role) = el.attr("role") {
        match role.trim().to_ascii_lowercase().as_str() {
            "navigation" | "banner" | "contentinfo" | "complementary" | "menu" | "menubar"
            | "search" | "dialog" | "alertdialog" | "alert" | "tablist" => return HINT_HARD,
            "main" | "article" => return HINT_CONTENT,
            _ => {}
        }
    }
    if let Some(prop) = el.attr("itemprop") {
        if prop.eq_ignore_ascii_case("articlebody") || prop.eq_ignore_ascii_case("text") {
            return HINT_CONTENT;
        }
    }
    0
}

/// Hint from class names and id: a content-like name anywhere wins, because
/// page builders put generic names ("widget", "section") on every element.
pub(super) fn class_hint(name: &str, el: &scraper::node::Element) -> i8 {
    if matches!(name, "html" | "body") {
        return 0;
    }
    // A heading's id is the anchor a table of contents links to, made from
    // its own words ("should-i-get-certified-in-social-media"), not a name
    // for a part of the page.
    let heading = matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6");
    let hint = names_hint(el, !heading);
    // The publisher's own mark for text that must not stand for the page in a search result
    // (author boxes, cards of other articles, consent banners): a name like the others, and
    // doubted with them when trusting names leaves the page empty.
    // (Compared by name: `attr` would intern this name, which is not a static atom, per element.)
    if hint != HINT_CONTENT && el.attrs().any(|(name, _)| name == "data-nosnippet") {
        return HINT_HARD;
    }
    hint
}

/// Hint from the class names, and from the id when `with_id`.
pub(super) fn names_hint(el: &scraper::node::Element, with_id: bool) -> i8 {
    let mut hint = 0i8;
    let names = el
        .attr("class")
        .into_iter()
        .flat_map(|c| c.split_ascii_whitespace())
        .chain(el.attr("id").filter(|_| with_id));
    for n in names {
        let h = name_hint(n);
        if h == HINT_CONTENT {
            return HINT_CONTENT;
        }
        hint = hint.min(h);
    }
    hint
}

impl<'a> Page<'a> {
    /// Marks the subtrees the hints name as boilerplate. Without `use_class` only tags, roles
    /// and microdata count; the elements named as `spared` keep no hint from their names.
    pub(super) fn mark_boilerplate(&mut self, use_class: bool, spared: Option<Spared<'_>>) {
        // Raw sizes decide whether a hinted element is really a page wrapper
        // (e.g. `<div class="has-sidebar">` around everything).
        self.use_class = use_class;
        for n in self.nodes.iter_mut() {
            n.removed = false;
        }
        self.compute_sizes();
        for n in self.nodes.iter_mut() {
            n.raw_chars = n.chars;
            n.raw_text_chars = n.chars.saturating_sub(n.link_chars);
        }
        let body_text = self.nodes[self.body as usize].raw_text_chars;
        let body_chars = self.nodes[self.body as usize].raw_chars.max(1);
        let signup_boxes = self.signup_boxes();
        let author_boxes = self.author_boxes();
        let mut in_content = vec![false; self.nodes.len()];
        for i in 1..self.nodes.len() {
            let parent = self.nodes[i].parent as usize;
            if self.nodes[parent].removed {
                self.nodes[i].removed = true;
                continue;
            }
            let n = &self.nodes[i];
            let share = n.raw_chars as f32 / body_chars as f32;
            let hint = match (use_class, n.hint) {
                // Known by its field, not by a name: no retry doubts it.
                _ if signup_boxes.contains(&(i as u32)) => HINT_HARD,
                _ if author_boxes.contains(&(i as u32)) => HINT_HARD,
                (true, 0) if spared.is_some() && spared == n.el.map(Spared::of) => 0,
                (true, 0) => n.class_hint,
                (false, HINT_WEAK) => 0,
                (true, HINT_WEAK) if self.is_heading_header(i) => 0,
                (_, h) => h,
            };
            in_content[i] = in_content[parent] || (hint == HINT_CONTENT && share < 0.9);
            let remove = match hint {
                HINT_HARD => share < HARD_WRAPPER_SHARE,
                HINT_WEAK => share < 0.3,
                HINT_LAYOUT => share < 0.3 && !in_content[parent],
                HINT_COMMENTS => {
                    // Menus beside a forum's posts are links, an article's text is not.
                    let beside = body_text - n.raw_text_chars.min(body_text);
                    share < HARD_WRAPPER_SHARE
                        || (beside >= MIN_TEXT_BESIDE_COMMENTS && beside * 6 >= n.raw_text_chars)
                }
                _ => false,
            };
            if remove {
                self.nodes[i].removed = true;
            }
        }
    }

    /// Whether element `i` is a `<header>` around a section's heading, with no other text and
    /// no link: what a page builder wraps each heading of an article in ("1. Myth: …"),
    /// where a page's header holds a logo link, a menu or a byline.
    fn is_heading_header(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        if n.raw_chars == 0
            || n.raw_text_chars < n.raw_chars
            || n.end as usize - i > HEADING_HEADER_NODES
            || n.el.is_none_or(|e| e.name() != "header")
        {
            return false;
        }
        let mut in_headings = 0;
        let mut j = i + 1;
        while j < n.end as usize {
            let d = &self.nodes[j];
            if matches!(d.kind, Kind::Heading(_)) {
                in_headings += d.raw_chars;
                j = d.end as usize;
            } else {
                j += 1;
            }
        }
        in_headings == n.raw_chars
    }

    /// The largest element around each contact field that holds at most `SIGNUP_BOX_CHARS`,
    /// below an element the markup makes the content (a short `<article>` is not a sign-up
    /// box; content class names are too loose here: "section-content", "lightbox-content").
    fn signup_boxes(&self) -> Vec<u32> {
        let mut boxes = Vec::new();
        for &field in &self.contact_fields {
            let mut i = field;
            let field_holder = &self.nodes[i as usize];
            if i == 0
                || field_holder.raw_chars > SIGNUP_BOX_CHARS
                || field_holder.hint == HINT_CONTENT
            {
                continue;
            }
            loop {
                let p = self.nodes[i as usize].parent;
                let parent = &self.nodes[p as usize];
                if p == 0
                    || p == self.body
                    || parent.hint == HINT_CONTENT
                    || parent.raw_chars > SIGNUP_BOX_CHARS
                {
                    break;
                }
                i = p;
            }
            if i != self.body {
                boxes.push(i);
            }
        }
        boxes
    }

    /// The elements that the page's microdata makes its author with a description of them
    /// (`itemprop="author"` around `itemprop="description"`): the box of the writer's
    /// biography that closes a post. An author without a description is a byline or a forum
    /// poster's name, which forum references keep.
    fn author_boxes(&self) -> Vec<u32> {
        let has_prop = |i: usize, value: &str| {
            self.nodes[i]
                .el
                .and_then(|e| e.attr("itemprop"))
                .is_some_and(|p| p.trim().eq_ignore_ascii_case(value))
        };
        (1..self.nodes.len())
            .filter(|&i| has_prop(i, "author"))
            .filter(|&i| (i + 1..self.nodes[i].end as usize).any(|d| has_prop(d, "description")))
            .map(|i| i as u32)
            .collect()
    }

    /// The class and id of hard hint that removed the most text, over every element they
    /// name: when a page is left almost empty, they are a layout name on the article's wrapper
    /// ("with-sidebar-layout") or on each of its parts.
    pub(super) fn costliest_class_name(&self) -> Option<Spared<'a>> {
        let mut removed: std::collections::HashMap<Spared<'a>, u32> = Default::default();
        for n in &self.nodes[1..] {
            // A comments name on a forum's posts is doubted with all the others: their
            // user names and dates are weak names there, and part of the posts.
            if n.removed
                && !self.nodes[n.parent as usize].removed
                && n.hint == 0
                && n.class_hint == HINT_HARD
            {
                if let Some(el) = n.el {
                    *removed.entry(Spared::of(el)).or_default() += n.raw_text_chars;
                }
            }
        }
        removed
            .into_iter()
            .max_by_key(|&(name, chars)| (chars, name))
            .map(|(name, _)| name)
    }
}

/// The class attribute and id of the elements whose names a retry does not trust.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Spared<'a> {
    class: Option<&'a str>,
    id: Option<&'a str>,
}

impl<'a> Spared<'a> {
    fn of(el: &'a scraper::node::Element) -> Self {
        Spared {
            class: el.attr("class"),
            id: el.attr("id"),
        }
    }
}
