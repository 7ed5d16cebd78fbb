//! Benchmarks on the perf corpus: signature throughput and `collect dedup` end to end.
//!
//! `cargo run --release --bin collect-bench [CORPUS.jsonl] [--runs N]`
//! Without a corpus (README, "Data for the benchmarks") the bench says so and exits 0. Every figure is a median over runs, printed next to
//! a baseline measured in the same run (a bare split + shingle + CRC32 + mod-25 loop for
//! signatures, `wc -w` for the end-to-end time), since absolute times on a shared machine are
//! noise.

use collect::canon::{CanonText, Canonicalizer, StopWords};
use collect::sign::{Detector, ModM};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn load_texts(path: &Path) -> Vec<String> {
    let data = std::fs::read_to_string(path).expect("corpus readable");
    data.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("corpus line is JSON");
            v["text"].as_str().unwrap_or_default().to_string()
        })
        .collect()
}

/// The floor: whitespace split, 4-word windows, CRC32, keep ≡ 0 mod 25. No canonical form.
fn bare_loop(texts: &[String]) -> usize {
    let mut kept = 0;
    let mut words: Vec<&str> = Vec::new();
    let mut buf = String::new();
    for t in texts {
        words.clear();
        words.extend(t.split_whitespace());
        for w in words.windows(4) {
            buf.clear();
            buf.push_str(w[0]);
            for x in &w[1..] {
                buf.push(' ');
                buf.push_str(x);
            }
            if crc32fast::hash(buf.as_bytes()).is_multiple_of(25) {
                kept += 1;
            }
        }
    }
    kept
}

fn signatures(texts: &[String], det: &ModM) -> usize {
    let stop = StopWords::default_shared();
    let mut c = Canonicalizer::new(stop);
    let mut buf = CanonText::default();
    let mut n = 0;
    for t in texts {
        c.canonicalize_into(t, &mut buf);
        n += det.sign(&buf).len();
    }
    n
}

/// The yardstick of issue-sized corpora: gaoya's MinHash LSH (32 bands × 4 rows of 32-bit
/// minhashes over word 4-shingles, Jaccard 0.5), on all threads, over texts already in memory
/// (so it pays no JSON parsing, which `collect dedup` does). Returns the pairs it finds.
fn gaoya_pairs(texts: &[String]) -> usize {
    use gaoya::minhash::{MinHashIndex, MinHasher, MinHasher32};
    use rayon::prelude::*;
    let (bands, rows) = (32, 4);
    let hasher = MinHasher32::new(bands * rows);
    let sigs: Vec<Vec<u32>> = texts
        .par_iter()
        .map(|t| {
            let words: Vec<&str> = t.split_whitespace().collect();
            hasher.create_signature(words.windows(4))
        })
        .collect();
    let mut index = MinHashIndex::new(bands, rows, 0.5);
    index.par_bulk_insert((0..texts.len()).collect(), sigs.clone());
    index
        .par_bulk_query(&sigs)
        .iter()
        .map(|found| found.len().saturating_sub(1))
        .sum::<usize>()
        / 2
}

fn time_cmd(cmd: &mut Command) -> Option<(f64, Option<u64>)> {
    // GNU time gives the child's peak RSS; without it only the wall time is reported.
    let start = Instant::now();
    let out = cmd.output().ok()?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!("command failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .rev()
        .find_map(|l| {
            l.strip_prefix("maxrss_kb=")
                .and_then(|v| v.trim().parse().ok())
        });
    Some((secs, rss))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let Some(corpus) = args
        .iter()
        .find(|a| a.ends_with(".jsonl"))
        .map(PathBuf::from)
    else {
        println!(
            "skipped: no corpus given; pass a JSONL of {{\"id\", \"text\"}} lines (README, \"Data for the benchmarks\")"
        );
        return;
    };
    if !corpus.exists() {
        println!(
            "skipped: {} not found; pass a JSONL of {{\"id\", \"text\"}} lines (README, \"Data for the benchmarks\")",
            corpus.display()
        );
        return;
    }
    let texts = load_texts(&corpus);
    let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    println!(
        "corpus: {} ({} documents, {mb:.1} MB of text)",
        corpus.display(),
        texts.len()
    );

    let det = ModM::new(4, 25, 8);
    let (mut bare, mut ours) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t = Instant::now();
        std::hint::black_box(bare_loop(&texts));
        bare.push(mb / t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::hint::black_box(signatures(&texts, &det));
        ours.push(mb / t.elapsed().as_secs_f64());
    }
    let (bare, ours) = (median(bare), median(ours));
    println!(
        "signatures, one core: {ours:.1} MB/s (canonical form + stop words + mod-25 + small-text full index); bare loop {bare:.1} MB/s; ratio {:.2}",
        ours / bare
    );

    let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/collect");
    if !exe.exists() {
        println!("skipped end-to-end: build the release binary first (cargo build --release)");
        return;
    }
    let gnu_time = Path::new("/usr/bin/time").exists();
    let wrap = |program: &Path, args: &[&str]| -> Command {
        if gnu_time {
            let mut c = Command::new("/usr/bin/time");
            c.arg("-f").arg("maxrss_kb=%M").arg(program).args(args);
            c
        } else {
            let mut c = Command::new(program);
            c.args(args);
            c
        }
    };
    let corpus_s = corpus.to_string_lossy().to_string();
    let out = std::env::temp_dir().join("collect-bench-pairs.tsv");
    let out_s = out.to_string_lossy().to_string();
    let (mut wc, mut ded, mut rss, mut lsh) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut lsh_pairs = 0;
    for _ in 0..runs {
        let t = Instant::now();
        lsh_pairs = std::hint::black_box(gaoya_pairs(&texts));
        lsh.push(t.elapsed().as_secs_f64());
        if let Some((s, _)) = time_cmd(&mut wrap(Path::new("wc"), &["-w", &corpus_s])) {
            wc.push(s);
        }
        if let Some((s, r)) = time_cmd(&mut wrap(
            &exe,
            &["dedup", &corpus_s, "--quiet", "--out", &out_s],
        )) {
            ded.push(s);
            rss.extend(r);
        }
    }
    if ded.is_empty() || wc.is_empty() {
        println!("end-to-end: no successful run");
        return;
    }
    let (wc, ded, lsh) = (median(wc), median(ded), median(lsh));
    let rss = rss
        .into_iter()
        .max()
        .map(|k| format!("{:.0} MB", k as f64 / 1024.0));
    println!(
        "collect dedup end to end: median {ded:.2} s over {runs} runs (peak RSS {}); wc -w median {wc:.2} s; ratio {:.2}",
        rss.unwrap_or_else(|| "unknown".into()),
        ded / wc
    );
    println!(
        "gaoya MinHash LSH (32x4, all {} threads, texts in memory): median {lsh:.2} s, {lsh_pairs} pairs; collect dedup / gaoya: {:.2}",
        rayon::current_num_threads(),
        ded / lsh
    );
}
