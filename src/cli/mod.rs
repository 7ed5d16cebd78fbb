//! The `collect` command line.

pub mod dedup;
pub mod doctor;
pub mod eval;
pub mod grow;
pub mod help;
pub mod new;

use crate::build::{self, BuildOptions};
use crate::dedup::standalone;
use crate::sign::DedupSettings;
use crate::topic::Topic;
use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

/// Builds thematic, deduplicated text collections.
#[derive(Debug, Parser)]
#[command(name = "collect", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// No progress bars and no summary on stderr.
    #[arg(long, global = true)]
    quiet: bool,
    /// Print a JSON summary on stdout for scripts.
    #[arg(long, global = true)]
    json: bool,
    /// Worker threads (default: all cores).
    #[arg(long, global = true)]
    threads: Option<usize>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build a collection from a topic file into collections/<name>/; several topic files
    /// build one collection each, sharing one polite fetcher.
    Build {
        /// The topic file(s) (YAML), e.g. topics/*.yaml.
        #[arg(required = true, value_name = "TOPIC")]
        topics: Vec<PathBuf>,
        /// Output directory (default: collections/<name>); only with exactly one topic.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Rebuild over an existing collection.
        #[arg(long)]
        force: bool,
        /// Print the planned queries per source and the request count; fetch nothing.
        #[arg(long)]
        dry_run: bool,
        /// Stop at the first bad input (exit 2) instead of skipping and recording it.
        #[arg(long)]
        strict: bool,
        /// Allow requests to loopback, private and link-local addresses (as
        /// `crawl.allow_private: true`).
        #[arg(long)]
        allow_private: bool,
    },
    /// Build a demo collection from a loopback web started in-process (no internet needed).
    Demo {
        /// Output directory (default: collections/demo).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Accepted for symmetry with build and update: the demo's web is on 127.0.0.1, so
        /// private addresses are always allowed.
        #[arg(long)]
        allow_private: bool,
        /// After the build, serve the review page of the demo collection (Ctrl-C to stop).
        #[arg(long)]
        serve: bool,
        /// Port of the review page with --serve (0: a free port, printed at start).
        #[arg(long, default_value_t = 0, requires = "serve")]
        port: u16,
    },
    /// Clean HTML or wikitext files (or directories of them) to plain text.
    Clean {
        /// Files or directories (.html, .htm, .html.gz, .wikitext).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Which cleaner: by file name (auto), html or wikitext.
        #[arg(long, value_enum, default_value = "auto")]
        kind: crate::build::clean_files::Kind,
        /// Wiki language, for namespace names and section titles.
        #[arg(long, default_value = "en")]
        lang: String,
        /// Write one .txt per input here instead of printing.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Stop at the first input that cannot be read (exit 2) instead of skipping it.
        #[arg(long)]
        strict: bool,
    },
    /// Find near-duplicates in a JSONL file of {"id","text"} or a directory of .txt files.
    Dedup(DedupArgs),
    /// Precision, recall, F1 and type I error of detectors against labelled pairs.
    Eval(eval::EvalArgs),
    /// Figures of a collection (Table 1, review progress). `--relation METHOD` is the older
    /// spelling of `collect relation METHOD PATH`.
    Stats {
        /// A collection directory (with --relation also a JSONL file or a directory of .txt).
        path: PathBuf,
        /// Detector whose duplicate relation is examined (same as `collect relation`).
        #[arg(long)]
        relation: Option<String>,
        /// List the inputs builds and updates skipped (source, place, reason, detail).
        #[arg(long, conflicts_with = "relation")]
        skipped: bool,
        #[command(flatten)]
        relation_args: eval::RelationArgs,
    },
    /// Diagnostics of a detector's duplicate relation (asymmetry, transitivity, components,
    /// cliques, closed sets) on a collection, a JSONL file or a directory of .txt files.
    Relation {
        /// Detector whose duplicate relation is examined.
        method: String,
        /// A collection directory, a JSONL file or a directory of .txt files.
        path: PathBuf,
        #[command(flatten)]
        relation_args: eval::RelationArgs,
    },
    /// Add what the topic's sources deliver anew to a built collection.
    Update(grow::UpdateArgs),
    /// Review contained pairs: list, show, decide.
    Review(grow::ReviewArgs),
    /// Tell why a document is in or out of the collection.
    Explain(grow::ExplainArgs),
    /// Serve the review page on 127.0.0.1.
    Serve(grow::ServeArgs),
    /// Export the texts in the collection as txt, jsonl or csv.
    Export(grow::ExportArgs),
    /// Prepare JSONL records from stdin as a build would (clean, filter, relevance, sign): one
    /// JSON line per document on stdout. The per-partition step of a distributed run.
    Worker(grow::WorkerArgs),
    /// The keep rule over components of the duplicate graph (JSON lines on stdin): which copy
    /// of each group stays, as a build chooses it. The last step of a distributed run.
    Keep,
    /// Build a topic's collection on Apache Spark (`spark-submit`, this binary on the
    /// executors): the same collection as `collect build` of the same JSONL sources.
    SparkJob(grow::SparkJobArgs),
    /// Check a collection's store (exit 0 healthy, 2 damaged) and say what can be recovered;
    /// `--rebuild --topic TOPIC.yaml` rebuilds a damaged or missing store.
    Doctor(doctor::DoctorArgs),
    /// Write a new topic file with every key, its default and a comment (topics/NAME.yaml).
    New(new::NewArgs),
    /// Check a topic file and print the planned sources, queries and requests; fetch nothing.
    Check(new::CheckArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    Completions(help::CompletionsArgs),
    /// Print the man page collect.1, or write one page per subcommand with --out DIR.
    Man(help::ManArgs),
}

