//! Repair of text decoded twice: UTF-8 bytes once read as Windows-1252 (or Latin-1) or as
//! Windows-1251 and written out as UTF-8 again — "donâ€™t", "1.Â Â Myth", "Ð¿Ñ€Ð¸Ð²ÐµÑ‚",
//! "РїСЂРёРІРµС‚". A page or file stored so shows every reader that text, and its words are
//! not the words of the text it meant (for the filters, the signatures and the reader of the
//! collection).
//!
//! Each run of chars beyond ASCII is encoded back into the one-byte code page it was read
//! from and decoded as UTF-8; the run is replaced only when all of it decodes. Real text in
//! those code pages is seldom valid UTF-8: each letter of the upper half would have to be
//! followed by one of the chars that stand for continuation bytes (`€`, `™`, `©`, `«`, and
//! in Windows-1251 `ё` and the Serbian and Ukrainian letters). Where a short run can be both
//! ("Ü—", "ВЈ"), what it would decode into decides (`decoded_once`).

use std::borrow::Cow;

/// `text` with every run of chars beyond ASCII that is UTF-8 decoded twice decoded once;
/// borrowed when there is none.
pub fn repair_mojibake(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut repaired: Option<String> = None;
    let mut copied = 0;
    let mut buf = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        i += ascii_prefix(&bytes[i..]);
        if i == bytes.len() {
            break;
        }
        // A run of bytes of the upper half is a run of whole chars: every byte of a char
        // beyond ASCII is one.
        let start = i;
        while i < bytes.len() && bytes[i] >= 0x80 {
            i += 1;
        }
        if let Some(fixed) = decoded_once(&text[start..i], &mut buf) {
            let out = repaired.get_or_insert_with(|| String::with_capacity(text.len()));
            out.push_str(&text[copied..start]);
            out.push_str(fixed);
            copied = i;
        }
    }
    match repaired {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// Length of the ASCII bytes at the start of `bytes`, sixteen bytes at a time where it can:
/// an HTML page is mostly ASCII markup.
fn ascii_prefix(bytes: &[u8]) -> usize {
    const HIGH: u128 = u128::from_le_bytes([0x80; 16]);
    let mut n = 0;
    for chunk in bytes.chunks_exact(16) {
        let word = u128::from_le_bytes(chunk.try_into().unwrap_or([0x80; 16]));
        if word & HIGH != 0 {
            break;
        }
        n += 16;
    }
    n + bytes[n..].iter().take_while(|b| b.is_ascii()).count()
}

/// `run` decoded as the UTF-8 it was before a one-byte code page read it, when all of it is
/// such UTF-8 and every char it gives is one that page's readers write; `buf` holds the
/// bytes.
///
/// A char of two bytes is a letter and a symbol in the code page, which real text sometimes
/// has side by side ("Ü—", "×\u{a0}", "Её"): what they would give (Syriac, Hebrew, "Ÿ") is
/// not taken. Three or four bytes are three or four chars in a row that no text has.
fn decoded_once<'b>(run: &str, buf: &'b mut Vec<u8>) -> Option<&'b str> {
    let encodes = |page: fn(char) -> Option<u8>, written: fn(char) -> bool, buf: &mut Vec<u8>| {
        buf.clear();
        run.chars().all(|c| page(c).map(|b| buf.push(b)).is_some())
            && std::str::from_utf8(buf)
                .is_ok_and(|s| s.chars().all(|c| c >= '\u{800}' || written(c)))
    };
    // Western pages' text: Latin letters and symbols, Greek and Cyrillic.
    let western = |c: char| matches!(c, '\u{a0}'..='\u{24f}' | '\u{370}'..='\u{4ff}');
    // Russian pages' text: Cyrillic letters, and Latin-1's symbols and letters ("«", "£", a
    // no-break space, "é"), not the rest of Latin ("Её" would be "Ÿ").
    let cyrillic = |c: char| matches!(c, '\u{a0}'..='\u{ff}' | '\u{400}'..='\u{4ff}');
    // Two Cyrillic letters can be two bytes of UTF-8 too: the Serbian and Ukrainian letters
    // of the upper half's first rows follow a capital in abbreviations ("ВЈ", "ВІ"). A run
    // of two such letters stands only for a Russian letter, as a one-letter word decoded
    // twice is ("РІ", "СЃ": "в", "с").
    let mut chars = run.chars();
    let two_letters = matches!(
        (chars.next(), chars.next(), chars.next()),
        (Some(_), Some(second), None) if second.is_alphabetic()
    );
    let russian_letter = |c: char| matches!(c, '\u{400}'..='\u{4ff}');
    if encodes(western_byte, western, buf)
        || encodes(
            cyrillic_byte,
            if two_letters {
                russian_letter
            } else {
                cyrillic
            },
            buf,
        )
    {
        std::str::from_utf8(buf).ok()
    } else {
        None
    }
}

