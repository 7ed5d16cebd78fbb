//! Feeds arbitrary text to the JSONL line parser, line by line as `for_each_jsonl_line` splits a
//! file (trailing CR/LF cut, blank lines skipped): errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = Path::new("fuzz.jsonl");
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        match collect::readers::local::parse_json_line(path, i + 1, line) {
            Ok(doc) => {
                let _ = doc.id.into_string();
                // The text is a slice of the line or unescaped from it: never longer.
                assert!(doc.text.len() <= line.len());
            }
            // Errors name the file and line.
            Err(e) => assert!(e.to_string().starts_with(&format!("fuzz.jsonl:{}:", i + 1))),
        }
    }
});
