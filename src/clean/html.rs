//! Main-content extraction ("boilerplate removal") from HTML pages.
//!
//! The page is parsed with `scraper` (html5ever) and copied into a flat
//! pre-order arena, so every later pass is a loop over a `Vec` instead of a
//! recursive walk: deeply nested hostile input cannot overflow the stack.
//! Obvious non-content (scripts, navigation, footers, cookie banners, share
//! widgets, comments, ...) is removed by tag, role and class/id hints before
//! any text is taken; the remaining text is cut into blocks at block-element
//! boundaries, each block gets a weight from its length and link density, and
//! the element whose subtree has the largest total weight is the first guess
//! for the main content container. The guess is then widened when a parent
//! adds much more content (sections split by a table of contents), when the
//! page's text is spread over many small sections (landing and product pages)
//! and when the winner is one of a run of same-markup siblings (forum posts,
//! cards). Inside the container, link-heavy subtrees are pruned.
//!
//! Works on the DOM only: no per-site rules, no network, no global state.

use html5ever::tendril::TendrilSink;
use scraper::{Html, Node};

/// Main text and title extracted from one HTML page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Page title (og:title, `<title>` or the first `<h1>`), without a site-name suffix.
    pub title: Option<String>,
    /// Main text: paragraphs separated by a blank line, headings and list items on their own lines.
    pub text: String,
}

/// Larger inputs are cut: parsing time and memory grow with the input, and no
/// real article needs more.
const MAX_INPUT_BYTES: usize = 8 << 20;

/// Extracts the author's main text: paragraphs separated by a blank line, headings and list items on their own lines.
pub fn extract(html: &str, url: Option<&str>) -> Extracted {
    let html = truncate_at_char_boundary(html, MAX_INPUT_BYTES);
    let html = limit_nesting(html, MAX_DEPTH);
    let doc = parse(&html);
    let mut page = Page::build(&doc);
    page.mark_boilerplate(true);
    page.compute_sizes();
    let mut blocks = page.blocks();
    let title = page.title(&blocks, url);
    let mut text = page.main_text(&blocks, title.as_deref());
    // Class names and weak tags (form, header) are only hints: when trusting
    // them leaves almost nothing, content was named like boilerplate, so
    // retry without them.
    if count_chars(&text) < 200 {
        page.mark_boilerplate(false);
        page.compute_sizes();
        blocks = page.blocks();
        let retry = page.main_text(&blocks, title.as_deref());
        if count_chars(&retry) > 2 * count_chars(&text) {
            text = retry;
        }
    }
    // Pages rendered by scripts may carry their text only in JSON-LD
    // (`articleBody`) or, failing that, in the meta description.
    let chars = count_chars(&text);
    if let Some(body) = page.ld_body.as_deref() {
        let body = paragraphs(body);
        if count_chars(&body) > 2 * chars.max(100) {
            return Extracted { title, text: body };
        }
    }
    if chars < 100 {
        if let Some(d) = page.description.as_deref() {
            let d = normalize_space(d);
            if count_chars(&d) > chars.max(50) {
                text = d;
            }
        }
    }
    let text = drop_repeated_runs(drop_furniture_lines(text));
    Extracted { title, text }
}

/// A line that is only a counter ("44 reactions", "7 min read", "1.2k views"):
/// engagement and reading-time widgets, not text.
fn is_counter_line(line: &str) -> bool {
    const UNITS: &[&str] = &[
        "comment",
        "comments",
        "reaction",
        "reactions",
        "like",
        "likes",
        "min read",
        "minute read",
        "minutes read",
        "view",
        "views",
        "reply",
        "replies",
        "share",
        "shares",
        "vote",
        "votes",
        "answer",
        "answers",
    ];
    let line = line.trim();
    let num_end = line
        .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .unwrap_or(line.len());
    if num_end == 0 || !line.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = line[num_end..].trim_start();
    let rest = rest
        .strip_prefix(['k', 'K', 'm', 'M'])
        .filter(|r| r.starts_with(char::is_whitespace))
        .unwrap_or(rest);
    if rest.len() == line[num_end..].len() {
        // No space between the number and the unit: "7min" is not a counter line here.
        return false;
    }
    let unit = rest.trim();
    unit.len() <= 14 && UNITS.iter().any(|u| u.eq_ignore_ascii_case(unit))
}

/// A line that is only a control's label ("Read more", "Sponsored",
/// "Permalink"): buttons and links of the page's furniture, not text.
fn is_control_line(line: &str) -> bool {
    const LABELS: &[&str] = &[
        "read more",
        "continue reading",
        "read full article",
        "sponsored",
        "advertisement",
        "permalink",
        "loading",
        "embed",
        "reply with quote",
        "buy now",
        "book now",
        "shop now",
        "add to cart",
        "get a quote",
        "apply now",
        "subscribe",
        "see all",
        "share this post",
        "like this",
        "like loading",
    ];
    let label = line.trim().trim_end_matches(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '.' | '…' | '»' | '›' | '>' | ':' | '\u{2190}'..='\u{21ff}'
            )
    });
    label.len() <= 20 && LABELS.iter().any(|l| l.eq_ignore_ascii_case(label))
}

