//! Feeds arbitrary bytes to `charset::decode`, with the Content-Type, the HTML flag and the TLD
//! hint drawn from the input. Never panics; and a body that is valid UTF-8 under a UTF-8 label
//! comes back unchanged (less a UTF-8 BOM).
#![no_main]

use collect::acquire::charset::{decode, header_charset};
use libfuzzer_sys::fuzz_target;

const TYPES: [&str; 6] = [
    "text/html; charset=utf-8",
    "text/html",
    "text/plain; charset=windows-1251",
    "text/html; charset=ISO-8859-1",
    "text/plain; charset=\"UTF-8\"",
    "application/xhtml+xml; charset=koi8-r",
];
const TLDS: [Option<&str>; 4] = [None, Some("ru"), Some("de"), Some("jp")];

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let is_html = flags & 1 != 0;
    let tld = TLDS[usize::from(flags >> 1) & 3];
    // High bit set: the Content-Type is the input up to the first NUL; else a fixed one.
    let (content_type, body) = if flags & 0x80 != 0 {
        let cut = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let ct = String::from_utf8_lossy(&rest[..cut]).into_owned();
        (ct, rest.get(cut + 1..).unwrap_or_default())
    } else {
        (
            TYPES[usize::from(flags >> 3) % TYPES.len()].to_string(),
            rest,
        )
    };
    let d = decode(body, &content_type, is_html, tld);
    if let Ok(s) = std::str::from_utf8(body) {
        if header_charset(&content_type) == Some(encoding_rs::UTF_8) {
            let expected = s.strip_prefix('\u{feff}').unwrap_or(s);
            assert_eq!(d.text, expected, "{content_type}: {:?}", d.note);
            assert_eq!(d.encoding, encoding_rs::UTF_8);
        }
    }
});
