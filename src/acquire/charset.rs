//! Decoding page bytes to text: BOM, header charset, `<meta>`, then detection.

use encoding_rs::Encoding;

/// Charset label from a Content-Type header value.
pub fn header_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        if k.trim().eq_ignore_ascii_case("charset") {
            Encoding::for_label(v.trim().trim_matches(|c| c == '"' || c == '\'').as_bytes())
        } else {
            None
        }
    })
}

/// Charset declared in the first 4 KiB by `<meta charset>` or `<meta http-equiv>`.
/// A byte-level scan is enough because every label is ASCII.
pub fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(4096)];
    let lower: Vec<u8> = head.iter().map(|b| b.to_ascii_lowercase()).collect();
    let mut i = 0;
    while let Some(pos) = find(&lower[i..], b"<meta") {
        let start = i + pos;
        let end = find(&lower[start..], b">")
            .map(|e| start + e)
            .unwrap_or(lower.len());
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset") {
            let rest = &tag[c + 7..];
            let rest = trim_start(rest);
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = trim_start(rest);
                let rest = rest
                    .strip_prefix(b"\"")
                    .or_else(|| rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label: Vec<u8> = rest
                    .iter()
                    .take_while(|b| !matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>'))
                    .copied()
                    .collect();
                if let Some(enc) = Encoding::for_label(&label) {
                    // A page that claims UTF-16 in ASCII-compatible bytes is lying (WHATWG).
                    return Some(
                        if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                            encoding_rs::UTF_8
                        } else {
                            enc
                        },
                    );
                }
            }
        }
        i = end.max(start + 1);
        if i >= lower.len() {
            break;
        }
    }
    None
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A body decoded to text.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The text.
    pub text: String,
    /// The encoding used.
    pub encoding: &'static Encoding,
    /// Set when the declared charset was overruled: what was declared, and why it lost.
    pub note: Option<String>,
}

/// Decodes a body. The BOM wins over the header as in browsers (it cannot be wrong); then the
/// header charset, `<meta>` (HTML only), then chardetng with the host's TLD as a hint. A
/// declared charset is not trusted blindly: old sites serve windows-1251 or KOI8-R under
/// `charset=utf-8` or `iso-8859-1`, and decoding by the label would store mojibake that can
/// never be re-decoded. When the declared decode is broken (many invalid sequences) or
/// implausible (Cyrillic read as Latin-1), detection decides, and the note says so.
pub fn decode(bytes: &[u8], content_type: &str, is_html: bool, tld: Option<&str>) -> Decoded {
    if let Some((enc, _)) = Encoding::for_bom(bytes) {
        return plain(bytes, enc);
    }
    let declared = header_charset(content_type)
        .map(|e| (e, "Content-Type"))
        .or_else(|| {
            is_html
                .then(|| meta_charset(bytes))
                .flatten()
                .map(|e| (e, "<meta>"))
        });
    let Some((declared, place)) = declared else {
        return plain(bytes, detect(bytes, tld));
    };
    let (text, used, _) = declared.decode(bytes);
    let broken = replacement_heavy(&text);
    if !broken && !latin_mojibake(&text, used) {
        return Decoded {
            text: text.into_owned(),
            encoding: used,
            note: None,
        };
    }
    let guess = detect(bytes, tld);
    if guess != used {
        let (alt, alt_used, alt_errors) = guess.decode(bytes);
        if !alt_errors && !latin_mojibake(&alt, alt_used) {
            let why = if broken {
                "does not decode cleanly"
            } else {
                "reads as mojibake"
            };
            return Decoded {
                text: alt.into_owned(),
                encoding: alt_used,
                note: Some(format!(
                    "{place} declares {} but the body {why}; decoded as detected {}",
                    used.name(),
                    alt_used.name()
                )),
            };
        }
    }
    Decoded {
        text: text.into_owned(),
        encoding: used,
        note: None,
    }
}

fn plain(bytes: &[u8], enc: &'static Encoding) -> Decoded {
    let (text, used, _) = enc.decode(bytes);
    Decoded {
        text: text.into_owned(),
        encoding: used,
        note: None,
    }
}

fn detect(bytes: &[u8], tld: Option<&str>) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(bytes, true);
    det.guess(tld.map(|t| t.as_bytes()), true)
}

/// More than a stray replacement character or two: a UTF-8 page with one bad byte keeps its
/// label (detection would turn all its other non-ASCII text into mojibake), a page in another
/// charset read as UTF-8 is full of them.
fn replacement_heavy(text: &str) -> bool {
    let (mut chars, mut bad) = (0usize, 0usize);
    for c in text.chars() {
        chars += 1;
        bad += usize::from(c == '\u{fffd}');
    }
    bad > 2 && bad * 200 > chars
}