/// The byte of `c` in Windows-1252, or in Latin-1 for the bytes 0x80–0x9F that
/// Windows-1252 leaves undefined or that a Latin-1 decoder read as control chars.
fn western_byte(c: char) -> Option<u8> {
    const SPECIAL: [(char, u8); 27] = [
        ('€', 0x80),
        ('‚', 0x82),
        ('ƒ', 0x83),
        ('„', 0x84),
        ('…', 0x85),
        ('†', 0x86),
        ('‡', 0x87),
        ('ˆ', 0x88),
        ('‰', 0x89),
        ('Š', 0x8a),
        ('‹', 0x8b),
        ('Œ', 0x8c),
        ('Ž', 0x8e),
        ('‘', 0x91),
        ('’', 0x92),
        ('“', 0x93),
        ('”', 0x94),
        ('•', 0x95),
        ('–', 0x96),
        ('—', 0x97),
        ('˜', 0x98),
        ('™', 0x99),
        ('š', 0x9a),
        ('›', 0x9b),
        ('œ', 0x9c),
        ('ž', 0x9e),
        ('Ÿ', 0x9f),
    ];
    match c as u32 {
        0x80..=0xff => Some(c as u8),
        _ => SPECIAL.iter().find(|(s, _)| *s == c).map(|&(_, b)| b),
    }
}

/// The byte of `c` in Windows-1251.
fn cyrillic_byte(c: char) -> Option<u8> {
    // The upper half's first two rows, 0x80–0xBF (0x98 is undefined).
    const UPPER: [char; 64] = [
        'Ђ', 'Ѓ', '‚', 'ѓ', '„', '…', '†', '‡', '€', '‰', 'Љ', '‹', 'Њ', 'Ќ', 'Ћ', 'Џ', 'ђ', '‘',
        '’', '“', '”', '•', '–', '—', '\u{98}', '™', 'љ', '›', 'њ', 'ќ', 'ћ', 'џ', '\u{a0}', 'Ў',
        'ў', 'Ј', '¤', 'Ґ', '¦', '§', 'Ё', '©', 'Є', '«', '¬', '\u{ad}', '®', 'Ї', '°', '±', 'І',
        'і', 'ґ', 'µ', '¶', '·', 'ё', '№', 'є', '»', 'ј', 'Ѕ', 'ѕ', 'ї',
    ];
    match c {
        'А'..='я' => Some((c as u32 - 'А' as u32) as u8 + 0xc0),
        '\u{98}' => None,
        _ => UPPER.iter().position(|&u| u == c).map(|at| 0x80 + at as u8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` as a reader that decoded its UTF-8 bytes with `page` shows it.
    fn misread(text: &str, page: fn(char) -> Option<u8>) -> String {
        let table: Vec<(u8, char)> = (0x80..=0xffffu32)
            .filter_map(char::from_u32)
            .filter_map(|c| page(c).map(|b| (b, c)))
            .collect();
        text.bytes()
            .map(|b| {
                if b.is_ascii() {
                    b as char
                } else {
                    table
                        .iter()
                        .find(|(x, _)| *x == b)
                        .map(|&(_, c)| c)
                        .unwrap()
                }
            })
            .collect()
    }

    #[test]
    fn text_decoded_twice_is_decoded_once() {
        let western: fn(char) -> Option<u8> = western_byte;
        let cyrillic: fn(char) -> Option<u8> = cyrillic_byte;
        for (text, pages) in [
            // "ï" read as Windows-1251 is "ГЇ", two letters: taken as written.
            ("Don’t say “never” — café, naïve, 25 °C…", vec![western]),
            ("Don’t say “never” — café, 25 °C…", vec![western, cyrillic]),
            ("в доме и с садом, 25 °C", vec![western, cyrillic]),
            (
                "1.\u{a0}\u{a0}\u{a0}Myth: all fat is bad",
                vec![western, cyrillic],
            ),
            // A lone "£" read as Windows-1251 is "ВЈ", two letters, and stays so ("ВЈ" is a
            // Serbian abbreviation).
            (
                "Привет, мир! Ёжик «в тумане» — № 5.",
                vec![western, cyrillic],
            ),
            ("中文 and emoji 🦀", vec![western, cyrillic]),
            ("Ελληνικά, Łódź, Ærø", vec![western]),
        ] {
            for page in pages {
                let seen = misread(text, page);
                assert_ne!(seen, text);
                assert_eq!(repair_mojibake(&seen), text, "{seen}");
            }
        }
        assert_eq!(repair_mojibake("donâ€™t"), "don’t");
        assert_eq!(repair_mojibake("Ð¿Ñ€Ð¸Ð²ÐµÑ‚"), "привет");
        assert_eq!(repair_mojibake("РїСЂРёРІРµС‚"), "привет");
    }

    #[test]
    fn text_read_right_is_left_alone() {
        for text in [
            "Plain ASCII.",
            "Don’t say “never” — café, naïve, 25 °C, £5, ½ cup, Ærøskøbing, Straße.",
            "Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю. Ёж, «ёлка».",
            "Сёмга, Жёлтый, ВЕЛИКИЙ, в «Газете», № 5, т. е. и т. п.",
            "Ελληνικά, 中文, 🦀, Ünïcödé",
            // A letter and a symbol side by side, which two bytes of UTF-8 would also be.
            "ÜBER—which, 3 ×\u{a0}82.55, Её мать, Војска Југославије (ВЈ), ВІЛ",
        ] {
            assert!(matches!(repair_mojibake(text), Cow::Borrowed(_)), "{text}");
        }
    }
}
