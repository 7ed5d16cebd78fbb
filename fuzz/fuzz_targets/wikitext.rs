#![no_main]

use collect::clean::wikitext::{wikitext_to_text, WikitextOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let src = String::from_utf8_lossy(data);
    for lang in ["en", "ru"] {
        let out = wikitext_to_text(&src, &WikitextOptions::for_lang(lang));
        // Cleaning only removes markup; entity decoding never grows text by
        // more than a few bytes per entity, so the output stays bounded.
        assert!(out.len() <= src.len() * 3 + 16);
    }
});
