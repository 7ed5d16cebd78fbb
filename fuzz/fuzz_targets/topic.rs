//! Feeds arbitrary text (lossy UTF-8) to the topic-file parser: errors are fine, panics are not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match collect::topic::Topic::parse(&text, Path::new("topics/fuzz.yaml")) {
        // What the rest of the run asks of a parsed topic must hold too.
        Ok(t) => {
            let names = t.source_names();
            assert_eq!(names.len(), t.sources.len());
            for s in &t.sources {
                let _ = (s.kind(), s.display_name());
            }
        }
        // Errors point into the text: 1-based positions.
        Err(e) => assert!(e.line >= 1 && e.column >= 1, "{e}"),
    }
});
