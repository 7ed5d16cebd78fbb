//! Character counting, space normalising and word splitting shared by the phases.

pub(super) fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{ad}'
    )
}

pub(super) fn count_chars(s: &str) -> u32 {
    s.chars().filter(|c| !c.is_whitespace()).count() as u32
}

pub(super) fn normalize_space(s: &str) -> String {
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

/// The words of `s` in lower case, with everything between words (spaces, punctuation,
/// markup signs) a break.
pub(super) fn lowercase_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}