/// Cyrillic bytes read by a Latin single-byte label decode without errors, but as letters from
/// U+00C0..U+00FF ("Ïðèâåò"); Western languages written in those labels use such letters for a
/// few per cent of their letters, never for most.
fn latin_mojibake(text: &str, enc: &'static Encoding) -> bool {
    if enc != encoding_rs::WINDOWS_1252 && enc != encoding_rs::ISO_8859_15 {
        return false;
    }
    let (mut letters, mut high) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        letters += 1;
        high += usize::from(('\u{c0}'..='\u{ff}').contains(&c));
    }
    letters >= 20 && high * 2 > letters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_meta_detect() {
        let (cp, _, _) =
            encoding_rs::WINDOWS_1251.encode("Привет, мир! Это страница на русском языке.");
        let Decoded {
            text: t,
            encoding: e,
            ..
        } = decode(&cp, "text/html; charset=windows-1251", true, None);
        assert_eq!(e, encoding_rs::WINDOWS_1251);
        assert!(t.starts_with("Привет"));
        let mut page = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\"></head><body>".to_vec();
        let (k, _, _) = encoding_rs::KOI8_R.encode("Съешь же ещё этих мягких французских булок");
        page.extend_from_slice(&k);
        let Decoded {
            text: t,
            encoding: e,
            ..
        } = decode(&page, "text/html", true, None);
        assert_eq!(e, encoding_rs::KOI8_R);
        assert!(t.contains("Съешь же ещё"));
        let Decoded {
            text: t,
            encoding: e,
            ..
        } = decode(&cp, "text/plain", false, Some("ru"));
        assert_eq!(e, encoding_rs::WINDOWS_1251, "{t}");
        let Decoded {
            text: t,
            encoding: e,
            ..
        } = decode(
            b"\xEF\xBB\xBFhi",
            "text/html; charset=windows-1251",
            true,
            None,
        );
        assert_eq!((t.as_str(), e), ("hi", encoding_rs::UTF_8));
        assert_eq!(
            meta_charset(b"<meta charset='utf-8'>"),
            Some(encoding_rs::UTF_8)
        );
    }

    /// Real Russian prose (a Wikipedia article's text), as old sites serve it.
    const RU: &str =
        include_str!("../../tests/fixtures/wikitext-articles/ruwiki_Litva.reference.txt");

    #[test]
    fn mislabelled_cyrillic_is_detected_and_the_disagreement_noted() {
        let ru: String = RU.chars().take(3000).collect();
        let page = format!("<html><body><p>{ru}</p></body></html>");
        for enc in [encoding_rs::WINDOWS_1251, encoding_rs::KOI8_R] {
            let (bytes, _, _) = enc.encode(&page);
            for label in ["text/html; charset=utf-8", "text/html; charset=ISO-8859-1"] {
                let d = decode(&bytes, label, true, Some("ru"));
                assert!(d.text.contains("Литва"), "{} as {label}", enc.name());
                let note = d.note.expect("the overruled label is noted");
                assert!(note.starts_with("Content-Type declares"), "{note}");
            }
        }
        let meta = format!(
            "<html><head><meta charset=\"utf-8\"></head><body>{}</body></html>",
            &page[12..]
        );
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(&meta);
        let d = decode(&bytes, "text/html", true, None);
        assert_eq!(d.encoding, encoding_rs::WINDOWS_1251);
        assert!(d.note.unwrap().starts_with("<meta> declares UTF-8"));
    }

    #[test]
    fn honest_labels_stay_even_with_a_stray_bad_byte() {
        let ru: String = RU.chars().take(1000).collect();
        let mut utf8 = format!("<p>{ru}</p>").into_bytes();
        utf8.insert(3, 0xff);
        let d = decode(&utf8, "text/html; charset=utf-8", true, Some("ru"));
        assert_eq!((d.encoding, d.note.as_deref()), (encoding_rs::UTF_8, None));
        assert_eq!(d.text.matches('\u{fffd}').count(), 1);
        let german = "Über die Größe der Bäume: Straßen, Flüsse und Wälder in Süddeutschland, \
                      schöne Grüße aus München und Köln.";
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(german);
        let d = decode(&bytes, "text/plain; charset=iso-8859-1", false, Some("de"));
        assert_eq!((d.text.as_str(), d.note.as_deref()), (german, None));
    }
}
