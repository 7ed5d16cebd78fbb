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

/// Decodes a body. The BOM wins over the header as in browsers (it cannot be
/// wrong); then the header charset, `<meta>` (HTML only), then chardetng with
/// the host's TLD as a hint. Returns the text and the encoding used.
pub fn decode(
    bytes: &[u8],
    content_type: &str,
    is_html: bool,
    tld: Option<&str>,
) -> (String, &'static Encoding) {
    let enc = Encoding::for_bom(bytes)
        .map(|(e, _)| e)
        .or_else(|| header_charset(content_type))
        .or_else(|| if is_html { meta_charset(bytes) } else { None })
        .unwrap_or_else(|| {
            let mut det = chardetng::EncodingDetector::new();
            det.feed(bytes, true);
            det.guess(tld.map(|t| t.as_bytes()), true)
        });
    let (text, used, _) = enc.decode(bytes);
    (text.into_owned(), used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_meta_detect() {
        let (cp, _, _) =
            encoding_rs::WINDOWS_1251.encode("Привет, мир! Это страница на русском языке.");
        let (t, e) = decode(&cp, "text/html; charset=windows-1251", true, None);
        assert_eq!(e, encoding_rs::WINDOWS_1251);
        assert!(t.starts_with("Привет"));
        let mut page = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\"></head><body>".to_vec();
        let (k, _, _) = encoding_rs::KOI8_R.encode("Съешь же ещё этих мягких французских булок");
        page.extend_from_slice(&k);
        let (t, e) = decode(&page, "text/html", true, None);
        assert_eq!(e, encoding_rs::KOI8_R);
        assert!(t.contains("Съешь же ещё"));
        let (t, e) = decode(&cp, "text/plain", false, Some("ru"));
        assert_eq!(e, encoding_rs::WINDOWS_1251, "{t}");
        let (t, e) = decode(
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
}
