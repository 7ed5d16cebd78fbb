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

/// One timed run of a command: wall seconds, and from GNU time the peak RSS and the CPU time.
struct Timed {
    secs: f64,
    rss_kb: Option<u64>,
    cpu_secs: Option<f64>,
    stdout: String,
}

fn time_cmd(cmd: &mut Command) -> Option<Timed> {
    // GNU time gives the child's peak RSS and CPU time; without it only the wall time is reported.
    let start = Instant::now();
    let out = cmd.output().ok()?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!("command failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let field = |name: &str| -> Option<String> {
        stderr
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
    };
    let rss_kb = field("maxrss_kb=").and_then(|v| v.parse().ok());
    let cpu_secs = field("cpu_s=").and_then(|v| {
        let (user, sys) = v.split_once('+')?;
        Some(user.parse::<f64>().ok()? + sys.parse::<f64>().ok()?)
    });
    Some(Timed {
        secs,
        rss_kb,
        cpu_secs,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

/// Bytes under `dir`, as the files hold them (not the blocks they take).
fn apparent_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => apparent_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
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
            c.arg("-f")
                .arg("maxrss_kb=%M\ncpu_s=%U+%S")
                .arg(program)
                .args(args);
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
    let mut builds = Builds::new(&exe, &corpus, runs);
    for _ in 0..runs {
        let t = Instant::now();
        lsh_pairs = std::hint::black_box(gaoya_pairs(&texts));
        lsh.push(t.elapsed().as_secs_f64());
        if let Some(t) = time_cmd(&mut wrap(Path::new("wc"), &["-w", &corpus_s])) {
            wc.push(t.secs);
        }
        if let Some(t) = time_cmd(&mut wrap(
            &exe,
            &["dedup", &corpus_s, "--quiet", "--out", &out_s],
        )) {
            ded.push(t.secs);
            rss.extend(t.rss_kb);
        }
        if let Some(b) = builds.as_mut() {
            b.run(&wrap);
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
    if let Some(b) = builds {
        b.report(ded, mb);
    }
}

/// `collect build` of the corpus as a local source (every text let through the filters, so it
/// signs and compares what `collect dedup` does), each run into a new directory: removing
/// thousands of files just before creating as many slows the file system down for a while.
struct Builds {
    exe: PathBuf,
    work: PathBuf,
    topic: PathBuf,
    done: usize,
    secs: Vec<f64>,
    cpu: Vec<f64>,
    /// CPU/wall of each stage the build reported (`--json`), by stage, a value per run.
    stage_cpu: Vec<(String, Vec<f64>)>,
    rss_kb: Vec<u64>,
    written: Vec<(u64, u64)>,
}

impl Builds {
    fn new(exe: &Path, corpus: &Path, runs: usize) -> Option<Self> {
        let work = std::env::temp_dir().join(format!("collect-bench-build-{}", std::process::id()));
        let corpus = std::fs::canonicalize(corpus).ok()?;
        std::fs::create_dir_all(&work).ok()?;
        let topic = work.join("bench.yaml");
        let yaml = format!(
            "name: bench\nsources:\n  - {{kind: local, path: {}, name: corpus}}\nfilter: {{min_words: 0}}\nrelevance: off\n",
            serde_json::to_string(&corpus.to_string_lossy()).ok()?
        );
        std::fs::write(&topic, yaml).ok()?;
        Some(Builds {
            exe: exe.to_path_buf(),
            work,
            topic,
            done: 0,
            secs: Vec::with_capacity(runs),
            cpu: Vec::new(),
            stage_cpu: Vec::new(),
            rss_kb: Vec::new(),
            written: Vec::new(),
        })
    }

    fn run(&mut self, wrap: &dyn Fn(&Path, &[&str]) -> Command) {
        let out = self.work.join(format!("run{}", self.done));
        self.done += 1;
        let (topic, out_s) = (self.topic.to_string_lossy(), out.to_string_lossy());
        if let Some(t) = time_cmd(&mut wrap(
            &self.exe,
            &["build", &topic, "--quiet", "--json", "--out", &out_s],
        )) {
            self.secs.push(t.secs);
            self.cpu.extend(t.cpu_secs.map(|c| c / t.secs));
            self.add_stages(&t.stdout);
            self.rss_kb.extend(t.rss_kb);
            let store = collect::collection::store_path(&out);
            let mut wal = store.clone().into_os_string();
            wal.push("-wal");
            let store: u64 = [store, PathBuf::from(wal)]
                .iter()
                .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
                .sum();
            self.written.push((store, apparent_size(&out.join("docs"))));
        }
    }

    /// The stages of a build's `--json` summary, each stage's CPU/wall kept by its name.
    fn add_stages(&mut self, summary: &str) {
        let Ok(summary) = serde_json::from_str::<serde_json::Value>(summary.trim()) else {
            return;
        };
        for stage in summary["stages"].as_array().into_iter().flatten() {
            let (Some(name), Some(secs), Some(cpu)) = (
                stage["stage"].as_str(),
                stage["secs"].as_f64(),
                stage["cpu_secs"].as_f64(),
            ) else {
                continue;
            };
            if secs <= 0.0 {
                continue;
            }
            match self.stage_cpu.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(cpu / secs),
                None => self.stage_cpu.push((name.to_string(), vec![cpu / secs])),
            }
        }
    }

    fn report(self, dedup_secs: f64, text_mb: f64) {
        let _ = std::fs::remove_dir_all(&self.work);
        if self.secs.is_empty() {
            println!("collect build: no successful run");
            return;
        }
        let secs = median(self.secs.clone());
        let cpu = (!self.cpu.is_empty()).then(|| median(self.cpu.clone()));
        let rss = self.rss_kb.iter().max().map(|k| *k as f64 / 1024.0);
        let (store, docs) = self.written[0];
        let (store, docs) = (store as f64 / 1e6, docs as f64 / 1e6);
        println!(
            "collect build end to end: median {secs:.2} s over {} runs (peak RSS {}, CPU (user+sys)/wall {}); collect dedup {dedup_secs:.2} s; ratio {:.2}",
            self.secs.len(),
            rss.map_or("unknown".into(), |r| format!("{r:.0} MB")),
            cpu.map_or("unknown".into(), |c| format!("{c:.2}")),
            secs / dedup_secs
        );
        for (stage, cores) in &self.stage_cpu {
            println!(
                "  build stage {stage:?}: CPU (user+sys)/wall {:.2} (median of {} runs; 2.00 is both cores busy)",
                median(cores.clone()),
                cores.len()
            );
        }
        println!(
            "collection written: store {store:.1} MB + docs/ {docs:.1} MB for {text_mb:.1} MB of text; ratio {:.2}",
            (store + docs) / text_mb
        );
    }
}
