//! How often language detection on a text's first N bytes decides differently from detection
//! on the whole text, and what each sample size costs: the measurement behind
//! `clean::LANGUAGE_SAMPLE_BYTES`. Then `clean::language`'s detection against `whatlang::detect`
//! on the same samples: decisions that differ (there should be none) and the time of each.
//!
//! `cargo run --release --example language_sample -- CORPUS.jsonl [MORE.jsonl …]`
//! (JSONL with a `text` field, one document a line).

use collect::clean::language::{detect, sample_of};
use collect::clean::{detect_language_in, LANGUAGE_SAMPLE_BYTES};
use std::io::BufRead;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let files: Vec<String> = std::env::args().skip(1).collect();
    anyhow::ensure!(!files.is_empty(), "usage: language_sample CORPUS.jsonl …");
    let mut texts = Vec::new();
    for f in &files {
        let r = std::io::BufReader::new(std::fs::File::open(f)?);
        for line in r.lines() {
            let v: serde_json::Value = serde_json::from_str(&line?)?;
            if let Some(t) = v["text"].as_str() {
                texts.push(t.to_string());
            }
        }
    }
    let whole: Vec<Option<String>> = texts
        .iter()
        .map(|t| detect_language_in(t, usize::MAX))
        .collect();
    println!(
        "{} texts; sample bytes, decisions unlike the whole text's, seconds",
        texts.len()
    );
    for sample in [65536, 16384, 4096, 2048, 1024, 512] {
        let started = Instant::now();
        let got: Vec<Option<String>> = texts
            .iter()
            .map(|t| detect_language_in(t, sample))
            .collect();
        let secs = started.elapsed().as_secs_f64();
        let differ = got.iter().zip(&whole).filter(|(a, b)| a != b).count();
        println!("{sample}\t{differ}\t{secs:.2}");
    }
    let samples: Vec<&str> = texts
        .iter()
        .map(|t| sample_of(t, LANGUAGE_SAMPLE_BYTES))
        .collect();
    let started = Instant::now();
    let ours: Vec<_> = samples.iter().map(|t| detect(t)).collect();
    let ours_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let theirs: Vec<_> = samples
        .iter()
        .map(|t| whatlang::detect(t).map(|i| (i.lang(), i.confidence())))
        .collect();
    let theirs_secs = started.elapsed().as_secs_f64();
    let differ = ours
        .iter()
        .zip(&theirs)
        .filter(|(a, b)| a.map(|(l, c)| (l, c.to_bits())) != b.map(|(l, c)| (l, c.to_bits())))
        .count();
    println!(
        "clean::language vs whatlang::detect on {LANGUAGE_SAMPLE_BYTES}-byte samples: {differ} decisions differ; {ours_secs:.2} s vs {theirs_secs:.2} s ({:.1}x)",
        theirs_secs / ours_secs
    );
    Ok(())
}
