//! Randomised stress test: mutated dev-set pages and random bytes must never
//! make `extract` panic or stall.
//!
//! `cargo test --release --test integration html_stress` runs a short round; set
//! `STRESS_ITERS` for a longer one and `STRESS_BENCH_DIR` to the dev set
//! (bundled tests/fixtures/html-pages, plus STRESS_BENCH_DIR when set).
use std::io::Read;
use std::time::{Duration, Instant};

use collect::clean::html::extract;

use crate::common::{fixture, stress_iters, Rng};

const SNIPPETS: &[&[u8]] = &[
    b"<div>",
    b"</div>",
    b"<table><tr><td>",
    b"</td>",
    b"<li>",
    b"<br>",
    b"<!--",
    b"-->",
    b"<script>",
    b"</script>",
    b"<p>",
    b"<a href='x'>",
    b"</a>",
    b"&nbsp;",
    b"&#x0;",
    b"<nav>",
    b"<footer>",
    b"<pre>",
    b"\xd0\x96",
    b"\xff\xfe",
    b"<noscript>",
    b"<svg>",
    b"<h1>",
    b"<title>",
    b"<form>",
    b"<template>",
    b"<select><option>",
    b"<![CDATA[",
];

fn mutate(rng: &mut Rng, page: &[u8]) -> Vec<u8> {
    let mut out = page.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(out.len() + 1);
        match rng.below(6) {
            0 => out.truncate(at),
            1 => {
                let s = SNIPPETS[rng.below(SNIPPETS.len())];
                let max_times = if rng.below(10) == 0 { 5000 } else { 3 };
                let times = 1 + rng.below(max_times);
                let ins: Vec<u8> = s.iter().copied().cycle().take(s.len() * times).collect();
                out.splice(at..at, ins);
            }
            2 => {
                let end = (at + rng.below(2000)).min(out.len());
                out.drain(at..end);
            }
            3 => {
                let end = (at + rng.below(4000)).min(out.len());
                let chunk = out[at..end].to_vec();
                out.splice(at..at, chunk);
            }
            4 => {
                for _ in 0..rng.below(50) {
                    if !out.is_empty() {
                        let i = rng.below(out.len());
                        out[i] = rng.next() as u8;
                    }
                }
            }
            _ => {
                let n = rng.below(3000);
                let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                out.splice(at..at, junk);
            }
        }
    }
    out
}

/// Seed pages: the bundled real pages, plus a benchmark's gzipped pages when
/// `STRESS_BENCH_DIR` names one (the dev set is never read implicitly).
fn load_pages() -> Vec<Vec<u8>> {
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(fixture("html-pages"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    if let Ok(dir) = std::env::var("STRESS_BENCH_DIR") {
        if let Ok(entries) = std::fs::read_dir(format!("{dir}/html")) {
            paths.extend(entries.flatten().map(|e| e.path()));
        }
    }
    paths.sort();
    paths
        .iter()
        .filter_map(|p| {
            let name = p.to_string_lossy();
            let mut raw = Vec::new();
            let f = std::fs::File::open(p).ok()?;
            if name.ends_with(".html.gz") {
                flate2::read::GzDecoder::new(f).read_to_end(&mut raw).ok()?;
            } else if name.ends_with(".html") {
                std::io::BufReader::new(f).read_to_end(&mut raw).ok()?;
            } else {
                return None;
            }
            Some(raw)
        })
        .collect()
}

#[test]
fn mutated_pages_and_random_bytes_never_panic() {
    let iters = stress_iters(300);
    let pages = load_pages();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut slowest = Duration::ZERO;
    for i in 0..iters {
        let input = if pages.is_empty() || i % 4 == 0 {
            let n = rng.below(if i % 40 == 0 { 2_000_000 } else { 5000 });
            (0..n).map(|_| rng.next() as u8).collect()
        } else {
            let page = &pages[rng.below(pages.len())];
            mutate(&mut rng, page)
        };
        let html = String::from_utf8_lossy(&input);
        let t = Instant::now();
        let e = extract(&html, Some("https://example.com/a/b"));
        slowest = slowest.max(t.elapsed());
        assert!(e.text.len() <= html.len() * 2 + 16);
    }
    eprintln!("stress: {iters} executions, slowest {slowest:?}");
    assert!(
        slowest < Duration::from_secs(20),
        "slowest input took {slowest:?}"
    );
}