#[derive(Debug, Args)]
struct DedupArgs {
    /// JSONL file of {"id", "text"} objects, or a directory of .txt files.
    input: PathBuf,
    /// Detector: one of the names in docs/methods.md (modm, minn, full, megashingles, tf, …).
    #[arg(long, default_value_t = DedupSettings::default().method)]
    method: String,
    /// infostream: heavy terms (of 12) two texts must share to be duplicates.
    #[arg(long, default_value_t = DedupSettings::default().agree)]
    agree: usize,
    /// Words per shingle (default 4; megashingles 5).
    #[arg(long)]
    shingle: Option<usize>,
    /// Modulus of mod-m.
    #[arg(long, default_value_t = DedupSettings::default().modulus)]
    modulus: u64,
    /// Signature size of min-n.
    #[arg(long, default_value_t = DedupSettings::default().min_n)]
    min_n: usize,
    /// Megashingles: min-wise maps.
    #[arg(long, default_value_t = DedupSettings::default().maps)]
    maps: usize,
    /// Megashingles: supershingles.
    #[arg(long, default_value_t = DedupSettings::default().supershingles)]
    supershingles: usize,
    /// Resemblance at or above which a pair is a duplicate.
    #[arg(long, default_value_t = DedupSettings::default().resemblance)]
    resemblance: f64,
    /// Containment at or above which a pair is flagged as contained.
    #[arg(long)]
    containment: Option<f64>,
    /// mod-m: texts with fewer sampled fingerprints keep their full index (0: never).
    #[arg(long, default_value_t = DedupSettings::default().min_elements)]
    min_elements: usize,
    #[command(flatten)]
    grey: GreyArgs,
    /// Print every pair sharing a signature element, with its verdict.
    #[arg(long)]
    all_pairs: bool,
    /// Write the TSV here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Stop-word languages, comma-separated.
    #[arg(long, default_value = "ru,en", value_delimiter = ',')]
    stop_langs: Vec<String>,
}

