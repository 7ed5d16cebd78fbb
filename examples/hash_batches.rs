//! How fast a build's SHA-256 hashing goes each way on this CPU: ring one message at a time
//! (which uses the CPU's SHA instructions where it has them), `tape-sha256`'s vector lanes on
//! batches sorted by length, and two messages at a time on the SHA instructions
//! (`store::sha_streams`, where the CPU has them), for the two kinds of message a build
//! hashes: a document's id (its locator, a zero byte and its body, in batches of 64 as the
//! reader forms them) and its cleaned text (in halves of a stored batch, 128). The
//! measurement behind `store::kept::sha256_many`.
//!
//! `cargo run --release --example hash_batches -- CORPUS.jsonl` (JSONL with `id` and `text`).

use std::io::BufRead;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: hash_batches CORPUS.jsonl"))?;
    let mut docs: Vec<(String, String)> = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&path)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let id = v["id"].as_str().unwrap_or_default();
        docs.push((
            format!("jsonl:{id}"),
            v["text"].as_str().unwrap_or_default().to_string(),
        ));
    }
    // Held to the end of the run: the messages borrow from it.
    let docs: &'static [(String, String)] = docs.leak();
    let bytes: usize = docs.iter().map(|(_, t)| t.len()).sum();
    println!(
        "{} texts, {:.1} MB; SHA instructions: {}; MB/s, median of 5",
        docs.len(),
        bytes as f64 / 1e6,
        collect::store::kept::sha_instructions()
    );
    let mb_s = |run: &dyn Fn() -> u8| {
        let mut rates: Vec<f64> = (0..5)
            .map(|_| {
                let started = Instant::now();
                std::hint::black_box(run());
                bytes as f64 / started.elapsed().as_secs_f64() / 1e6
            })
            .collect();
        rates.sort_by(f64::total_cmp);
        rates[2]
    };
    for (kind, with_locator, batch) in [("ids", true, 64), ("texts", false, 128)] {
        let messages = |chunk: &'static [(String, String)]| -> Vec<tape_sha256::Message<'static>> {
            chunk
                .iter()
                .map(|(locator, text)| match with_locator {
                    true => tape_sha256::Message::pair(locator.as_bytes(), b"\0", text.as_bytes()),
                    false => tape_sha256::Message::new(text.as_bytes()),
                })
                .collect()
        };
        let one_at_a_time = mb_s(&|| {
            let mut x = 0;
            for chunk in docs.chunks(batch) {
                for m in messages(chunk) {
                    let mut h = ring::digest::Context::new(&ring::digest::SHA256);
                    for piece in [m.prefix, m.body, m.tail] {
                        h.update(piece);
                    }
                    x ^= h.finish().as_ref()[0];
                }
            }
            x
        });
        let lanes = mb_s(&|| {
            let mut x = 0;
            for chunk in docs.chunks(batch) {
                let mut sorted = messages(chunk);
                sorted.sort_by_key(|m| m.prefix.len() + m.body.len() + m.tail.len());
                let mut digests = vec![[0u8; 32]; sorted.len()];
                tape_sha256::hash_messages(&sorted, &mut digests);
                x ^= digests[0][0];
            }
            x
        });
        let streams = mb_s(&|| {
            let mut x = 0;
            for chunk in docs.chunks(batch) {
                let digests = collect::store::sha_streams::hash_messages(&messages(chunk))
                    .unwrap_or_default();
                x ^= digests.first().map_or(0, |d| d[0]);
            }
            x
        });
        println!(
            "{kind} in batches of {batch}: ring one at a time {one_at_a_time:.0}, lanes {lanes:.0}, two streams {streams:.0}"
        );
    }
    Ok(())
}
