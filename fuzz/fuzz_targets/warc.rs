//! Feeds arbitrary bytes to the WARC/WET reader as an archive file: plain, or (when the first
//! byte is odd) wrapped as gzip members the way Common Crawl writes them, so the member-by-member
//! decoder and its resync are exercised too. Skips and errors are fine; panics, hangs and
//! documents at offsets past the file are not.
#![no_main]

use collect::readers::warc::{read_archive, Event};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let bytes = if mode & 1 == 1 {
        // Cut the input into members at every 0xFF byte: several records, one member each.
        let mut out = Vec::new();
        for part in body.split(|&b| b == 0xff) {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(part).unwrap();
            out.extend(gz.finish().unwrap());
        }
        out
    } else {
        body.to_vec()
    };
    let dir = std::env::temp_dir().join(format!("collect-fuzz-warc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(if mode & 1 == 1 { "in.warc.gz" } else { "in.warc" });
    std::fs::write(&path, &bytes).unwrap();
    let len = bytes.len() as u64;
    let _ = read_archive(&path, 1 << 20, &mut |e| {
        if let Event::Doc(d) = e {
            assert!(d.offset < len, "a document past the end of the file");
        }
        Ok(())
    });
});