impl DedupArgs {
    /// The settings these flags give.
    fn settings(&self) -> DedupSettings {
        DedupSettings {
            method: self.method.clone(),
            shingle: self.shingle,
            modulus: self.modulus,
            min_n: self.min_n,
            maps: self.maps,
            supershingles: self.supershingles,
            resemblance: self.resemblance,
            containment: self
                .containment
                .unwrap_or(DedupSettings::default().containment),
            min_elements: self.min_elements,
            agree: self.agree,
            ..self.grey.settings()
        }
    }
}

/// The grey zone's flags and the canonical form's stemming, shared by `collect dedup` and
/// `collect eval` so that both run the engine with the same options.
#[derive(Debug, Args)]
pub struct GreyArgs {
    /// Grey zone: pairs below the thresholds scoring at least this on their signatures are
    /// re-scored on the full texts (above 1: none).
    #[arg(long, default_value_t = DedupSettings::default().verify_from)]
    verify_from: f64,
    /// Grey zone: words a shared run must span to count as a copied passage (0: no passages).
    #[arg(long, default_value_t = DedupSettings::default().passage_words)]
    passage_words: usize,
    /// Grey zone: share of the shorter text in copied passages that makes a pair contained.
    #[arg(long, default_value_t = DedupSettings::default().passage_share)]
    passage_share: f64,
    /// Grey zone: a shingle in more than this many of the texts verified together is
    /// boilerplate, never part of a copied passage.
    #[arg(long, default_value_t = DedupSettings::default().passage_common)]
    passage_common: usize,
    /// Canonical words are Snowball stems (Russian for Cyrillic words, English for the rest).
    #[arg(long)]
    stem: bool,
    /// Shingles a contained pair must share to go to review; fewer make it `weak`.
    #[arg(long, default_value_t = DedupSettings::default().min_shared_shingles)]
    min_shared_shingles: usize,
}

impl GreyArgs {
    /// Default settings with these flags applied.
    pub fn settings(&self) -> DedupSettings {
        DedupSettings {
            verify_from: self.verify_from,
            passage_words: self.passage_words,
            passage_share: self.passage_share,
            passage_common: self.passage_common,
            stem: self.stem,
            min_shared_shingles: self.min_shared_shingles,
            ..Default::default()
        }
    }
}

/// The process exit codes (README, "Exit codes").
pub mod exit {
    /// Done; every input was read.
    pub const OK: i32 = 0;
    /// A failure that is not the input's fault (IO, store, internal).
    pub const FAILURE: i32 = 1;
    /// Bad input: topic file, arguments, an input file (with `--strict`, the first bad record).
    pub const BAD_INPUT: i32 = 2;
    /// Done, and the result is complete and usable, but some inputs were skipped and recorded.
    pub const SKIPPED: i32 = 3;
}

/// Runs the command line; returns the process exit code (see [`exit`]).
pub fn main() -> i32 {
    let cli = help::parse();
    if let Some(n) = cli.threads {
        // Fails only if a pool exists already, which cannot happen this early.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global();
    }
    match run(&cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            if crate::error::is_bad_input(&e) {
                exit::BAD_INPUT
            } else {
                exit::FAILURE
            }
        }
    }
}

/// The exit code of a build or update that skipped `skipped` inputs, saying on stderr (even
/// with `--quiet`: the exit code alone would not tell where to look) how many and where.
fn skipped_exit(out: &std::path::Path, skipped: usize) -> i32 {
    if skipped == 0 {
        return exit::OK;
    }
    eprintln!(
        "warning: {skipped} input{} skipped and recorded; the collection holds everything else. \
         See \"Skipped inputs\" in {} or run `collect stats {} --skipped`",
        if skipped == 1 { " was" } else { "s were" },
        out.join("report.md").display(),
        out.display()
    );
    exit::SKIPPED
}

/// The warning printed (even with `--quiet`) when requests to private addresses are allowed.
const ALLOW_PRIVATE_WARNING: &str =
    "warning: --allow-private: requests to loopback, private and link-local addresses are allowed";

