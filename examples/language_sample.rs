//! How often language detection on a text's first N bytes decides differently from detection
//! on the whole text, and what each sample size costs: the measurement behind
//! `clean::LANGUAGE_SAMPLE_BYTES`.
//!
//! `cargo run --release --example language_sample -- CORPUS.jsonl [MORE.jsonl …]`
//! (JSONL with a `text` field, one document a line).

use collect::clean::detect_language_in;
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
    Ok(())
}