/// A forum poster's statistics ("Posts: 7", "Joined: Sep 2019"), printed
/// beside every post.
fn is_member_stat_line(line: &str) -> bool {
    const KEYS: &[&str] = &[
        "posts",
        "messages",
        "joined",
        "reputation",
        "reaction score",
        "likes received",
        "member since",
        "threads",
    ];
    let Some((key, value)) = line.trim().split_once(':') else {
        return false;
    };
    let value = value.trim();
    !value.is_empty()
        && value.len() <= 20
        && value.split_whitespace().count() <= 3
        && value.chars().any(|c| c.is_ascii_digit())
        && KEYS.iter().any(|k| k.eq_ignore_ascii_case(key.trim()))
}

/// Template placeholder text ("Lorem ipsum ..."), left in unused page
/// templates: never anybody's text.
fn is_placeholder_line(line: &str) -> bool {
    let start = line.trim_start();
    start.len() >= 11 && start.as_bytes()[..11].eq_ignore_ascii_case(b"lorem ipsum")
}

fn is_furniture_line(line: &str) -> bool {
    is_counter_line(line)
        || is_control_line(line)
        || is_member_stat_line(line)
        || is_placeholder_line(line)
}

/// Drops the lines that are page furniture (counters, control labels, member
/// statistics, placeholders), and paragraphs left empty by that.
fn drop_furniture_lines(text: String) -> String {
    if !text.lines().any(is_furniture_line) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for para in text.split("\n\n") {
        let mut kept = String::new();
        for line in para.split('\n').filter(|l| !is_furniture_line(l)) {
            if !kept.is_empty() {
                kept.push('\n');
            }
            kept.push_str(line);
        }
        if !kept.trim().is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&kept);
        }
    }
    out
}

/// Consecutive paragraphs repeated verbatim (carousels and tabs rendered
/// twice, mobile and desktop copies of a block): a run of `RUN` paragraphs
/// seen before, with at least `RUN_MIN_WORDS` words, is dropped. Single
/// repeated lines are kept, as listings repeat them legitimately.
fn drop_repeated_runs(text: String) -> String {
    const RUN: usize = 3;
    const RUN_MIN_WORDS: usize = 10;
    let paras: Vec<&str> = text.split("\n\n").collect();
    if paras.len() < 2 * RUN {
        return text;
    }
    let keys: Vec<&str> = paras.iter().map(|p| p.trim()).collect();
    let mut drop = vec![false; paras.len()];
    let mut first: std::collections::HashMap<&[&str], usize> = std::collections::HashMap::new();
    for i in 0..=keys.len() - RUN {
        let run = &keys[i..i + RUN];
        match first.get(run) {
            Some(&j)
                if j + RUN <= i
                    && run
                        .iter()
                        .map(|p| p.split_whitespace().count())
                        .sum::<usize>()
                        >= RUN_MIN_WORDS =>
            {
                drop[i..i + RUN].iter_mut().for_each(|d| *d = true);
            }
            Some(_) => {}
            None => {
                first.insert(run, i);
            }
        }
    }
    if !drop.contains(&true) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for (p, _) in paras.iter().zip(&drop).filter(|(_, d)| !**d) {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(p);
    }
    out
}

/// Turns plain text with newlines into paragraphs separated by blank lines.
fn paragraphs(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        let line = normalize_space(line);
        if !line.is_empty() {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&line);
        }
    }
    out
}

/// Decoded JSON string values following each occurrence of `key` (quoted),
/// found by a linear scan without parsing the whole document.
fn json_strings_for_key(json: &str, key: &str) -> Vec<String> {
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

/// Parses with scripting off, so `<noscript>` content (often the only
/// server-rendered copy of a JS app's text) becomes a normal subtree.
fn parse(html: &str) -> Html {
    let opts = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            scripting_enabled: false,
            ..Default::default()
        },
        ..Default::default()
    };
    html5ever::driver::parse_document(Html::new_document(), opts).one(html)
}

/// html5ever's tree builder scans the stack of open elements for many tags,
/// so time grows with the square of the nesting depth (100k nested `<div>`s
/// take minutes); real pages stay far below this depth.
const MAX_DEPTH: usize = 400;

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
fn limit_nesting(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
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

fn truncate_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// How an element affects text layout and scoring.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Text,
    Inline,
    Link,
    Br,
    Block,
    Para,
    Heading(u8),
    ListItem,
    List,
    Cell,
    Row,
    Table,
    Pre,
}

/// Class of a block of text for the output layout.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum BlockKind {
    Para,
    Heading(u8),
    ListItem,
    Cell,
    Pre,
}

struct ANode<'a> {
    parent: u32,
    /// Exclusive end of this node's subtree in pre-order.
    end: u32,
    kind: Kind,
    text: &'a str,
    el: Option<&'a scraper::node::Element>,
    in_link: bool,
    /// Tag/role hint: negative for boilerplate, positive for content.
    hint: i8,
    /// Class/id hint, same scale.
    class_hint: i8,
    removed: bool,
    /// Non-whitespace characters of text below, before removal.
    raw_chars: u32,
    /// The same, outside links only.
    raw_text_chars: u32,
    chars: u32,
    link_chars: u32,
    links: u32,
}

struct Block {
    text: String,
    owner: u32,
    kind: BlockKind,
    chars: u32,
    link_chars: u32,
    long_link_chars: u32,
}