/// Applies `--allow-private` to `topic` and warns once when private addresses are allowed,
/// by the flag or by the topic file's `crawl.allow_private: true`.
fn allow_private(topic: &mut Topic, flag: bool) {
    if flag {
        topic.crawl.allow_private = true;
    }
    if topic.crawl.allow_private {
        eprintln!("{ALLOW_PRIVATE_WARNING}");
    }
}

/// Runs the command; returns the exit code of a command that finished.
fn run(cli: &Cli) -> Result<i32> {
    match &cli.command {
        Command::Build {
            topics,
            out,
            force,
            dry_run,
            strict,
            allow_private: allow,
        } if topics.len() > 1 => run_build_many(
            cli,
            topics,
            out.as_deref(),
            &BuildOptions {
                out: None,
                force: *force,
                progress: !cli.quiet,
                strict: *strict,
            },
            *dry_run,
            *allow,
        ),
        Command::Build {
            topics,
            out,
            force,
            dry_run,
            strict,
            allow_private: allow,
        } => {
            let mut topic = Topic::load(&topics[0])?;
            allow_private(&mut topic, *allow);
            if *dry_run {
                return print_plan(&topic).map(|()| exit::OK);
            }
            let summary = build::build(
                &topic,
                &BuildOptions {
                    out: out.clone(),
                    force: *force,
                    progress: !cli.quiet,
                    strict: *strict,
                },
            )?;
            print_summary(cli, &summary)?;
            Ok(skipped_exit(&summary.out, summary.skipped))
        }
        Command::Demo {
            out,
            allow_private: allow,
            serve,
            port,
        } => {
            if *allow {
                eprintln!("{ALLOW_PRIVATE_WARNING}");
            }
            let summary = crate::demo::run(out.clone(), !cli.quiet)?;
            print_summary(cli, &summary)?;
            if !cli.quiet && !*serve {
                eprintln!("{}", next_steps(&summary.out));
            }
            if *serve {
                crate::review::serve::serve(&crate::review::serve::ServeOptions {
                    dir: summary.out.clone(),
                    bind: "127.0.0.1".into(),
                    port: *port,
                    grouping: Default::default(),
                })?;
            }
            Ok(skipped_exit(&summary.out, summary.skipped))
        }
        Command::Clean {
            inputs,
            kind,
            lang,
            out,
            strict,
        } => {
            let done = crate::build::clean_files::run(
                inputs,
                &crate::build::clean_files::CleanOptions {
                    kind: *kind,
                    lang,
                    out: out.as_deref(),
                    strict: *strict,
                },
            )?;
            for s in &done.skipped {
                eprintln!("warning: {s} ({}); skipped", s.reason);
            }
            if !cli.quiet && out.is_some() {
                eprintln!("{} files cleaned", done.cleaned);
            }
            let lost = done
                .skipped
                .iter()
                .filter(|s| s.reason.loses_input())
                .count();
            if lost == 0 {
                Ok(exit::OK)
            } else {
                eprintln!(
                    "warning: {lost} input{} skipped (listed above)",
                    if lost == 1 { " was" } else { "s were" }
                );
                Ok(exit::SKIPPED)
            }
        }
        Command::Dedup(a) => run_dedup(cli, a).map(|()| exit::OK),
        Command::Eval(a) => eval::run(a, cli.json, cli.quiet).map(|()| exit::OK),
        Command::Stats {
            path,
            relation,
            relation_args,
            skipped,
        } => match relation {
            Some(m) => eval::run_relation(path, m, relation_args, cli.json),
            None if *skipped => grow::run_skipped(path, cli.json),
            None => grow::run_stats(path, cli.json),
        }
        .map(|()| exit::OK),
        Command::Relation {
            method,
            path,
            relation_args,
        } => eval::run_relation(path, method, relation_args, cli.json).map(|()| exit::OK),
        Command::Update(a) => {
            let s = grow::run_update(a, cli.quiet, cli.json)?;
            Ok(skipped_exit(&s.out, s.skipped))
        }
        Command::Review(a) => grow::run_review(a, cli.quiet, cli.json).map(|()| exit::OK),
        Command::Explain(a) => grow::run_explain(a, cli.json).map(|()| exit::OK),
        Command::Serve(a) => grow::run_serve(a).map(|()| exit::OK),
        Command::Export(a) => grow::run_export(a, cli.quiet).map(|()| exit::OK),
        Command::Worker(a) => grow::run_worker(a, cli.quiet).map(|()| exit::OK),
        Command::Keep => grow::run_keep(cli.quiet).map(|()| exit::OK),
        Command::SparkJob(a) => match grow::run_spark_job(a)? {
            Some(summary) => {
                if cli.json {
                    println!("{}", serde_json::to_string(&summary)?);
                }
                if !cli.quiet {
                    eprintln!("{}", summary_line(&summary.build));
                }
                Ok(skipped_exit(&summary.build.out, summary.build.skipped))
            }
            None => Ok(exit::OK),
        },
        Command::Doctor(a) => doctor::run(a, cli.json).map(|()| exit::OK),
        Command::New(a) => new::run_new(a, cli.quiet),
        Command::Check(a) => new::run_check(a, cli.quiet),
        Command::Completions(a) => help::run_completions(a),
        Command::Man(a) => help::run_man(a),
    }
}

