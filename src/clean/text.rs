//! Plain text: already the author's text; only whitespace is normalised.

use super::{tidy_paragraphs, CleanContext, Cleaner, Defect};

/// Cleaner for plain-text bodies.
pub struct TextCleaner;

impl Cleaner for TextCleaner {
    fn clean(
        &self,
        body: &str,
        _ctx: &CleanContext<'_>,
    ) -> Result<(Option<String>, String), Defect> {
        Ok((None, tidy_paragraphs(body)))
    }
}
