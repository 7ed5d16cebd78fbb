//! Feeds arbitrary bytes, read as lossy UTF-8, to `html::extract`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let url = html.get(..html.len().min(64));
    let e = collect::clean::html::extract(&html, url);
    // Output is built from input text only, so it cannot outgrow it much; the HTML parser
    // turns each NUL byte into U+FFFD (3 bytes), as the HTML standard says.
    assert!(e.text.len() <= html.len() * 3 + 16);
});
