//! How small, and at what cost, the store's texts get under each compressor considered: zstd
//! (levels 1 and 3), lz4 and deflate, each text a frame of its own (the store reads texts one
//! at a time). Run: `cargo run --release --example text_compression -- CORPUS.jsonl`.

use std::io::{BufRead, Read, Write};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: text_compression CORPUS.jsonl"))?;
    let mut texts = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(&path)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if let Some(t) = v.get("text").and_then(|t| t.as_str()) {
            texts.push(t.to_string());
        }
    }
    let plain: usize = texts.iter().map(String::len).sum();
    println!("{} texts, {plain} bytes", texts.len());
    println!("compressor | bytes | ratio | compress s | decompress s");
    type Pack = Box<dyn Fn(&[u8]) -> Vec<u8>>;
    type Unpack = Box<dyn Fn(&[u8]) -> Vec<u8>>;
    let kinds: Vec<(&str, Pack, Unpack)> = vec![
        (
            "zstd-1",
            Box::new(|t| zstd::bulk::compress(t, 1).unwrap()),
            Box::new(|z| zstd::stream::decode_all(z).unwrap()),
        ),
        (
            "zstd-3",
            Box::new(|t| zstd::bulk::compress(t, 3).unwrap()),
            Box::new(|z| zstd::stream::decode_all(z).unwrap()),
        ),
        (
            "lz4",
            Box::new(lz4_flex::compress_prepend_size),
            Box::new(|z| lz4_flex::decompress_size_prepended(z).unwrap()),
        ),
        (
            "deflate-1",
            Box::new(|t| {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(t).unwrap();
                e.finish().unwrap()
            }),
            Box::new(|z| {
                let mut out = Vec::new();
                flate2::read::DeflateDecoder::new(z)
                    .read_to_end(&mut out)
                    .unwrap();
                out
            }),
        ),
    ];
    let sample: Vec<&[u8]> = texts.iter().step_by(10).map(|t| t.as_bytes()).collect();
    let dict = zstd::dict::from_samples(&sample, 112 * 1024)?;
    let undict = dict.clone();
    let kinds = kinds.into_iter().chain(std::iter::once((
        "zstd-1, 112 KB dictionary",
        Box::new(move |t: &[u8]| {
            zstd::bulk::Compressor::with_dictionary(1, &dict)
                .unwrap()
                .compress(t)
                .unwrap()
        }) as Pack,
        Box::new(move |z: &[u8]| {
            zstd::bulk::Decompressor::with_dictionary(&undict)
                .unwrap()
                .decompress(z, 1 << 26)
                .unwrap()
        }) as Unpack,
    )));
    for (name, pack, unpack) in kinds {
        let t0 = Instant::now();
        let packed: Vec<Vec<u8>> = texts.iter().map(|t| pack(t.as_bytes())).collect();
        let packing = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        let mut back = 0usize;
        for z in &packed {
            back += unpack(z).len();
        }
        let unpacking = t0.elapsed().as_secs_f64();
        assert_eq!(back, plain);
        let bytes: usize = packed.iter().map(Vec::len).sum();
        println!(
            "{name} | {bytes} | {:.2} | {packing:.2} | {unpacking:.2}",
            plain as f64 / bytes as f64
        );
    }
    Ok(())
}
