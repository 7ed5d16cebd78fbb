//! Where signing's time goes, on one core: the canonical form, the shingles' CRC32s, and the
//! whole mod-25 signature, each timed over every text of a JSONL corpus (medians of runs).
//!
//! `cargo run --release --example sign_stages -- CORPUS.jsonl [RUNS]`
//!
//! `collect-bench` measures the signatures against a bare loop; this splits them, for work on
//! one stage (a change to one stage shows here before it shows end to end).

use collect::canon::{CanonText, Canonicalizer, StopWords};
use collect::sign::{for_each_shingle_crc, Detector, ModM, ShingleSeq};
use std::time::Instant;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: sign_stages CORPUS.jsonl [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let data = match std::fs::read_to_string(&path) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    // Lines that are not {"text": ...} objects count as empty texts.
    let texts: Vec<String> = data
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
            v["text"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    let mb = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
    let stop = StopWords::default_shared();
    let det = ModM::new(4, 25, 8);
    let canons: Vec<CanonText> = {
        let mut c = Canonicalizer::new(stop);
        texts.iter().map(|t| c.canonicalize(t)).collect()
    };
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    let (mut tc, mut tr, mut ts, mut tq) = (vec![], vec![], vec![], vec![]);
    let mut sink = 0u64;
    for _ in 0..runs {
        let mut c = Canonicalizer::new(stop);
        let mut buf = CanonText::default();
        let t = Instant::now();
        for x in &texts {
            c.canonicalize_into(x, &mut buf);
            sink += buf.len() as u64;
        }
        tc.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for x in &canons {
            for_each_shingle_crc(x, 4, |h| sink = sink.wrapping_add(u64::from(h)));
        }
        tr.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for x in &canons {
            sink += det.sign(x).len() as u64;
        }
        ts.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        for x in &canons {
            sink += ShingleSeq::new(x, 4).set().len() as u64;
        }
        tq.push(t.elapsed().as_secs_f64());
    }
    println!(
        "{mb:.1} MB of text, one core: canonical form {:.3} s ({:.0} MB/s), shingle crc {:.3} s, sign {:.3} s, shingle sequences (verification) {:.3} s  [{sink}]",
        med(tc.clone()),
        mb / med(tc),
        med(tr),
        med(ts),
        med(tq)
    );
}
