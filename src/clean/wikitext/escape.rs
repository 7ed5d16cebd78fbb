//! Private Use Area stand-ins that carry `<nowiki>` text and inline tag
//! boundaries through the line-based phase.

/// `<nowiki>` text must survive the line-based phase untouched, so markup
/// characters in it are moved into the Private Use Area and moved back last.
const ESC_BASE: u32 = 0xF700;

/// Stands where an inline HTML tag was, so apostrophe runs on either side of
/// it stay apart as they do in MediaWiki.
pub(super) const TAG_BOUNDARY: char = '\u{F6FF}';

pub(super) fn push_escaped(out: &mut String, s: &str) {
    for ch in s.chars() {
        if matches!(
            ch,
            '\'' | '['
                | ']'
                | '{'
                | '}'
                | '|'
                | '='
                | '*'
                | '#'
                | ':'
                | ';'
                | '<'
                | '>'
                | '&'
                | '_'
        ) {
            out.push(char::from_u32(ESC_BASE + ch as u32).unwrap_or(ch));
        } else if ch == '\n' {
            out.push(' ');
        } else {
            out.push(ch);
        }
    }
}

pub(super) fn unescape_char(ch: char) -> char {
    let c = ch as u32;
    if (ESC_BASE..ESC_BASE + 0x80).contains(&c) {
        char::from_u32(c - ESC_BASE).unwrap_or(ch)
    } else {
        ch
    }
}