/// Block weight: non-link characters count for the block, characters in
/// short (menu-like) links against it, and every block pays a fixed cost so
/// that runs of tiny fragments (menus, button rows, meta lines) score low.
const SHORT_LINK_PENALTY: f32 = 1.0;
const BLOCK_COST: f32 = 25.0;
/// Share of the page's non-link text the chosen container must hold.
const MIN_TEXT_SHARE: f32 = 0.45;
/// A hard-hinted element holding more of the page than this is a page
/// wrapper with an unlucky class name, not a comments section or sidebar.
const HARD_WRAPPER_SHARE: f32 = 0.6;
/// How far up to look for a run of same-markup siblings, and how much more
/// content the run must hold than the winner alone.
const CLUSTER_CLIMB: usize = 7;
const CLUSTER_GAIN: f32 = 1.5;
/// Climb to the parent while it keeps this share of the score and adds this
/// factor of positive weight.
const EXPAND_KEEP: f32 = 0.6;
const EXPAND_GAIN: f32 = 1.3;
const PRUNE_SCORE: f32 = -80.0;
const PRUNE_LINK_DENSITY: f32 = 0.4;
/// Lines at least this long that a quote repeats are dropped from it.
const QUOTE_MIN_WORDS: usize = 5;
/// Characters above the title heading that may be dropped as page furniture.
const MAX_ABOVE_TITLE: u32 = 400;

/// Links with at least this many characters read like titles, not menu entries.
const LONG_LINK: u32 = 30;

struct Page<'a> {
    nodes: Vec<ANode<'a>>,
    body: u32,
    title_tag: Option<String>,
    og_title: Option<String>,
    site_name: Option<String>,
    /// Longest `articleBody` found in JSON-LD, as decoded text.
    ld_body: Option<String>,
    /// `og:description` or `description` meta tag.
    description: Option<String>,
}

/// Hint values: a hard hint removes the subtree, a weak one only if it is small.
const HINT_HARD: i8 = -3;
const HINT_WEAK: i8 = -2;
/// Layout names ("widget", "header"): weak, and void inside named content.
const HINT_LAYOUT: i8 = -1;
const HINT_COMMENTS: i8 = -4;
/// Text that must remain outside a comments section for it to be removed.
const MIN_TEXT_BESIDE_COMMENTS: u32 = 1000;
const HINT_CONTENT: i8 = 1;

fn tag_kind(name: &str) -> Option<Kind> {
    Some(match name {
        "script" | "style" | "template" | "svg" | "math" | "iframe" | "object" | "embed"
        | "canvas" | "video" | "audio" | "select" | "option" | "button" | "input" | "textarea"
        | "link" | "meta" | "img" | "picture" | "source" | "map" | "datalist" | "dialog"
        | "title" | "base" | "track" | "param" => return None,
        "a" => Kind::Link,
        "br" | "wbr" => Kind::Br,
        "p" => Kind::Para,
        "h1" => Kind::Heading(1),
        "h2" => Kind::Heading(2),
        "h3" => Kind::Heading(3),
        "h4" => Kind::Heading(4),
        "h5" => Kind::Heading(5),
        "h6" => Kind::Heading(6),
        "li" | "dt" | "dd" => Kind::ListItem,
        "ul" | "ol" | "dl" | "menu" => Kind::List,
        "td" | "th" => Kind::Cell,
        "tr" => Kind::Row,
        "table" => Kind::Table,
        "pre" | "listing" | "xmp" | "plaintext" => Kind::Pre,
        "span" | "b" | "i" | "em" | "strong" | "u" | "s" | "strike" | "small" | "big" | "sub"
        | "sup" | "code" | "kbd" | "samp" | "var" | "tt" | "mark" | "abbr" | "acronym" | "cite"
        | "dfn" | "q" | "time" | "label" | "font" | "bdi" | "bdo" | "ins" | "del" | "data"
        | "output" | "meter" | "progress" | "ruby" | "rt" | "rp" | "nobr" | "blink" | "slot" => {
            Kind::Inline
        }
        _ => Kind::Block,
    })
}

/// Only markup that is hidden for good counts: content behind `display:none`
/// is usually a collapsed tab, accordion or "read more" that the reader opens.
fn is_hidden(el: &scraper::node::Element) -> bool {
    // React streaming rendering parks the real content in `<div hidden
    // id="S:0">` until a script moves it into place.
    // A closed tab panel is content the reader opens with one click.
    if el.attr("hidden").is_some()
        && !el.id().is_some_and(|id| id.starts_with("S:"))
        && el.attr("role") != Some("tabpanel")
    {
        return true;
    }
    el.attr("class").is_some_and(|class| {
        class.split_ascii_whitespace().any(|c| {
            matches!(
                c,
                "sr-only"
                    | "u-srOnly"
                    | "visually-hidden"
                    | "visuallyhidden"
                    | "screen-reader-text"
            )
        })
    })
}

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
    "drawer",
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
/// enough other text remains (on forums they are all there is).
const COMMENT_WORDS: &[&str] = &["comments", "commentlist", "disqus", "respond"];

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
];