/// The rank of an exit code among a run's topics: an error outranks skipped inputs, which
/// outrank success; a failure (1) outranks bad input (2).
fn severity(code: i32) -> u8 {
    match code {
        exit::OK => 0,
        exit::SKIPPED => 1,
        exit::BAD_INPUT => 2,
        _ => 3,
    }
}

/// `collect build A.yaml B.yaml …`: every topic file is checked before anything is built;
/// then each collection is built by [`build::multi::build_all`]. The exit code is the worst
/// of the topics' (see [`severity`]); `--json` prints one summary object per line.
fn run_build_many(
    cli: &Cli,
    paths: &[PathBuf],
    out: Option<&std::path::Path>,
    opts: &BuildOptions,
    dry_run: bool,
    allow: bool,
) -> Result<i32> {
    if out.is_some() {
        return Err(crate::error::bad_input(format!(
            "--out names one collection's directory, but {} topic files were given; give --out              only with exactly one topic (with several, each is built into collections/<name>)",
            paths.len()
        )));
    }
    let mut topics = Vec::new();
    let mut bad = Vec::new();
    for p in paths {
        match Topic::load(p) {
            Ok(mut t) => {
                if allow {
                    t.crawl.allow_private = true;
                }
                topics.push(t);
            }
            Err(e) => bad.push(format!("{e}")),
        }
    }
    if !bad.is_empty() {
        return Err(crate::error::bad_input(format!(
            "{}
nothing was built: every topic file must be sound",
            bad.join(
                "
"
            )
        )));
    }
    build::multi::check_distinct_outputs(&topics)?;
    let (crawl, warnings) = build::multi::merged_crawl(&topics)?;
    if crawl.allow_private {
        eprintln!("{ALLOW_PRIVATE_WARNING}");
    }
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if dry_run {
        for t in &topics {
            println!("# {}", t.name);
            print_plan(t)?;
        }
        return Ok(exit::OK);
    }
    let mut worst = exit::OK;
    let mut printed: Result<()> = Ok(());
    build::multi::build_all(&topics, &crawl, opts, &mut |t, result| {
        let code = match result {
            Ok(summary) => {
                if printed.is_ok() {
                    printed = print_summary(cli, summary);
                }
                skipped_exit(&summary.out, summary.skipped)
            }
            Err(e) => {
                eprintln!("error: topic {}: {e:#}", t.name);
                if crate::error::is_bad_input(e) {
                    exit::BAD_INPUT
                } else {
                    exit::FAILURE
                }
            }
        };
        if severity(code) > severity(worst) {
            worst = code;
        }
    })?;
    printed?;
    Ok(worst)
}

