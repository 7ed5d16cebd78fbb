//! `warc` sources through the real binary: archives written by warcio (`tests/fixtures/warc/`,
//! see its SOURCE.md) and corrupt variants of them. Documents reach the manifest with URL, date
//! and status; bad records are recorded with their byte offsets and the run exits 3 (`--strict`:
//! 2); a rerun adds and records nothing twice; a large archive is read in bounded memory.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use crate::common::*;
use crate::fault_zoo::run_measured;

fn topic(dir: &Path, paths: &[&Path], extra: &str) -> String {
    let list: Vec<String> = paths
        .iter()
        .map(|p| format!("\"{}\"", p.display()))
        .collect();
    write(
        dir,
        "topic.yaml",
        &format!(
            "name: archives\nlanguages: [en, ru]\nsources:\n  - {{kind: warc, path: [{}]{extra}}}\nfilter: {{min_words: 1, language: false}}\n",
            list.join(", ")
        ),
    )
    .display()
    .to_string()
}

/// (locator, reason) of every recorded skip.
fn skipped(dir: &Path, out: &str) -> Vec<(String, String)> {
    let o = run_ok(dir, &["stats", out, "--skipped", "--json"]);
    json_lines(&stdout(&o))
        .iter()
        .map(|v| {
            (
                v["locator"].as_str().unwrap().to_string(),
                v["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn archives_build_with_urls_dates_and_bad_records_recorded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let pages = fixture("warc/pages.warc.gz");
    let wet = fixture("warc/articles.wet.gz");
    let cut = fixture("warc/corrupt/truncated-member.warc.gz");
    let t = topic(dir, &[&pages, &wet, &cut], "");
    let out = dir.join("out");
    let o = out.to_str().unwrap();

    let ran = run(dir, &["build", &t, "--out", o, "--quiet"]);
    assert_eq!(ran.status.code(), Some(3), "stderr: {}", stderr(&ran));

    let rows = manifest(&out);
    // Four pages, two WET texts, three pages of the cut archive: the same texts under
    // other locators are duplicates of the first copies. Each archive's PDF record goes to
    // the document reader: a stub with no text, so a document kept out with its reason.
    assert_eq!(rows.len(), 11, "{rows:#?}");
    let pdfs: Vec<&serde_json::Value> = rows.iter().filter(|r| r["format"] == "pdf").collect();
    assert_eq!(pdfs.len(), 2, "{rows:#?}");
    for p in pdfs {
        assert_eq!(p["url"], "https://example.org/paper.pdf");
        assert_eq!(p["status"], "filtered", "{p}");
        assert!(
            matches!(p["reason"].as_str(), Some("no-text" | "corrupt")),
            "{p}"
        );
    }
    let py = rows
        .iter()
        .find(|r| {
            r["locator"]
                .as_str()
                .unwrap()
                .ends_with("pages.warc.gz@622")
        })
        .expect("the python docs page");
    assert_eq!(py["url"], "https://docs.python.org/3/library/os.path.html");
    assert_eq!(py["date"], "2024-03-01T10:00:00Z");
    // The cut archive holds the same page: one copy is kept, the other is its duplicate.
    let copies: Vec<&str> = rows
        .iter()
        .filter(|r| r["url"] == py["url"])
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(copies.len(), 2, "{copies:?}");
    assert!(
        copies.contains(&"kept") && copies.contains(&"duplicate"),
        "{copies:?}"
    );
    assert!(rows
        .iter()
        .all(|r| r["date"].is_string() && r["url"].is_string()));
    assert!(rows.iter().any(|r| r["status"] == "duplicate"));

    let skips = skipped(dir, o);
    assert_eq!(
        skips,
        [(format!("{}@13657", cut.display()), "bad-record".to_string())]
    );

    // stats carries the formats and the archive dates.
    let st: serde_json::Value =
        serde_json::from_str(&stdout(&run_ok(dir, &["stats", o, "--json"]))).unwrap();
    assert_eq!(st["formats"]["pdf"], 2, "{st}");
    assert_eq!(st["dates"]["dated"], 11, "{st}");
    assert!(
        st["dates"]["first"].as_str() <= st["dates"]["last"].as_str(),
        "{st}"
    );
    let text = stdout(&run_ok(dir, &["stats", o]));
    assert!(
        text.contains("Formats: ") && text.contains("pdf 2"),
        "{text}"
    );

    let exported = run_ok(dir, &["export", o, "--format", "jsonl"]);
    let _ = &pages;
    let lines = json_lines(&stdout(&exported));
    assert!(lines.iter().all(|l| l["date"].is_string()), "{lines:?}");

    // An update passes by the two whole archives and reads the cut one again: nothing new,
    // the same skips, not twice as many.
    let before = std::fs::read_to_string(out.join("manifest.jsonl")).unwrap();
    let ran = run(dir, &["--json", "update", &t, "--out", o, "--quiet"]);
    assert_eq!(ran.status.code(), Some(3), "stderr: {}", stderr(&ran));
    let u: serde_json::Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(
        (u["read"].as_u64(), u["new"].as_u64()),
        (Some(4), Some(0)),
        "{u}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("manifest.jsonl")).unwrap(),
        before
    );
    assert_eq!(skipped(dir, o), skips);

    // Strict: the first bad record ends the build as bad input, naming file and offset.
    let ran = run(dir, &["build", &t, "--out", o, "--force", "--strict"]);
    assert_eq!(ran.status.code(), Some(2), "stderr: {}", stderr(&ran));
    assert!(stderr(&ran).contains("@13657"), "{}", stderr(&ran));
}

/// Writes one gzip member holding a WARC record.
fn member(out: &mut impl Write, kind: &str, ctype: &str, block: &[u8], level: u32) {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    write!(
        e,
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: http://big.test/\r\nWARC-Date: 2024-01-01T00:00:00Z\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .unwrap();
    e.write_all(block).unwrap();
    e.write_all(b"\r\n\r\n").unwrap();
    out.write_all(&e.finish().unwrap()).unwrap();
}

#[test]
fn a_large_archive_is_read_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let small = dir.join("small.warc.gz");
    let big = dir.join("big.warc.gz");
    let text = b"<p>one small page of the archive, read as a document</p>";
    let mut f = std::io::BufWriter::new(std::fs::File::create(&small).unwrap());
    member(&mut f, "conversion", "text/html", text, 1);
    drop(f);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&big).unwrap());
    member(&mut f, "conversion", "text/html", text, 1);
    // 8 records of 24 MiB over the 4 MiB cap, and 1600 images of 64 KiB, stored
    // uncompressed: 200 MiB of records, 100 MiB of archive.
    let huge = b"<p>filler filler</p>".repeat(24 << 20 >> 4);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut image = vec![0u8; 64 << 10];
    for k in 0..1600 {
        if k % 200 == 0 {
            member(&mut f, "conversion", "text/html", &huge, 1);
        }
        for b in image.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\n\r\n".to_vec();
        block.extend_from_slice(&image);
        member(
            &mut f,
            "response",
            "application/http; msgtype=response",
            &block,
            0,
        );
    }
    drop(f);
    let size = std::fs::metadata(&big).unwrap().len();
    assert!(size > 100 << 20, "{size}");

    let measure = |archive: &Path, name: &str| {
        let t = topic(dir, &[archive], ", max_record_bytes: 4194304");
        let out = dir.join(name);
        let (code, err, took, rss_kib) = run_measured(
            dir,
            &["build", &t, "--out", out.to_str().unwrap(), "--quiet"],
            Duration::from_secs(300),
        );
        (code, err, took, rss_kib, out)
    };
    let (code, err, _, base_kib, _) = measure(&small, "small");
    assert_eq!(code, 0, "{err}");
    let (code, err, took, big_kib, out) = measure(&big, "big");
    assert_eq!(code, 3, "{err}");
    assert_eq!(manifest(&out).len(), 1);
    eprintln!(
        "archive of {} MiB: peak RSS {} MiB (one-record archive: {} MiB), {took:?}",
        size >> 20,
        big_kib >> 10,
        base_kib >> 10
    );
    // Less than one of the 24 MiB records above what a one-record archive takes: nothing
    // over the cap was held, and nothing grew with the archive.
    assert!(
        big_kib < base_kib + (16 << 10),
        "peak RSS {big_kib} KiB against {base_kib} KiB for one record"
    );
}