/// Scores one class name or id. Compound names are judged by their last
/// known word, as in English compounds: "post-footer" is a footer, while
/// "widget-theme-post-content" is content.
fn name_hint(name: &str) -> i8 {
    let lower = name.to_ascii_lowercase();
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
    for (i, w) in lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .enumerate()
    {
        let comment_list =
            matches!(prev, "comment" | "comments") && matches!(w, "list" | "section" | "area");
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
        } else if NEG_WORDS.contains(&w)
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
        {
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

/// Hint from the tag name, ARIA role and microdata: structural and reliable.
fn element_hint(name: &str, el: &scraper::node::Element) -> i8 {
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
fn class_hint(name: &str, el: &scraper::node::Element) -> i8 {
    if matches!(name, "html" | "body") {
        return 0;
    }
    let mut hint = 0i8;
    let names = el
        .attr("class")
        .into_iter()
        .flat_map(|c| c.split_ascii_whitespace())
        .chain(el.attr("id"));
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
    fn build(doc: &'a Html) -> Page<'a> {
        let mut page = Page {
            nodes: Vec::new(),
            body: 0,
            title_tag: None,
            og_title: None,
            site_name: None,
            ld_body: None,
            description: None,
        };
        let root = doc.tree.root();
        page.nodes.push(ANode {
            parent: 0,
            end: 0,
            kind: Kind::Block,
            text: "",
            el: None,
            in_link: false,
            hint: 0,
            class_hint: 0,
            removed: false,
            raw_chars: 0,
            raw_text_chars: 0,
            chars: 0,
            link_chars: 0,
            links: 0,
        });
        // Arena index of each open DOM ancestor, so `end` can be set on close.
        let mut stack: Vec<u32> = vec![0];
        let mut link_depth = 0u32;
        let mut body_found = false;
        let mut cur = root.first_child();
        while let Some(node) = cur {
            let mut descend = false;
            match node.value() {
                Node::Text(t) => {
                    let parent = *stack.last().unwrap_or(&0);
                    page.nodes.push(ANode {
                        parent,
                        end: page.nodes.len() as u32 + 1,
                        kind: Kind::Text,
                        text: t,
                        el: None,
                        in_link: link_depth > 0,
                        hint: 0,
                        class_hint: 0,
                        removed: false,
                        raw_chars: 0,
                        raw_text_chars: 0,
                        chars: 0,
                        link_chars: 0,
                        links: 0,
                    });
                }
                Node::Element(el) => {
                    let name = el.name();
                    match name {
                        "title" if page.title_tag.is_none() => {
                            let t: String = node
                                .children()
                                .filter_map(|c| c.value().as_text().map(|t| &**t))
                                .collect();
                            page.title_tag = Some(t);
                        }
                        "meta" => {
                            let key = el.attr("property").or_else(|| el.attr("name"));
                            match key.map(|k| k.to_ascii_lowercase()).as_deref() {
                                Some("og:title") if page.og_title.is_none() => {
                                    page.og_title = el.attr("content").map(str::to_string);
                                }
                                Some("og:site_name") if page.site_name.is_none() => {
                                    page.site_name = el.attr("content").map(str::to_string);
                                }
                                // Sites cut some of these short: keep the longest.
                                Some("og:description" | "description" | "twitter:description") => {
                                    if let Some(c) = el.attr("content") {
                                        if page
                                            .description
                                            .as_ref()
                                            .is_none_or(|d| d.len() < c.len())
                                        {
                                            page.description = Some(c.to_string());
                                        }
                                    }
                                }
                                _ => {}
                            }
                        }
                        "script"
                            if el.attr("type").is_some_and(|t| {
                                t.trim().eq_ignore_ascii_case("application/ld+json")
                            }) =>
                        {
                            for c in node.children() {
                                if let Some(t) = c.value().as_text() {
                                    for body in json_strings_for_key(t, "\"articleBody\"") {
                                        let longer = page
                                            .ld_body
                                            .as_ref()
                                            .is_none_or(|b| b.len() < body.len());
                                        if longer {
                                            page.ld_body = Some(body);
                                        }
                                    }
                                }
                            }
                        }
                        _ => {}
                    }
                    if let Some(kind) = tag_kind(name) {
                        if !is_hidden(el) {
                            let idx = page.nodes.len() as u32;
                            let parent = *stack.last().unwrap_or(&0);
                            if name == "body" && !body_found {
                                body_found = true;
                                page.body = idx;
                            }
                            page.nodes.push(ANode {
                                parent,
                                end: idx + 1,
                                kind,
                                text: "",
                                el: Some(el),
                                in_link: false,
                                hint: element_hint(name, el),
                                class_hint: class_hint(name, el),
                                removed: false,
                                raw_chars: 0,
                                raw_text_chars: 0,
                                chars: 0,
                                link_chars: 0,
                                links: 0,
                            });
                            if node.has_children() {
                                stack.push(idx);
                                if kind == Kind::Link {
                                    link_depth += 1;
                                }
                                descend = true;
                            }
                        }
                    }
                }
                Node::Document | Node::Fragment => descend = node.has_children(),
                _ => {}
            }
            if descend {
                if matches!(node.value(), Node::Document | Node::Fragment) {
                    stack.push(*stack.last().unwrap_or(&0));
                }
                cur = node.first_child();
                continue;
            }
            // Climb until a next sibling exists, closing the elements left behind.
            let mut n = node;
            loop {
                if let Some(s) = n.next_sibling() {
                    cur = Some(s);
                    break;
                }
                match n.parent() {
                    Some(p) if p.id() != root.id() => {
                        if let Some(idx) = stack.pop() {
                            let end = page.nodes.len() as u32;
                            page.nodes[idx as usize].end = end;
                            if page.nodes[idx as usize].kind == Kind::Link {
                                link_depth = link_depth.saturating_sub(1);
                            }
                        }
                        n = p;
                    }
                    _ => {
                        cur = None;
                        break;
                    }
                }
            }
        }
        let len = page.nodes.len() as u32;
        page.nodes[0].end = len;
        for idx in stack {
            let n = &mut page.nodes[idx as usize];
            n.end = n.end.max(len);
        }
        page
    }

    /// Sums text sizes bottom-up; removed subtrees count as empty.
    fn compute_sizes(&mut self) {
        for n in self.nodes.iter_mut() {
            n.chars = 0;
            n.link_chars = 0;
            n.links = 0;
        }
        for i in (1..self.nodes.len()).rev() {
            let (chars, link_chars, links, removed, parent) = {
                let n = &mut self.nodes[i];
                if n.kind == Kind::Text && !n.removed {
                    n.chars = count_chars(n.text);
                    if n.in_link {
                        n.link_chars = n.chars;
                    }
                }
                if n.kind == Kind::Link && !n.removed {
                    n.links += 1;
                }
                (n.chars, n.link_chars, n.links, n.removed, n.parent)
            };
            if removed {
                continue;
            }
            let p = &mut self.nodes[parent as usize];
            p.chars += chars;
            p.link_chars += link_chars;
            p.links += links;
        }
    }

    fn mark_boilerplate(&mut self, use_class: bool) {
        // Raw sizes decide whether a hinted element is really a page wrapper
        // (e.g. `<div class="has-sidebar">` around everything).
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
                (true, 0) => n.class_hint,
                (false, HINT_WEAK) => 0,
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

    /// Cuts the visible text into blocks at block-element boundaries.
    fn blocks(&self) -> Vec<Block> {
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
                                if space {
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
                Kind::Inline => {}
                _ => {
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

    fn title(&self, blocks: &[Block], url: Option<&str>) -> Option<String> {
        let h1 = blocks
            .iter()
            .find(|b| b.kind == BlockKind::Heading(1))
            .map(|b| b.text.clone());
        let h1 = h1.map(|t| normalize_space(&t)).filter(|t| !t.is_empty());
        let raw = [self.og_title.clone(), self.title_tag.clone()]
            .into_iter()
            .flatten()
            .map(|t| normalize_space(&t))
            .find(|t| !t.is_empty());
        let Some(raw) = raw else { return h1 };
        let cleaned = clean_title(&raw, self.site_name.as_deref(), url);
        // "Heading | Some Long Site Description": the page's own heading shows
        // where the site part begins when the site name is unknown.
        if let Some(h1) = h1 {
            let rest = cleaned.strip_prefix(h1.as_str()).map(str::trim_start);
            if rest.is_some_and(|r| {
                ["|", "-", "–", "—", ":", "·", "•"]
                    .iter()
                    .any(|s| r.starts_with(s))
            }) {
                return Some(h1);
            }
        }
        Some(cleaned)
    }

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
            let mut c = p + 1;
            while c < self.nodes[p].end as usize {
                if self.signature(c) == sig {
                    same += 1;
                    same_positive += positive[c];
                }
                c = (self.nodes[c].end as usize).max(c + 1);
            }
            if same >= 2 && same_positive >= CLUSTER_GAIN * positive[x] && score[p] > 0.0 {
                best = p;
                break;
            }
            x = p;
        }
        (best, score)
    }

    /// Tag name and first class, the part of markup that repeats across posts or cards.
    fn signature(&self, i: usize) -> Option<(&str, &str)> {
        let el = self.nodes[i].el?;
        let class = el.attr("class").unwrap_or("");
        Some((
            el.name(),
            class.split_ascii_whitespace().next().unwrap_or(""),
        ))
    }

    fn main_text(&self, blocks: &[Block], title: Option<&str>) -> String {
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
        let mut i = best + 1;
        while i < hi as usize {
            let n = &self.nodes[i];
            if n.kind != Kind::Text
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
        let mut out = String::new();
        let mut prev: Option<BlockKind> = None;
        let chosen: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.owner >= lo && b.owner < hi && !dropped[b.owner as usize])
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

fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{ad}'
    )
}

fn count_chars(s: &str) -> u32 {
    s.chars().filter(|c| !c.is_whitespace()).count() as u32
}

fn normalize_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(w.chars().filter(|&c| !is_invisible(c)));
    }
    out
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

/// Drops a " | Site name" style suffix or prefix when it looks like the site's name.
fn clean_title(title: &str, site_name: Option<&str>, url: Option<&str>) -> String {
    const SEPS: &[&str] = &[
        " | ", " - ", " – ", " — ", " :: ", " · ", " • ", " « ", " » ",
    ];
    let host_words: Vec<String> = url
        .and_then(|u| u.split("://").nth(1))
        .and_then(|rest| rest.split(['/', '?', '#', ':']).next())
        .map(|h| {
            h.split('.')
                .filter(|p| !matches!(*p, "www" | "com" | "org" | "net" | "ru" | "co" | "uk"))
                .map(|p| p.to_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let squash = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let looks_like_site = |part: &str| -> bool {
        let p = squash(part);
        if p.is_empty() {
            return true;
        }
        if let Some(site) = site_name {
            let s = squash(site);
            if !s.is_empty() && (p == s || p.contains(&s) || s.contains(&p)) {
                return true;
            }
        }
        host_words
            .iter()
            .any(|h| !h.is_empty() && (p == *h || p.contains(h.as_str())))
    };
    for sep in SEPS {
        if let Some(pos) = title.rfind(sep) {
            let (head, tail) = (&title[..pos], &title[pos + sep.len()..]);
            if looks_like_site(tail) && !head.trim().is_empty() {
                return clean_title(head.trim(), site_name, url);
            }
            if let Some(p) = title.find(sep) {
                let (first, rest) = (&title[..p], &title[p + sep.len()..]);
                if looks_like_site(first) && !rest.trim().is_empty() {
                    return rest.trim().to_string();
                }
            }
            // Without a site name to compare, a short last part after a long
            // head is almost always the site's name.
            if site_name.is_none()
                && tail.split_whitespace().count() <= 3
                && head.split_whitespace().count() >= 3
            {
                return head.trim().to_string();
            }
        }
    }
    title.trim().to_string()
}

/// Cleaner for HTML pages: the main-content extractor above.
pub struct HtmlCleaner;

impl super::Cleaner for HtmlCleaner {
    fn clean(&self, body: &str, ctx: &super::CleanContext<'_>) -> (Option<String>, String) {
        let e = extract(body, ctx.url);
        (e.title, super::tidy_paragraphs(&e.text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Asserts which lines a line filter takes and which it leaves.
    fn check_lines(filter: fn(&str) -> bool, taken: &[&str], left: &[&str]) {
        for l in taken {
            assert!(filter(l), "should be taken: {l}");
        }
        for l in left {
            assert!(!filter(l), "should be left: {l}");
        }
    }

    #[test]
    fn counter_lines_dropped() {
        check_lines(
            is_counter_line,
            &[
                "44 reactions",
                "27 comments",
                "7 min read",
                "1.2k views",
                "3 K likes",
                "1 reply",
            ],
            &[
                "2024 comments on the bill were filed",
                "44",
                "reactions",
                "7min read",
                "10 answers to life",
            ],
        );
        let t = "Title\n\n27 comments\n\nBody line\n3 likes\nmore";
        assert_eq!(
            drop_furniture_lines(t.to_string()),
            "Title\n\nBody line\nmore"
        );
    }

    #[test]
    fn control_labels_dropped_as_lone_lines_only() {
        check_lines(
            is_control_line,
            &[
                "Read more",
                "Read more »",
                "SPONSORED",
                "Permalink",
                "Continue reading…",
            ],
            &[
                "Read more about the harbour",
                "Loading docks",
                "Sponsored by the city",
            ],
        );
        let t = "First paragraph.\nRead more\n\nSponsored\n\nRead more books, said the author.";
        assert_eq!(
            drop_furniture_lines(t.to_string()),
            "First paragraph.\n\nRead more books, said the author."
        );
    }

    #[test]
    fn member_stats_and_placeholders_dropped() {
        check_lines(
            is_furniture_line,
            &[
                "Posts: 7",
                "Joined: Sep 2019",
                "Reaction score: 1,204",
                "READ MORE ↓",
                "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
            ],
            &[
                "Posts: the ones I wrote last winter about the harbour",
                "Joined: never",
                "The lorem ipsum text is a scrambled passage of Cicero.",
            ],
        );
    }

    #[test]
    fn repeated_runs_of_paragraphs_dropped_single_lines_kept() {
        let t = "Intro words here.\n\nFast delivery on all items\n\nSave money every single day\n\nLove it or get your money back\n\nPrice\n\nFast delivery on all items\n\nSave money every single day\n\nLove it or get your money back\n\nPrice\n\nEnd.";
        let out = drop_repeated_runs(t.to_string());
        assert_eq!(out.matches("Fast delivery").count(), 1, "{out}");
        assert_eq!(out.matches("Price").count(), 1, "{out}");
        assert!(out.ends_with("End."));
        let list = "A\n\nMust be presented\n\nB\n\nMust be presented\n\nC\n\nMust be presented";
        assert_eq!(drop_repeated_runs(list.to_string()), list);
    }

    #[test]
    fn json_ld_article_body_used_for_script_only_pages() {
        let html = r#"<html><head><script type="application/ld+json">
            {"@type":"NewsArticle","articleBody":"First paragraph of the story, told at length so that it counts as real text for the reader.\nSecond \"quoted\" paragraph \u00e9t\u00e9 \ud83d\ude00 continues here with more words to read and enjoy, and then some more words again to be long enough, with a third clause added so the count of letters is well above the floor."}
            </script></head><body><div id="app"></div></body></html>"#;
        let e = extract(html, None);
        assert!(e.text.starts_with("First paragraph"), "{}", e.text);
        assert!(
            e.text.contains("\n\nSecond \"quoted\" paragraph été 😀"),
            "{}",
            e.text
        );
        // Broken JSON does not panic.
        for bad in [
            "\"articleBody\"",
            "\"articleBody\": \"\\u12",
            "\"articleBody\":\"\\",
        ] {
            let _ = json_strings_for_key(bad, "\"articleBody\"");
        }
    }

    const PARA: &str = "This is a long paragraph of real article text, written by the author \
        with commas, full sentences and enough words to look like content.";

    fn article(body: &str) -> String {
        format!(
            "<html><head><title>Big News | Example Site</title></head><body>\
             <nav><a href='/'>Home</a> <a href='/a'>About</a> <a href='/c'>Contact</a></nav>\
             <header class='site-header'><a href='/'>Example Site</a></header>\
             <article>{body}</article>\
             <footer>Copyright 2024 Example Site. All rights reserved.</footer></body></html>"
        )
    }

    #[test]
    fn keeps_article_and_drops_nav_footer() {
        let html = article(&format!("<p>{PARA}</p><p>Second paragraph. {PARA}</p>"));
        let e = extract(&html, Some("https://example.com/news/1"));
        assert!(e.text.contains("Second paragraph."), "{}", e.text);
        assert!(!e.text.contains("Contact"), "{}", e.text);
        assert!(!e.text.contains("Copyright"), "{}", e.text);
        assert_eq!(e.text.matches("\n\n").count(), 1, "{:?}", e.text);
    }

    #[test]
    fn drops_cookie_banner_share_buttons_and_related_links() {
        let html = article(&format!(
            "<p>{PARA}</p><div class='cookie-banner'>We use cookies to improve your experience.</div>\
             <div class='share-buttons'><a href='#'>Facebook</a><a href='#'>Twitter</a></div>\
             <p>{PARA}</p><div class='related-posts'><a href='/x'>Another story you may like</a></div>"
        ));
        let e = extract(&html, None);
        for junk in ["cookies", "Facebook", "Another story"] {
            assert!(!e.text.contains(junk), "{junk} in {}", e.text);
        }
        assert_eq!(e.text.matches("real article text").count(), 2);
    }

    #[test]
    fn layout_names_inside_content_are_sections_not_boilerplate() {
        let html = format!(
            "<html><body><div class='sidebar-widget'><p>Widget beside the text: {PARA}</p></div>\
             <div class='post-content'><p>{PARA}</p><div class='ck-widget'><h3>Snake plant</h3>\
             <p>Inside an editor widget: {PARA}</p></div><p>{PARA}</p>\
             <div class='author-box'>About the author, who writes here.</div></div></body></html>"
        );
        let e = extract(&html, None);
        assert!(e.text.contains("Inside an editor widget"), "{}", e.text);
        assert!(e.text.contains("Snake plant"), "{}", e.text);
        assert!(!e.text.contains("Widget beside"), "{}", e.text);
        assert!(!e.text.contains("About the author"), "{}", e.text);
    }

    #[test]
    fn quotes_of_earlier_posts_keep_only_the_reply() {
        let first = "The first post says something long enough to be quoted later on.";
        let html = format!(
            "<html><body><div class='thread'>\
             <div class='post'><p>{first} {PARA}</p></div>\
             <div class='post'><blockquote><div>Ann said:</div><p>{first} {PARA}</p></blockquote>\
             <p>My reply adds a new thought. {PARA}</p></div>\
             <div class='post'><blockquote><p>A quote of a post that is not on this page at all.</p></blockquote>\
             <p>{PARA}</p></div></div></body></html>"
        );
        let e = extract(&html, None);
        assert_eq!(e.text.matches(first).count(), 1, "{}", e.text);
        assert!(e.text.contains("My reply adds"), "{}", e.text);
        assert!(!e.text.contains("Ann said"), "{}", e.text);
        assert!(e.text.contains("not on this page"), "{}", e.text);
    }

    #[test]
    fn class_names_judged_by_their_last_known_word() {
        assert_eq!(name_hint("copy-legal"), HINT_HARD);
        assert_eq!(name_hint("site-disclaimer"), HINT_HARD);
        assert_eq!(name_hint("post-footer"), HINT_HARD);
        assert_eq!(name_hint("widget-theme-post-content"), HINT_CONTENT);
        assert_eq!(name_hint("ck-widget"), HINT_LAYOUT);
        assert_eq!(name_hint("cookie-banner"), HINT_HARD);
        assert_eq!(name_hint("author-box"), HINT_WEAK);
        assert_eq!(name_hint("comment-list"), HINT_COMMENTS);
        assert_eq!(name_hint("legalese-free-zone"), 0);
    }

    #[test]
    fn closed_tab_panels_are_content() {
        let html = format!(
            "<html><body><article><p>{PARA}</p><div role='tablist'><button>Python</button></div>\
             <div role='tabpanel'><p>Install Python first. {PARA}</p></div>\
             <div role='tabpanel' hidden><p>Install Node.js first. {PARA}</p></div>\
             <div hidden><p>Never shown to anyone. {PARA}</p></div></article></body></html>"
        );
        let e = extract(&html, None);
        assert!(e.text.contains("Install Node.js first."), "{}", e.text);
        assert!(!e.text.contains("Never shown"), "{}", e.text);
    }

    #[test]
    fn no_glued_words_across_cells_items_and_breaks() {
        let html = article(&format!(
            "<p>{PARA}</p><table><tr><td>alpha</td><td>beta</td></tr><tr><td>gamma</td></tr></table>\
             <ul><li>one</li><li>two</li></ul><p>left<br>right</p><div>up</div><div>down</div>\
             <p><a href='/1'>first</a><a href='/2'>second</a></p><p>{PARA}</p>"
        ));
        let text = extract(&html, None).text;
        for glued in [
            "alphabeta",
            "betagamma",
            "onetwo",
            "leftright",
            "updown",
            "firstsecond",
        ] {
            assert!(!text.contains(glued), "{glued} in {text:?}");
        }
        assert!(text.contains("one\ntwo"), "{text:?}");
        assert!(text.contains("left\nright"), "{text:?}");
    }

    #[test]
    fn headings_and_list_items_on_their_own_lines() {
        let html = article(&format!(
            "<h2>Section <b>title</b></h2><p>{PARA}</p><ol><li>first item</li><li>second item</li></ol><p>{PARA}</p>"
        ));
        let text = extract(&html, None).text;
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"Section title"), "{text:?}");
        assert!(lines.contains(&"first item"), "{text:?}");
        assert!(lines.contains(&"second item"), "{text:?}");
    }

    #[test]
    fn decodes_entities_and_normalises_spaces() {
        let html = article(&format!(
            "<p>Fish &amp; chips&nbsp;cost&#160;5&nbsp;&euro; &mdash; cheap. {PARA}</p>"
        ));
        let text = extract(&html, None).text;
        assert!(text.contains("Fish & chips cost 5 € — cheap."), "{text:?}");
        assert!(!text.contains('\u{a0}'));
        assert!(!text.contains("  "));
    }

    #[test]
    fn cyrillic_text_is_preserved() {
        let para = "Это длинный абзац настоящего текста статьи, написанный автором, \
            с запятыми, полными предложениями и достаточным числом слов.";
        let html = format!(
            "<html><head><title>Новости — Пример</title></head><body><nav><a href='/'>Главная</a></nav>\
             <div class='content'><p>{para}</p><p>Ёжик и щука. {para}</p></div></body></html>"
        );
        let e = extract(&html, Some("https://пример.рф/"));
        assert!(e.text.contains("Ёжик и щука."), "{}", e.text);
        assert!(!e.text.contains("Главная"));
        assert_eq!(e.title.as_deref(), Some("Новости"));
    }

    #[test]
    fn title_prefers_og_title_and_strips_site_name() {
        let html = "<html><head><title>Ignored | Site</title>\
            <meta property='og:title' content='Real Title'></head><body><p>x</p></body></html>";
        assert_eq!(extract(html, None).title.as_deref(), Some("Real Title"));
        let html = "<html><head><title>How to bake bread at home - Example Kitchen</title>\
            </head><body><p>x</p></body></html>";
        let e = extract(html, Some("https://www.example-kitchen.com/bread"));
        assert_eq!(e.title.as_deref(), Some("How to bake bread at home"));
        let html = "<html><body><h1>Only  <i>heading</i></h1><p>x</p></body></html>";
        assert_eq!(extract(html, None).title.as_deref(), Some("Only heading"));
        assert_eq!(extract("<p>no title</p>", None).title, None);
    }

    #[test]
    fn title_heading_is_not_repeated_in_text() {
        let html = format!(
            "<html><head><title>Big News</title></head><body><article><h1>Big News</h1>\
             <p>{PARA}</p></article></body></html>"
        );
        let text = extract(&html, None).text;
        assert!(!text.contains("Big News"), "{text:?}");
    }

    #[test]
    fn forum_posts_are_all_kept() {
        let posts: String = (0..6)
            .map(|i| {
                format!(
                    "<div class='post'><div class='author'><a href='/u{i}'>user{i}</a></div>\
                     <div class='message'>Reply number {i}: I had the same problem with my \
                     router, and updating the firmware fixed it for me.</div></div>"
                )
            })
            .collect();
        let html = format!(
            "<html><body><nav><a href='/'>Forums</a></nav><div id='thread'>{posts}</div></body></html>"
        );
        let text = extract(&html, None).text;
        for i in 0..6 {
            assert!(
                text.contains(&format!("Reply number {i}:")),
                "{i} missing: {text}"
            );
        }
    }

    #[test]
    fn pre_keeps_line_breaks() {
        let html = article(&format!(
            "<p>{PARA}</p><pre>fn main() {{\n    run();\n}}</pre>"
        ));
        let text = extract(&html, None).text;
        assert!(text.contains("fn main() {\n    run();\n}"), "{text:?}");
    }

    #[test]
    fn empty_and_junk_input_do_not_panic() {
        for input in [
            "",
            " ",
            "<",
            "</",
            "<<>>",
            "&",
            "&#xFFFFFFFF;",
            "<html",
            "\u{0}\u{1}\u{fffd}",
        ] {
            let e = extract(input, None);
            assert!(e.text.len() <= input.len() + 8);
        }
        let junk: String = (0..200_000u32)
            .map(|i| char::from_u32((i.wrapping_mul(2654435761) >> 7) % 0x3000).unwrap_or('x'))
            .collect();
        let _ = extract(&junk, Some("not a url"));
    }

    fn assert_fast(name: &str, html: &str, limit: Duration) -> Extracted {
        let t = Instant::now();
        let e = extract(html, None);
        assert!(t.elapsed() < limit, "{name} took {:?}", t.elapsed());
        e
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        // Debug builds are slow; the limits guard against quadratic blowups.
        let n = 100_000;
        let deep = format!("{}{PARA}{}", "<div>".repeat(n), "</div>".repeat(n));
        let e = assert_fast("divs", &deep, Duration::from_secs(60));
        assert!(e.text.contains("real article text"));
        let unclosed = format!("{}{PARA}", "<span><b><i>".repeat(n / 3));
        assert_fast("inline", &unclosed, Duration::from_secs(60));
        let tables = "<table><tr><td>".repeat(n / 3);
        assert_fast("tables", &tables, Duration::from_secs(60));
        let lists = "<ul><li>x".repeat(n / 2);
        assert_fast("lists", &lists, Duration::from_secs(60));
    }

    #[test]
    fn huge_input_is_cut() {
        let para = format!("<p>{PARA}</p>");
        let huge = para.repeat(100 * 1024 * 1024 / para.len() + 1);
        assert!(huge.len() > 100 * 1024 * 1024);
        let e = assert_fast("huge", &huge, Duration::from_secs(120));
        assert!(e.text.len() < MAX_INPUT_BYTES);
    }

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
    fn long_link_split_by_a_block_does_not_underflow() {
        // Found by cargo-fuzz: the link's full length was credited to the
        // block it opened in.
        let html = format!(
            "<p>ab<a href='#'>{}<div>tail of the link</div></a></p><p>{PARA}</p>",
            "x".repeat(37)
        );
        let text = extract(&html, None).text;
        assert!(text.contains("tail of the link"), "{text:?}");
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let s = "жжж";
        assert_eq!(truncate_at_char_boundary(s, 3), "ж");
        assert_eq!(truncate_at_char_boundary(s, 100), s);
    }
}
