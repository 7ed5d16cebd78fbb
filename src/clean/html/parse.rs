//! Getting the input into a DOM without letting hostile input cost
//! unbounded time: the size cut, the nesting guard and its rough tag scanner,
//! and the parse itself.

use html5ever::tendril::TendrilSink;
use scraper::Html;

/// Parses with scripting off, so `<noscript>` content (often the only
/// server-rendered copy of a JS app's text) becomes a normal subtree.
pub(super) fn parse(html: &str) -> Html {
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
pub(super) const MAX_DEPTH: usize = 400;

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
pub(super) fn limit_nesting(html: &str, max: usize) -> std::borrow::Cow<'_, str> {
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

pub(super) fn truncate_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
