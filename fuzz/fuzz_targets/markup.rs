//! Feeds arbitrary text (lossy UTF-8) to the guarded HTML parse, the not-text test and the
//! `<title>` scan: never panics, and a title is one trimmed line.
#![no_main]

use collect::markup::{looks_binary, parse_html, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let _ = parse_html(&html, &Limits::PAGE);
    let _ = looks_binary(&html);
    if let Some(t) = collect::acquire::fetcher::html_title(&html) {
        assert!(!t.is_empty());
        assert!(!t.contains('\n'), "{t:?}");
        assert_eq!(t.trim(), t, "{t:?}");
    }
});
