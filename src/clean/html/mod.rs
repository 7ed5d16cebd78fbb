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
//! cards). Inside the container, link-heavy subtrees are pruned, unless they
//! are lists or tables set in the text's flow (between its paragraphs, or
//! announced by one).
//!
//! Works on the DOM only: no per-site rules, no network, no global state.
//!
//! The phases, in the order [`extract`] runs them:
//!
//! 1. `crate::markup::parse_html`: the size cut, the nesting guard (a rough
//!    tag scanner that flattens hostile nesting before html5ever sees it), the
//!    time budget and the parse, shared with every other HTML parse.
//! 2. `arena.rs`: the DOM copied into the flat arena, with the page's
//!    metadata (titles, site name, descriptions; `jsonld.rs` reads
//!    `articleBody` out of JSON-LD) and subtree text sizes.
//! 3. `hints.rs`: the tag, role and class/id word lists, the sign-up boxes
//!    around e-mail and phone fields, and the pass that marks hinted subtrees
//!    as boilerplate.
//! 4. `blocks.rs`: the visible text cut into blocks at block-element
//!    boundaries, with their link characters.
//! 5. `title.rs`: the title, and the cleanup of its site-name part.
//! 6. `container.rs`: block weights, the choice and widening of the main
//!    container, pruning inside it, and the text taken from it.
//! 7. `jsonld.rs`: when the page declares a long `articleBody` that holds
//!    most of the text taken, the lines it lacks are dropped.
//! 8. `lines.rs`: the final line filters (counters, control labels, member
//!    statistics, placeholders, picture credits, embeds' fallbacks, repeated
//!    runs of paragraphs, author boxes, lists of works cited, bylines at the
//!    head of the text).
//!
//! `whitespace.rs` holds the character counting and space normalising they
//! share.

mod arena;
mod blocks;
mod container;
mod hints;
mod jsonld;
mod lines;
#[cfg(test)]
mod tests;
mod title;
mod whitespace;

use crate::markup::{self, Limits, TooComplex};
use arena::Page;
use jsonld::keep_declared_lines;
use lines::{
    drop_author_boxes, drop_furniture_lines, drop_head_bylines, drop_repeated_runs,
    drop_source_lists,
};
use whitespace::{count_chars, normalize_space};

/// Main text and title extracted from one HTML page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// Page title (og:title, `<title>` or the first `<h1>`), without a site-name suffix.
    pub title: Option<String>,
    /// Main text: paragraphs separated by a blank line, headings and list items on their own lines.
    pub text: String,
}

/// Extracts the author's main text: paragraphs separated by a blank line, headings and list
/// items on their own lines. A page over the parse's limits gives no text.
pub fn extract(html: &str, url: Option<&str>) -> Extracted {
    extract_within(html, url, &Limits::PAGE).unwrap_or_default()
}

/// [`extract`] within explicit parse limits; `Err` when the page is over its time budget.
pub fn extract_within(
    html: &str,
    url: Option<&str>,
    limits: &Limits,
) -> Result<Extracted, TooComplex> {
    let doc = markup::parse_html(html, limits)?;
    let mut page = Page::build(&doc);
    page.mark_boilerplate(true, None);
    page.compute_sizes();
    let blocks = page.blocks();
    let title = page.title(&blocks, url);
    let mut text = page.main_text(&blocks, title.as_deref());
    // Class names and weak tags (form, header) are only hints: when trusting
    // them leaves almost nothing, content was named like boilerplate. First
    // only the name that took the most text is doubted, so the others still
    // remove what they name; failing that, every class name and weak tag.
    if count_chars(&text) < 200 {
        let doubted = page.costliest_class_name().map(|name| (true, Some(name)));
        for (use_class, spared) in doubted.into_iter().chain([(false, None)]) {
            page.mark_boilerplate(use_class, spared);
            page.compute_sizes();
            let retry = page.main_text(&page.blocks(), title.as_deref());
            if count_chars(&retry) > 2 * count_chars(&text) {
                text = retry;
                break;
            }
        }
    }
    if let Some(kept) = page
        .ld_body
        .as_deref()
        .and_then(|body| keep_declared_lines(&text, body))
    {
        text = kept;
    }
    // Pages rendered by scripts may carry their text only in JSON-LD
    // (`articleBody`) or, failing that, in the meta description.
    let chars = count_chars(&text);
    if let Some(body) = page.ld_body.as_deref() {
        let body = paragraphs(body);
        if count_chars(&body) > 2 * chars.max(100) {
            return Ok(Extracted { title, text: body });
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
    let text = drop_furniture_lines(text);
    let text = drop_source_lists(drop_author_boxes(drop_repeated_runs(text)));
    let text = drop_head_bylines(text);
    Ok(Extracted { title, text })
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

/// Cleaner for HTML pages: the main-content extractor above.
pub struct HtmlCleaner;

impl super::Cleaner for HtmlCleaner {
    fn clean(
        &self,
        body: &str,
        ctx: &super::CleanContext<'_>,
    ) -> Result<(Option<String>, String), super::Defect> {
        let e =
            extract_within(body, ctx.url, &Limits::PAGE).map_err(|_| super::Defect::TooComplex)?;
        Ok((e.title, super::tidy_paragraphs(&e.text)))
    }
}
