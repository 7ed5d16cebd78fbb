//! The page title: og:title, `<title>` or the first `<h1>`, without the
//! site's name.

use super::arena::Page;
use super::blocks::{Block, BlockKind};
use super::whitespace::normalize_space;

impl Page<'_> {
    pub(super) fn title(&self, blocks: &[Block], url: Option<&str>) -> Option<String> {
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