fn print_plan(topic: &Topic) -> Result<()> {
    let plan = crate::acquire::plan(&build::ingest::web_sources(topic), &topic.keywords);
    let mut total = 0;
    for p in &plan {
        match &p.skipped {
            Some(why) => println!("{}\t{}\tskipped: {why}", p.source, p.query),
            None => {
                println!("{}\t{}\t{} requests", p.source, p.query, p.requests);
                total += p.requests;
            }
        }
    }
    for (spec, name) in topic.sources.iter().zip(topic.source_names()) {
        match spec {
            crate::topic::SourceSpec::Local(c) => println!(
                "{name}\t{}\tlocal, no requests",
                topic.resolve(&c.path).display()
            ),
            crate::topic::SourceSpec::Warc(c) => {
                for p in c.path.paths() {
                    println!(
                        "{name}\t{}\tweb archive, no requests",
                        topic.resolve(&p).display()
                    );
                }
            }
            _ => {}
        }
    }
    println!("total: {total} requests planned (upper bound), nothing fetched");
    Ok(())
}

/// What a newcomer can do with the collection the demo built.
fn next_steps(out: &Path) -> String {
    let dir = out.display();
    format!(
        "next:\n  \
         collect review list --collection {dir}     # contained pairs waiting for a decision\n  \
         collect serve {dir}                        # the same queue as a page in the browser\n  \
         collect export {dir} --format jsonl --out demo.jsonl   # the texts, one JSON per line\n  \
         collect explain ID --collection {dir}      # why a text was kept or dropped"
    )
}

fn print_summary(cli: &Cli, summary: &build::BuildSummary) -> Result<()> {
    if cli.json {
        println!("{}", serde_json::to_string(&summary)?);
    }
    if !cli.quiet {
        eprintln!("{}", summary_line(summary));
    }
    Ok(())
}

/// The one-line account of a build on stderr.
fn summary_line(summary: &build::BuildSummary) -> String {
    let t = &summary.totals;
    format!(
        "{}: {} texts read, {} in the collection ({} short, {} filtered, {} off topic, {} duplicates, {} contained pairs for review); report: {}",
        summary.out.display(),
        t.texts_before,
        t.kept,
        t.short,
        t.filtered,
        t.off_topic,
        t.duplicates,
        t.contained_pairs,
        summary.out.join("report.md").display()
    )
}

fn run_dedup(cli: &Cli, a: &DedupArgs) -> Result<()> {
    if a.containment.is_some() && matches!(a.method.as_str(), "minn" | "megashingles") {
        eprintln!(
            "warning: {} estimates resemblance only; containment is not computed (columns are `nan`, no pair is `contained`)",
            a.method
        );
    }
    for (name, v) in [
        ("--resemblance", Some(a.resemblance)),
        ("--containment", a.containment),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v <= 1.0) {
                return Err(crate::error::bad_input(format!(
                    "{name} must be in (0, 1], got {v}"
                )));
            }
        }
    }
    let result = standalone::run(&standalone::DedupOptions {
        input: a.input.clone(),
        settings: a.settings(),
        stop_langs: a.stop_langs.clone(),
        all_pairs: a.all_pairs,
    })?;
    match &a.out {
        Some(path) => {
            let mut f = std::fs::File::create(path)
                .with_context(|| format!("{}: cannot create", path.display()))?;
            dedup::write_tsv(&result, a.all_pairs, &mut f)?;
        }
        None => dedup::write_tsv(&result, a.all_pairs, &mut std::io::stdout().lock())?,
    }
    if cli.json {
        let s = serde_json::to_string(&result.summary)?;
        if a.out.is_some() {
            println!("{s}");
        } else {
            eprintln!("{s}");
        }
    } else if !cli.quiet {
        let s = &result.summary;
        eprintln!(
            "{} documents, {} candidate pairs: {} duplicate, {} contained ({} verified on the full index, {} unsure, {} weak: contained, but sharing too little to review)",
            s.documents, s.candidate_pairs, s.duplicate_pairs, s.contained_pairs, s.verified_pairs, s.unsure_pairs, s.weak_pairs
        );
    }
    Ok(())
}
