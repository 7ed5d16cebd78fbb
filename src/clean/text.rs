//! Plain text: already the author's text; only whitespace is normalised.

use super::{tidy_paragraphs, CleanContext, Cleaner};

/// Cleaner for plain-text bodies.
pub struct TextCleaner;

impl Cleaner for TextCleaner {
    fn clean(&self, body: &str, _ctx: &CleanContext<'_>) -> (Option<String>, String) {
        (None, tidy_paragraphs(body))
    }
}
