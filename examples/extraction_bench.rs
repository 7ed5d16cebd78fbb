//! Runs `html::extract` over the extraction dev set and writes OUTDIR/<id>.txt, after the
//! repair of text decoded twice that `clean::clean_text` makes before any cleaner.
//!
//! Usage: extraction_bench BENCH_DIR OUT_DIR [--title]
//! Pages are decompressed and read first, so the printed speed covers
//! parsing and extraction only, on one thread.
use std::collections::HashMap;
use std::io::Read;
use std::time::{Duration, Instant};

use collect::clean::html::extract;
use collect::clean::repair_mojibake;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: extraction_bench BENCH_DIR OUT_DIR");
        std::process::exit(2);
    }
    let (bench, out) = (&args[1], &args[2]);
    let urls = read_urls(&format!("{bench}/index.jsonl"));
    let mut paths: Vec<_> = std::fs::read_dir(format!("{bench}/html"))
        .expect("BENCH_DIR/html must exist")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".html.gz"))
        .collect();
    paths.sort();
    let mut pages = Vec::with_capacity(paths.len());
    let mut bytes = 0usize;
    for p in &paths {
        let name = p.file_name().unwrap_or_default().to_string_lossy();
        let id = name.trim_end_matches(".html.gz").to_string();
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(p).expect("readable page"))
            .read_to_end(&mut raw)
            .expect("valid gzip");
        bytes += raw.len();
        pages.push((id, String::from_utf8_lossy(&raw).into_owned()));
    }
    std::fs::create_dir_all(out).expect("OUT_DIR can be created");
    let cpu_start = thread_cpu_seconds();
    let mut total = Duration::ZERO;
    for (id, html) in &pages {
        let url = urls.get(id).map(String::as_str);
        let t = Instant::now();
        let e = extract(&repair_mojibake(html), url);
        total += t.elapsed();
        std::fs::write(format!("{out}/{id}.txt"), &e.text).expect("writable OUT_DIR");
        if args.iter().any(|a| a == "--title") {
            println!("{id}\t{}", e.title.unwrap_or_default());
        }
    }
    let secs = total.as_secs_f64();
    eprintln!(
        "{} pages, {:.1} MB of HTML in {:.2} s: {:.1} pages/s, {:.1} MB/s (one thread, wall clock, decompression excluded)",
        pages.len(),
        bytes as f64 / 1e6,
        secs,
        pages.len() as f64 / secs,
        bytes as f64 / 1e6 / secs
    );
    // CPU time is what matters on a shared machine: wall time includes waits
    // for the core. It also counts writing the output files.
    if let (Some(a), Some(b)) = (cpu_start, thread_cpu_seconds()) {
        eprintln!(
            "CPU time of this thread: {:.2} s, {:.1} pages/s per core",
            b - a,
            pages.len() as f64 / (b - a)
        );
    }
}

/// Pulls `id` and `url` out of each index.jsonl line without a JSON dependency.
fn read_urls(path: &str) -> HashMap<String, String> {
    let field = |line: &str, key: &str| -> Option<String> {
        let rest = line.split(&format!("\"{key}\": \"")).nth(1)?;
        Some(rest.split('"').next()?.to_string())
    };
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| Some((field(l, "id")?, field(l, "url")?)))
        .collect()
}

/// User plus system CPU time of the calling thread, from /proc (Linux only).
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line, in clock ticks (USER_HZ = 100).
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
