//! Benchmark of `collect update` against a full rebuild: a store of N documents (default
//! 100,000) made from the perf corpus (README, "Data for the benchmarks") replicated with perturbed words,
//! built R times (each into a new directory; the median is the yardstick), then R updates in a
//! row into the last one, each adding 1,000 new documents (1 %) with SQL postings lookups
//! (the median is compared), then one with an in-memory index of the stored signatures.
//! Skips cleanly when the corpus is absent.
//!
//! `COLLECT_BENCH_CORPUS=corpus-10k.jsonl cargo run --release --bin collect-bench-update [N] [R]`
//! (R: runs, default 5).

use collect::build::update::{self, Lookup, UpdateOptions};
use collect::build::{self, BuildOptions};
use collect::topic::Topic;
use std::io::Write;
use std::time::Instant;

/// Texts are cut to this many bytes so that 100,000 of them fit a small disk and build in
/// minutes; near-duplicates inside the corpus stay near-duplicates.
const MAX_BYTES: usize = 3000;

fn perturb(text: &str, replica: usize) -> String {
    if replica == 0 {
        return text.to_string();
    }
    // Every third word gets the replica number: no 4-word shingle survives from another
    // replica, while copies inside one replica stay copies of each other.
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for (i, w) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
        if i % 3 == 0 && !w.is_empty() {
            out.push_str(&format!("r{replica}"));
        }
    }
    out
}

/// Puts what earlier runs wrote on disk before a timed run starts: otherwise the kernel writes
/// back a build's half gigabyte during the next run (the first update after three builds took
/// 1.24 s, the next two 0.95 and 0.74 s).
fn settle_disk() {
    // SAFETY: `sync` takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// The median wall seconds of each stage over runs, in the order the first run gave them.
fn stage_medians(runs: &[Vec<collect::progress::StageTime>]) -> Vec<(String, f64)> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .iter()
        .map(|stage| {
            let secs = runs
                .iter()
                .filter_map(|r| r.iter().find(|t| t.stage == stage.stage).map(|t| t.secs))
                .collect();
            (stage.stage.clone(), median(secs))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn cut(s: &str) -> &str {
    if s.len() <= MAX_BYTES {
        return s;
    }
    let mut end = MAX_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn write_docs(
    out: &mut impl Write,
    corpus: &[(String, String)],
    replicas: std::ops::Range<usize>,
    limit: usize,
) -> usize {
    let mut n = 0;
    'outer: for r in replicas {
        for (id, text) in corpus {
            if n == limit {
                break 'outer;
            }
            let row =
                serde_json::json!({"id": format!("{id}#r{r}"), "text": perturb(cut(text), r)});
            writeln!(out, "{row}").unwrap();
            n += 1;
        }
    }
    n
}

fn main() -> anyhow::Result<()> {
    let Some(corpus_path) = std::env::var_os("COLLECT_BENCH_CORPUS").map(std::path::PathBuf::from)
    else {
        println!(
            "skipped: COLLECT_BENCH_CORPUS is not set; set it to a JSONL of {{\"id\", \"text\"}} lines (README, \"Data for the benchmarks\")"
        );
        return Ok(());
    };
    if !corpus_path.exists() {
        println!(
            "skipped: {} is absent; set COLLECT_BENCH_CORPUS to a JSONL of {{\"id\", \"text\"}} lines (README, \"Data for the benchmarks\")",
            corpus_path.display()
        );
        return Ok(());
    }
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5)
        .max(1);
    let added = 1000;
    let mut corpus: Vec<(String, String)> = Vec::new();
    collect::readers::local::for_each_jsonl_line(&corpus_path, |no, line| {
        let d = collect::readers::local::parse_json_line(&corpus_path, no, line)?;
        corpus.push((d.id.into_string(), d.text.into_owned()));
        Ok(())
    })?;
    let dir = std::env::temp_dir().join(format!("collect-bench-update-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let root = dir.as_path();
    let input = root.join("corpus.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&input)?);
    let replicas = n.div_ceil(corpus.len());
    let stored = write_docs(&mut f, &corpus, 0..replicas, n);
    f.flush()?;
    drop(f);
    std::fs::write(
        root.join("topic.yaml"),
        "name: bench\nsources:\n  - {kind: local, path: corpus.jsonl}\nfilter: {min_words: 20}\n",
    )?;
    let topic = Topic::load(&root.join("topic.yaml"))?;
    println!("store: {stored} documents ({} replicas of the perf corpus, texts cut to {MAX_BYTES} bytes)", replicas);

    let mut builds = Vec::new();
    let mut build_stages = Vec::new();
    let mut out = root.join("out");
    for run in 0..runs {
        // Each build into a directory of its own: removing one of 100,000 files slows the file
        // system's next creations for a while.
        out = root.join(format!("out{run}"));
        settle_disk();
        let t = Instant::now();
        let b = build::build(
            &topic,
            &BuildOptions {
                out: Some(out.clone()),
                force: false,
                progress: false,
                // The corpus is written by this program: a bad line is a bug, not data to skip.
                strict: true,
            },
        )?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "full build of {stored}: {s:.2} s ({} kept, {} duplicates)",
            b.totals.kept, b.totals.duplicates
        );
        builds.push(s);
        build_stages.push(b.stages);
    }
    let build_s = median(builds);
    println!("full build: median {build_s:.2} s over {runs} runs");
    let build_stages = stage_medians(&build_stages);

    let mut next_replica = replicas + 1;
    let mut update_stages = Vec::new();
    let mut update_with = |lookup: Lookup| -> anyhow::Result<f64> {
        let mut f = std::fs::OpenOptions::new().append(true).open(&input)?;
        write_docs(&mut f, &corpus, next_replica..next_replica + 1, added);
        next_replica += 1;
        settle_disk();
        let t = Instant::now();
        let u = update::update(
            &topic,
            &UpdateOptions {
                out: Some(out.clone()),
                progress: false,
                lookup,
                strict: true,
            },
        )?;
        let s = t.elapsed().as_secs_f64();
        println!(
            "update +{} ({lookup:?} lookup): {s:.2} s end to end, {:.3} s comparing against the store; {:.1}% of the full build ({} kept, {} duplicates, {} pairs for review)",
            u.new,
            u.compare_seconds,
            100.0 * s / build_s,
            u.kept,
            u.duplicates,
            u.new_review_pairs
        );
        if lookup == Lookup::Sql {
            update_stages.push(u.stages);
        }
        Ok(s)
    };
    let mut updates = Vec::new();
    for _ in 0..runs {
        updates.push(update_with(Lookup::Sql)?);
    }
    let update_s = median(updates);
    println!(
        "update +1 % (Sql lookup): median {update_s:.2} s over {runs} runs in a row; full build median {build_s:.2} s; ratio {:.1} %",
        100.0 * update_s / build_s
    );
    update_with(Lookup::Memory)?;
    // Stage for stage, where the update's time goes against the build's: at 1 % of the
    // documents, a stage whose share is far above 1 % costs more per newcomer than the build
    // pays per document.
    for (stage, secs) in stage_medians(&update_stages) {
        match build_stages.iter().find(|(s, _)| *s == stage) {
            Some((_, full)) => println!(
                "  stage {stage:?}: update median {secs:.3} s, full build median {full:.2} s, ratio {:.1} %",
                100.0 * secs / full
            ),
            None => println!("  stage {stage:?}: update median {secs:.3} s (no such stage in the build)"),
        }
    }
    std::fs::remove_dir_all(root)?;
    Ok(())
}
