//! Wikitext → plain text for corpus building.
//!
//! The design follows MediaWiki's own phases so that odd markup breaks the
//! same way it breaks on the wiki, but every phase is a single linear pass:
//!
//! 1. `prescan` (`prescan.rs`) matches `{{ }}`, `{{{ }}}`, `[[ ]]` with
//!    MediaWiki's brace stack rules and finds comments, extension tags and
//!    `<div>`/`<table>` blocks, recording each construct's end in a map keyed
//!    by its start. Unclosed openers get no entry, so later phases treat them
//!    as text and never rescan the rest of the page looking for a closer.
//! 2. `Inline::render` (`inline.rs`) walks the text once, jumping over
//!    dropped constructs and rendering the visible part of links, inline
//!    templates and tags. `templates.rs` says which templates render running
//!    text and how; `languages.rs` lists the interlanguage prefixes.
//! 3. `blocks` (`blocks.rs`) works line by line (tables, headings, lists,
//!    paragraphs, apparatus sections), then entities are decoded
//!    (`entities.rs`).
//!
//! `escape.rs` carries `<nowiki>` text and inline tag boundaries from phase 2
//! through phase 3.

mod blocks;
mod entities;
mod escape;
mod inline;
mod languages;
mod prescan;
mod templates;
#[cfg(test)]
mod tests;

use blocks::blocks;
use inline::Inline;
use prescan::prescan;

/// Options for wikitext cleaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WikitextOptions {
    /// Wiki content language (`"en"`, `"ru"`); selects the namespace aliases.
    pub lang: String,
    /// Section headings whose sections are dropped (case-insensitive).
    pub drop_sections: Vec<String>,
}

const EN_APPARATUS: &[&str] = &[
    "References",
    "Notes",
    "Footnotes",
    "See also",
    "External links",
    "Further reading",
    "Bibliography",
    "Sources",
    "Citations",
    "Notes and references",
    "References and notes",
];

const RU_APPARATUS: &[&str] = &[
    "Примечания",
    "Литература",
    "Ссылки",
    "См. также",
    "Источники",
    "Сноски",
];

impl WikitextOptions {
    /// Defaults for a wiki language: namespace aliases and apparatus section names of en and ru.
    pub fn for_lang(lang: &str) -> Self {
        let lang = lang.trim().to_lowercase();
        let mut drop: Vec<String> = EN_APPARATUS.iter().map(|s| s.to_string()).collect();
        if lang.split(['-', '_']).next() == Some("ru") {
            drop.extend(RU_APPARATUS.iter().map(|s| s.to_string()));
        }
        WikitextOptions {
            lang,
            drop_sections: drop,
        }
    }
}

impl Default for WikitextOptions {
    /// English defaults.
    fn default() -> Self {
        Self::for_lang("en")
    }
}

/// Converts one article's wikitext to plain text: paragraphs separated by a blank line, headings and list items on their own lines.
pub fn wikitext_to_text(src: &str, opts: &WikitextOptions) -> String {
    let cfg = Config::new(opts);
    let marks = prescan(src.as_bytes());
    let inline = Inline::new(src, &marks, &cfg);
    let mut mid = String::with_capacity(src.len() / 2);
    inline.render(0, src.len(), &mut mid, 0);
    blocks(&mid, &cfg)
}

struct Config {
    /// Lowercased namespace names whose links render nothing (files, categories).
    hidden_ns: Vec<String>,
    /// Normalised apparatus headings.
    drop: Vec<String>,
}

impl Config {
    fn new(opts: &WikitextOptions) -> Self {
        // Canonical English names work on every wiki, localised ones only on their own.
        let mut hidden_ns: Vec<String> = ["file", "image", "media", "category"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // "ru", "ru-RU" and "ru_RU" all mean the Russian wiki.
        let primary = opts.lang.split(['-', '_']).next().unwrap_or("");
        if primary.trim().eq_ignore_ascii_case("ru") {
            hidden_ns.extend(
                ["файл", "изображение", "медиа", "категория"]
                    .iter()
                    .map(|s| s.to_string()),
            );
        }
        let drop = opts
            .drop_sections
            .iter()
            .map(|s| normalize_heading(s))
            .filter(|s| !s.is_empty())
            .collect();
        Config { hidden_ns, drop }
    }
}

fn normalize_heading(s: &str) -> String {
    let s = s.trim().trim_end_matches([':', '.', ' ']);
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w.to_lowercase());
    }
    out
}

/// Cleaner for MediaWiki markup; the wiki's language picks namespace aliases and section names.
pub struct WikitextCleaner;

impl super::Cleaner for WikitextCleaner {
    fn clean(
        &self,
        body: &str,
        ctx: &super::CleanContext<'_>,
    ) -> Result<(Option<String>, String), super::Defect> {
        let opts = WikitextOptions::for_lang(ctx.lang.unwrap_or("en"));
        Ok((None, super::tidy_paragraphs(&wikitext_to_text(body, &opts))))
    }
}
