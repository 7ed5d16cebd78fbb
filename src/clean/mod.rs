//! Cleaners: raw bodies → plain text (docs/method.md §9.1). One file per kind of input.

pub mod html;
pub mod language;
pub mod text;
pub mod wikitext;

use crate::acquire::Payload;
pub use language::{detect_language, detect_language_in, LANGUAGE_SAMPLE_BYTES};

/// A cleaned document: plain text, paragraphs separated by blank lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Cleaned {
    /// Title found in the input, if any.
    pub title: Option<String>,
    /// The plain text.
    pub text: String,
    /// Detected language (ISO 639-1), when detection is confident.
    pub lang: Option<String>,
    /// Why the body gave no text to judge, when it did not.
    pub defect: Option<Defect>,
}

/// Why a body gives no text: the filter stage keeps such documents out with this as the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Defect {
    /// Its parse ran out of its time budget (`crate::markup::Limits`).
    TooComplex,
    /// Binary bytes under a text type (`crate::markup::looks_binary`).
    NotText,
    /// A document (PDF, DOCX, ODT, EPUB) read whole that holds no text: a scan.
    NoText,
    /// A document that needs a password.
    Encrypted,
    /// A document broken beyond reading (cut short, not of its format, its parser gave up).
    Corrupt,
}

impl Defect {
    /// The reason's name in statuses and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Defect::TooComplex => crate::markup::TooComplex::REASON,
            Defect::NotText => "not-text",
            Defect::NoText => "no-text",
            Defect::Encrypted => "encrypted",
            Defect::Corrupt => "corrupt",
        }
    }
}

/// What a cleaner knows besides the body.
#[derive(Debug, Clone, Copy, Default)]
pub struct CleanContext<'a> {
    /// Address of the page, when known.
    pub url: Option<&'a str>,
    /// Language the source declares (a wiki's content language), when known.
    pub lang: Option<&'a str>,
}

/// Turns one kind of raw body into plain text.
pub trait Cleaner: Send + Sync {
    /// Cleans `body`; returns the title found in it, if any, and the text.
    fn clean(&self, body: &str, ctx: &CleanContext<'_>)
        -> Result<(Option<String>, String), Defect>;
}

/// The cleaner for a payload kind.
pub fn cleaner_for(payload: Payload) -> &'static dyn Cleaner {
    match payload {
        Payload::Html => &html::HtmlCleaner,
        Payload::Wikitext => &wikitext::WikitextCleaner,
        // Readers turn a document's bytes into plain text before cleaning.
        Payload::PlainText | Payload::Document => &text::TextCleaner,
    }
}

/// Cleans a body of the given kind and detects its language.
pub fn clean(payload: Payload, body: &str, ctx: &CleanContext<'_>) -> Cleaned {
    match clean_text(payload, body, ctx) {
        Ok((title, text)) => {
            let lang = detect_language(&text);
            Cleaned {
                title,
                text,
                lang,
                defect: None,
            }
        }
        Err(defect) => Cleaned {
            title: None,
            text: String::new(),
            lang: None,
            defect: Some(defect),
        },
    }
}

/// Title and text of a body of the given kind, or why it has none.
pub fn clean_text(
    payload: Payload,
    body: &str,
    ctx: &CleanContext<'_>,
) -> Result<(Option<String>, String), Defect> {
    if crate::markup::looks_binary(body) {
        return Err(Defect::NotText);
    }
    cleaner_for(payload).clean(body, ctx)
}

/// Normalises whitespace: trims lines, collapses blank runs to one blank line, no trailing space.
pub fn tidy_paragraphs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_pending = false;
    for line in text.lines() {
        let line: String = collapse_spaces(line);
        if line.is_empty() {
            blank_pending = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
            if blank_pending {
                out.push('\n');
            }
        }
        out.push_str(&line);
        blank_pending = false;
    }
    out
}

fn collapse_spaces(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for word in line
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidies_paragraphs() {
        assert_eq!(
            tidy_paragraphs("  a \u{a0} b \n\n\n\n c\nd  \n"),
            "a b\n\nc\nd"
        );
    }
}
