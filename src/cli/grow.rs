//! Commands that grow and curate a built collection: update, review, explain, serve, export,
//! stats.

use crate::build::update::{self, Lookup, UpdateOptions};
use crate::collection::{self, Format};
use crate::error::bad_input;
use crate::review::queue::{self, Grouping};
use crate::review::{self, PairStatus};
use crate::rule::Rule;
use crate::store::queries::Decision;
use crate::topic::Topic;
use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// `collect update`.
#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// The collection directory (default: the current directory); its store remembers the
    /// topic file it was built from. A file ending .yaml/.yml is the topic file itself (then
    /// --out names the collection, as before).
    target: Option<PathBuf>,
    /// Collection directory (with a topic file; default: collections/<name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// How newcomers are compared with the store: sql (indexed lookups) or memory.
    #[arg(long, value_enum, default_value_t = Lookup::Sql)]
    lookup: Lookup,
    /// Stop at the first bad input (exit 2) instead of skipping and recording it.
    #[arg(long)]
    strict: bool,
    /// Allow requests to loopback, private and link-local addresses (as
    /// `crawl.allow_private: true`).
    #[arg(long)]
    allow_private: bool,
}

/// Whether `collect update`'s argument names a topic file rather than a collection directory.
fn is_topic_file(p: &Path) -> bool {
    !p.is_dir()
        && p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// The topic file and collection directory `collect update` works on.
fn update_target(a: &UpdateArgs) -> Result<(PathBuf, Option<PathBuf>)> {
    if let Some(p) = a.target.as_deref().filter(|p| is_topic_file(p)) {
        return Ok((p.to_path_buf(), a.out.clone()));
    }
    let dir = match (&a.target, &a.out) {
        (Some(d), Some(o)) if d != o => {
            let (d, o) = (d.display(), o.display());
            return Err(bad_input(format!(
                "{d} is the collection and --out names another, {o}: give it once"
            )));
        }
        (Some(d), _) | (None, Some(d)) => d.clone(),
        (None, None) => PathBuf::from("."),
    };
    Ok((collection::remembered_topic_file(&dir)?, Some(dir)))
}

/// `collect review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Collection directory (default: the current directory).
    #[arg(long, global = true, default_value = ".")]
    collection: PathBuf,
    /// How `list`, `cluster` and `decide --cluster` group pairs into clusters: `components`
    /// (texts linked by containment) or `closed` (pairs whose texts share the same part of
    /// their signatures); a cluster id means the cluster of the grouping it was listed under.
    #[arg(long, global = true, value_enum, default_value_t = Grouping::Components)]
    clusters: Grouping,
    #[command(subcommand)]
    command: ReviewCommand,
}

/// Which pairs `review list` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ListStatus {
    /// Waiting for a decision.
    Pending,
    /// Decided.
    Decided,
    /// Undecided, but one text already left the collection.
    Moot,
    /// Every contained pair.
    All,
}

#[derive(Debug, Subcommand)]
enum ReviewCommand {
    /// List the queue: clusters of contained pairs, most words at stake first (`--pairs`: one
    /// row per pair, by id).
    List {
        /// pending, decided, moot or all.
        #[arg(long, value_enum, default_value_t = ListStatus::Pending)]
        status: ListStatus,
        /// One row per pair instead of one per cluster.
        #[arg(long)]
        pairs: bool,
    },
    /// Show both texts of a pair with the shared passages marked [[like this]].
    Show {
        /// Pair id.
        id: i64,
    },
    /// Show a cluster: its texts (containers first) and its pairs.
    Cluster {
        /// Cluster id (the first column of `review list`).
        id: i64,
    },
    /// Decide a pair, a whole cluster (`--cluster`), or every pending pair a rule picks
    /// (`--where`); each is one entry of the review log, undone with `review undo`.
    #[command(allow_missing_positional = true)]
    Decide {
        /// Pair id (leave out with --cluster or --where).
        id: Option<i64>,
        /// keep-both, drop-contained or drop-container; on a cluster also keep-all
        /// (= keep-both) and keep-container (= drop-contained).
        #[arg(value_enum)]
        decision: Decision,
        /// Decide the pending pairs of this cluster.
        #[arg(long, conflicts_with_all = ["id", "rule"])]
        cluster: Option<i64>,
        /// Decide every pending pair this rule picks. It tests cont (containment of the
        /// contained text), res, words (of the contained text), container_words, shared
        /// (shingles), source, container_source, verified; with < <= > >= == !=, and, or, not
        /// and parentheses.
        #[arg(long = "where", value_name = "EXPR", conflicts_with = "id")]
        rule: Option<String>,
        /// Print what would change, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Why (stored with the decision).
        #[arg(long)]
        note: Option<String>,
    },
    /// Undo one entry of the review log (a pair, cluster or rule decision) as a whole.
    Undo {
        /// Entry id (the first column of `review log`).
        entry: i64,
    },
    /// The review log: every decision taken, by hand or by a standing rule.
    Log,
}

/// `collect explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Document id.
    doc_id: String,
    /// Collection directory (default: the current directory).
    #[arg(long, default_value = ".")]
    collection: PathBuf,
}

/// `collect serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Collection directory (default: the current directory).
    dir: Option<PathBuf>,
    /// Address to listen on; anything but loopback exposes the page to the network.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Port (0: a free port, printed at start).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// How the queue groups pairs into clusters: `components` (texts linked by containment)
    /// or `closed` (pairs whose texts share the same part of their signatures).
    #[arg(long, value_enum, default_value_t = Grouping::Components)]
    clusters: Grouping,
}

/// `collect worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The topic file (its filter, relevance, languages and dedup settings are used).
    topic: PathBuf,
    /// The topic source the records belong to (default: its first local source): its name and
    /// rank go into each document, as a build gives them.
    #[arg(long)]
    source: Option<String>,
    /// Put each document's cleaned text in its record.
    #[arg(long)]
    text: bool,
    /// Documents prepared at a time.
    #[arg(long, default_value_t = 256)]
    batch: usize,
    /// The number of the first input line in its file (a partition of a larger file starts
    /// further in), so that skipped lines are named as a build names them.
    #[arg(long, default_value_t = 1)]
    first_line: usize,
    /// Which step: `prepare` documents (the default), or one of the pair steps of a
    /// distributed dedup: `judge` candidate pairs, the `shingles` of texts to verify, which
    /// counted shingles are `boilerplate`, `verify` pairs on their texts.
    #[arg(long, value_enum, default_value_t = WorkerStage::Prepare)]
    stage: WorkerStage,
    /// Read one web archive (WARC/WET, plain or gzipped) on stdin instead of JSONL records:
    /// the archive's path as a build names it (in skips)…
    #[arg(long, requires = "label")]
    archive: Option<PathBuf>,
    /// …and the label its documents' locators start with (the path as the topic spells it).
    #[arg(long, requires = "archive")]
    label: Option<String>,
    /// `verify`: the file of boilerplate shingles the `boilerplate` step wrote.
    #[arg(long, required_if_eq("stage", "verify"))]
    boilerplate: Option<PathBuf>,
}

/// The steps `collect worker` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkerStage {
    /// Clean, filter, relevance, sign: a document record per JSONL record.
    Prepare,
    /// Candidate pairs (ids, shared elements, signature sizes) → judged pairs.
    Judge,
    /// Texts `{id, text}` → their shingles.
    Shingles,
    /// `[shingle, count]` lines → the boilerplate shingles.
    Boilerplate,
    /// Pairs with both texts → verified pairs.
    Verify,
}

/// Runs `collect worker`.
pub fn run_worker(a: &WorkerArgs, quiet: bool) -> Result<()> {
    let topic = Topic::load(&a.topic)?;
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if a.stage != WorkerStage::Prepare {
        use crate::dedup::distributed as steps;
        let (detector, stop) = crate::build::worker::pair_steps_of(&topic)?;
        let s = steps::Steps {
            detector: detector.as_ref(),
            thresholds: topic.dedup.thresholds(),
            grey: topic.dedup.grey_zone(),
            stop: &stop,
        };
        let input = stdin.lock();
        let n = match a.stage {
            WorkerStage::Judge => steps::judge(&s, input, &mut out)?,
            WorkerStage::Shingles => steps::shingles(&s, input, &mut out)?,
            WorkerStage::Boilerplate => steps::boilerplate(&s, input, &mut out)?,
            _ => {
                let file = a.boilerplate.as_deref().unwrap_or(Path::new(""));
                steps::verify(&s, &steps::read_frequent(file)?, input, &mut out)?
            }
        };
        std::io::Write::flush(&mut out)?;
        if !quiet {
            eprintln!("worker {:?}: {n} records", a.stage);
        }
        return Ok(());
    }
    let opts = crate::build::worker::WorkerOptions {
        source: a.source.clone(),
        text: a.text,
        batch: a.batch.max(1),
        first_line: a.first_line,
    };
    let (docs, skipped) = match (&a.archive, &a.label) {
        (Some(path), Some(label)) => {
            crate::build::worker::run_archive(&topic, &opts, path, label, stdin.lock(), &mut out)?
        }
        _ => crate::build::worker::run(&topic, &opts, stdin.lock(), &mut out)?,
    };
    if !quiet {
        eprintln!("worker: {docs} documents prepared, {skipped} lines skipped");
    }
    Ok(())
}

/// `collect spark-job`.
#[derive(Debug, Clone, Args)]
pub struct SparkJobArgs {
    /// The topic file (its sources must be JSONL files, or given with --input).
    topic: PathBuf,
    /// The collection directory (default `collections/<name>`).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Spark master: `local[2]` on this machine, `yarn`, `spark://HOST:7077`, `k8s://…`.
    #[arg(long, default_value = "local[*]")]
    master: String,
    /// Where the job and its output go (default: `<out>.spark` beside the collection); on a
    /// cluster, a path every node and this machine share.
    #[arg(long)]
    work: Option<PathBuf>,
    /// A source's input as Spark reads it, `NAME=URI` (`hdfs://…`, `s3a://…`); repeatable.
    #[arg(long = "input", value_name = "NAME=URI")]
    inputs: Vec<String>,
    /// Partitions per input file, at least.
    #[arg(long, default_value_t = 8)]
    partitions: usize,
    /// A fingerprint held by more documents than this is split into blocks of pairs, so
    /// no task holds the square of its posting list.
    #[arg(long, default_value_t = 2000)]
    heavy_postings: usize,
    /// Replace an existing collection.
    #[arg(long)]
    force: bool,
    /// Write the job and print the `spark-submit` line and the assembly line; run nothing.
    #[arg(long)]
    print_command: bool,
    /// Only make the collection from a job already run (its output in --work).
    #[arg(long)]
    assemble_only: bool,
    /// Grow the collection in --out with what the sources hold anew, as `collect update`:
    /// newcomers are compared with the signatures an earlier run left as Parquet in --work.
    #[arg(long)]
    update: bool,
    /// The spark-submit program.
    #[arg(long, default_value = "spark-submit")]
    spark_submit: PathBuf,
}

/// Runs `collect spark-job`.
pub fn run_spark_job(a: &SparkJobArgs) -> Result<Option<crate::build::spark::SparkSummary>> {
    let topic = Topic::load(&a.topic)?;
    let mut inputs = Vec::new();
    for i in &a.inputs {
        let (name, uri) = i
            .split_once('=')
            .ok_or_else(|| bad_input(format!("--input {i}: expected NAME=URI")))?;
        inputs.push((name.to_string(), uri.to_string()));
    }
    crate::build::spark::run(
        &topic,
        &a.topic,
        &crate::build::spark::SparkOptions {
            out: a
                .out
                .clone()
                .unwrap_or_else(|| crate::build::default_out_dir(&topic)),
            master: a.master.clone(),
            work: a.work.clone(),
            inputs,
            partitions: a.partitions,
            heavy_postings: a.heavy_postings,
            force: a.force,
            print_command: a.print_command,
            assemble_only: a.assemble_only,
            update: a.update,
            spark_submit: a.spark_submit.clone(),
        },
    )
}

/// Runs `collect keep`.
pub fn run_keep(quiet: bool) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let n = crate::build::worker::run_keep(std::io::stdin().lock(), &mut out)?;
    if !quiet {
        eprintln!("keep: {n} components");
    }
    Ok(())
}

/// `collect export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Collection directory.
    dir: PathBuf,
    /// txt (a directory of files), jsonl or csv.
    #[arg(long, value_enum)]
    format: Format,
    /// Output file (jsonl, csv) or directory (txt); stdout when absent (jsonl, csv).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `collect update`; returns what it did (the caller turns skips into the exit code).
pub fn run_update(a: &UpdateArgs, quiet: bool, json: bool) -> Result<update::UpdateSummary> {
    let (file, out) = update_target(a)?;
    let mut topic = Topic::load(&file)?;
    super::allow_private(&mut topic, a.allow_private);
    let s = update::update(
        &topic,
        &UpdateOptions {
            out,
            progress: !quiet,
            lookup: a.lookup,
            strict: a.strict,
        },
    )?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
    }
    if !quiet {
        eprintln!(
            "{}: {} texts read, {} new; {} settled: {} kept, {} duplicates, {} new pairs for review; {} in the collection; report: {}",
            s.out.display(),
            s.read,
            s.new,
            s.settled,
            s.kept,
            s.duplicates,
            s.new_review_pairs,
            s.totals.kept,
            s.out.join("report.md").display()
        );
    }
    Ok(s)
}

fn fmt_opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_else(|| "nan".into())
}

/// Runs `collect review`.
pub fn run_review(a: &ReviewArgs, quiet: bool, json: bool) -> Result<()> {
    let dir = &a.collection;
    match &a.command {
        ReviewCommand::List {
            status,
            pairs: false,
        } => {
            let store = review::open_collection(dir)?;
            let clusters = queue::list_clusters(&store, a.clusters)?;
            let shown = clusters
                .iter()
                .filter(|c| status.filter().is_none_or(|f| f == c.status));
            if json {
                for c in shown {
                    println!("{}", serde_json::to_string(c)?);
                }
            } else {
                println!("cluster\tstatus\tpairs\tpending\ttexts\twords_at_stake\tmax_cont\tcontainer\ttitle");
                for c in shown {
                    let top = &c.members[0];
                    println!(
                        "{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{}\t{}",
                        c.id,
                        status_name(c.status),
                        c.pairs.len(),
                        c.pending.len(),
                        c.members.len(),
                        c.words_at_stake,
                        c.max_cont,
                        top.id,
                        top.title.as_deref().unwrap_or("-")
                    );
                }
            }
            if !quiet {
                let left = queue::left(&clusters);
                eprintln!(
                    "left: {} clusters, {} pairs, {} words at stake; `collect review cluster ID` shows one, `collect review decide --cluster ID keep-container|keep-all` settles it",
                    left.clusters, left.pairs, left.words
                );
            }
            Ok(())
        }
        ReviewCommand::List {
            status,
            pairs: true,
        } => {
            let store = review::open_collection(dir)?;
            let list = review::list(&store, status.filter())?;
            if json {
                for p in &list {
                    println!("{}", serde_json::to_string(p)?);
                }
            } else {
                println!("pair\tstatus\ta\tb\tresemblance\tcont_a_in_b\tcont_b_in_a\tcontained\tdecision");
                for p in &list {
                    println!(
                        "{}\t{}\t{}\t{}\t{:.3}\t{}\t{}\t{}\t{}",
                        p.id,
                        status_name(p.status),
                        p.a,
                        p.b,
                        p.resemblance,
                        fmt_opt(p.cont_a_in_b),
                        fmt_opt(p.cont_b_in_a),
                        p.contained,
                        p.decision.as_deref().unwrap_or("-")
                    );
                }
            }
            Ok(())
        }
        ReviewCommand::Show { id } => {
            let store = review::open_collection(dir)?;
            let d = review::show(&store, *id)?;
            if json {
                println!("{}", serde_json::to_string(&d)?);
                return Ok(());
            }
            let s = &d.summary;
            println!(
                "pair {}: {} · resemblance {:.3} · cont(a in b) {} · cont(b in a) {}{}",
                s.id,
                serde_json::to_value(s.status)?.as_str().unwrap_or(""),
                s.resemblance,
                fmt_opt(s.cont_a_in_b),
                fmt_opt(s.cont_b_in_a),
                if s.verified { " (full index)" } else { "" }
            );
            if let Some(dec) = &s.decision {
                println!(
                    "decided: {dec}{}",
                    s.note
                        .as_deref()
                        .map(|n| format!(" — {n}"))
                        .unwrap_or_default()
                );
            }
            for (name, id, url, src, title, text, passages) in [
                (
                    "a",
                    &s.a,
                    &s.url_a,
                    &s.source_a,
                    &s.title_a,
                    &d.text_a,
                    &d.passages_a,
                ),
                (
                    "b",
                    &s.b,
                    &s.url_b,
                    &s.source_b,
                    &s.title_b,
                    &d.text_b,
                    &d.passages_b,
                ),
            ] {
                println!(
                    "\n=== {name}: {id}{} · source {src} · {} · {} shared passages{}",
                    title
                        .as_deref()
                        .map(|t| format!(" · {t}"))
                        .unwrap_or_default(),
                    url.as_deref().unwrap_or("no URL"),
                    passages.len(),
                    if &s.contained == id {
                        " · CONTAINED"
                    } else {
                        ""
                    }
                );
                println!("{}", review::mark_plain(text, passages));
            }
            Ok(())
        }
        ReviewCommand::Cluster { id } => {
            let store = review::open_collection(dir)?;
            let all = review::list(&store, None)?;
            let target = queue::ClusterRef {
                id: *id,
                grouping: a.clusters,
            };
            let c = queue::find_cluster(&store, &all, target)?;
            let pairs: Vec<&review::PairSummary> =
                all.iter().filter(|p| c.pairs.contains(&p.id)).collect();
            if json {
                let mut v = serde_json::to_value(&c)?;
                v["pair_rows"] = serde_json::to_value(&pairs)?;
                println!("{v}");
                return Ok(());
            }
            println!(
                "cluster {}: {} · {} pairs ({} pending) · {} texts · {} words at stake · max containment {:.3}",
                c.id,
                status_name(c.status),
                c.pairs.len(),
                c.pending.len(),
                c.members.len(),
                c.words_at_stake,
                c.max_cont
            );
            println!("\nrole\tdoc\twords\tcont\tsource\ttitle");
            for m in &c.members {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    serde_json::to_value(m.role)?.as_str().unwrap_or(""),
                    m.id,
                    m.words,
                    m.cont.map_or("-".into(), |v| format!("{v:.3}")),
                    m.source,
                    m.title.as_deref().unwrap_or("-")
                );
            }
            println!("\npair\tstatus\tcontained\tcontainer\tcont\tres\tshared\tdecision");
            for p in pairs {
                println!(
                    "{}\t{}\t{}\t{}\t{:.3}\t{:.3}\t{}\t{}",
                    p.id,
                    status_name(p.status),
                    p.contained,
                    p.container(),
                    p.containment(),
                    p.resemblance,
                    p.shared,
                    p.decision.as_deref().unwrap_or("-")
                );
            }
            Ok(())
        }
        ReviewCommand::Decide {
            id,
            decision,
            cluster,
            rule,
            dry_run,
            note,
        } => {
            let d = *decision;
            let note = note.as_deref();
            let mut store = if *dry_run {
                review::open_collection(dir)?
            } else {
                review::open_collection_mut(dir)?
            };
            let bulk = match (id, cluster, rule) {
                (_, Some(c), _) => queue::decide_cluster(
                    &mut store,
                    dir,
                    queue::ClusterRef {
                        id: *c,
                        grouping: a.clusters,
                    },
                    d,
                    note,
                    *dry_run,
                )?,
                (_, _, Some(text)) => {
                    let r = Rule::parse(text)
                        .map_err(|e| bad_input(format!("--where `{text}`: {e}")))?;
                    queue::decide_where(&mut store, dir, &r, d, note, *dry_run)?
                }
                (Some(id), None, None) => {
                    if *dry_run {
                        let s = review::show(&store, *id)?.summary;
                        queue::plan_pair(&s, d)
                    } else {
                        review::decide(&mut store, dir, *id, d, note)?;
                        if json {
                            println!(
                                "{}",
                                serde_json::to_string(&review::show(&store, *id)?.summary)?
                            );
                        } else if !quiet {
                            eprintln!("pair {id}: {} saved and applied", d.as_str());
                        }
                        return Ok(());
                    }
                }
                (None, None, None) => {
                    return Err(bad_input(
                        "review decide: give a pair id, --cluster ID or --where EXPR",
                    ))
                }
            };
            print_bulk(&bulk, *dry_run, quiet, json)
        }
        ReviewCommand::Undo { entry } => {
            let mut store = review::open_collection_mut(dir)?;
            let a = queue::undo(&mut store, dir, *entry)?;
            if json {
                println!("{}", serde_json::to_string(&a)?);
            } else if !quiet {
                eprintln!(
                    "entry {}: undid entry {entry}; {} pairs back to their earlier decision (or pending), {} texts back in the collection, {} out",
                    a.entry, a.pairs, a.restored, a.dropped
                );
            }
            Ok(())
        }
        ReviewCommand::Log => {
            let store = review::open_collection(dir)?;
            let log = store.review_log()?;
            if json {
                for e in &log {
                    println!("{}", serde_json::to_string(e)?);
                }
                return Ok(());
            }
            println!("entry\tkind\ttarget\tdecision\tpairs\tat\tundone_by\tnote");
            for e in &log {
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    e.id,
                    e.kind.as_str(),
                    e.target,
                    e.decision.as_deref().unwrap_or("-"),
                    e.pairs,
                    e.at,
                    e.undone_by.map(|u| u.to_string()).unwrap_or("-".into()),
                    e.note.as_deref().unwrap_or("-")
                );
            }
            Ok(())
        }
    }
}

fn status_name(s: PairStatus) -> &'static str {
    match s {
        PairStatus::Pending => "pending",
        PairStatus::Decided => "decided",
        PairStatus::Moot => "moot",
    }
}

impl ListStatus {
    fn filter(self) -> Option<PairStatus> {
        match self {
            ListStatus::Pending => Some(PairStatus::Pending),
            ListStatus::Decided => Some(PairStatus::Decided),
            ListStatus::Moot => Some(PairStatus::Moot),
            ListStatus::All => None,
        }
    }
}

fn print_bulk(b: &queue::Bulk, dry_run: bool, quiet: bool, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(b)?);
        return Ok(());
    }
    if dry_run {
        println!("pair");
        for p in &b.pairs {
            println!("{p}");
        }
    }
    if quiet {
        return Ok(());
    }
    let what = format!(
        "{} pending pairs {} ({}): {} texts {} the collection ({} words)",
        b.pairs.len(),
        b.decision.as_str(),
        b.target,
        b.drops.len(),
        if dry_run { "would leave" } else { "left" },
        b.words_dropped
    );
    match (dry_run, b.entry) {
        (true, _) => eprintln!("dry run, nothing changed: {what}"),
        (false, Some(e)) => {
            eprintln!("entry {e}: {what}; undo with `collect review undo {e}`")
        }
        (false, None) => eprintln!("no pending pair matched: nothing changed"),
    }
    Ok(())
}

/// Runs `collect explain`.
pub fn run_explain(a: &ExplainArgs, json: bool) -> Result<()> {
    let store = review::open_collection(&a.collection)?;
    let e = review::explain(&store, &a.doc_id)?;
    if json {
        println!("{}", serde_json::to_string(&e)?);
        return Ok(());
    }
    println!("{} ({}): {}", e.id, e.status, e.why);
    println!(
        "source {} · {} · {} words · stored by run {}",
        e.source,
        e.url.as_deref().unwrap_or(&e.locator),
        e.words,
        e.added_run
    );
    if let Some(r) = &e.reason {
        println!("reason: {r}");
    }
    if let Some(d) = &e.duplicate_of {
        println!("duplicate of: {d}");
    }
    if let Some(r) = e.relevance {
        let terms = e.relevance_terms.as_deref().unwrap_or("");
        println!(
            "relevance {r:.3} · topic terms: {}",
            if terms.is_empty() { "none" } else { terms }
        );
    }
    for p in &e.pairs {
        println!(
            "pair {} with {}: {} · resemblance {:.3} · cont(this in other) {} · cont(other in this) {} · decision {}{}",
            p.id,
            p.other,
            p.verdict.as_str(),
            p.resemblance,
            fmt_opt(p.cont_this_in_other),
            fmt_opt(p.cont_other_in_this),
            p.decision.as_deref().unwrap_or("none"),
            p.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default()
        );
        for h in &p.history {
            println!(
                "  decided {} at {} (unix time){}",
                h.decision,
                h.decided_at,
                h.note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// Runs `collect serve`.
pub fn run_serve(a: &ServeArgs) -> Result<()> {
    crate::review::serve::serve(&crate::review::serve::ServeOptions {
        dir: a.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        bind: a.bind.clone(),
        port: a.port,
        grouping: a.clusters,
    })
}

/// Runs `collect export`.
pub fn run_export(a: &ExportArgs, quiet: bool) -> Result<()> {
    let format = a.format;
    let store = review::open_collection(&a.dir)?;
    let n = match (format, &a.out) {
        (Format::Txt, None) => {
            return Err(bad_input(
                "--format txt writes a directory: give it with --out DIR",
            ))
        }
        (Format::Txt, Some(dir)) => collection::export_txt(&store, dir)?,
        (_, Some(path)) => {
            let tmp = path.with_extension("part");
            let n = {
                let f = std::fs::File::create(&tmp)
                    .with_context(|| format!("{}: cannot create", tmp.display()))?;
                let mut w = std::io::BufWriter::new(f);
                collection::export_stream(&store, format, &mut w)
                    .with_context(|| format!("{}: cannot write", tmp.display()))?
            };
            std::fs::rename(&tmp, path)
                .with_context(|| format!("{}: cannot write", path.display()))?;
            n
        }
        (_, None) => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            match collection::export_stream(&store, format, &mut w) {
                Ok(n) => n,
                // A reader that stops early (`| head`) is not a failure of the export.
                Err(e) if is_broken_pipe(&e) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    };
    if !quiet {
        // A pairs export counts pairs, every other format texts.
        let what = if format == Format::Pairs {
            "pairs"
        } else {
            "texts"
        };
        eprintln!(
            "{}: exported {n} {what}{}",
            a.dir.display(),
            a.out
                .as_deref()
                .map(|p: &Path| format!(" to {}", p.display()))
                .unwrap_or_default()
        );
    }
    Ok(())
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs `collect stats DIR --skipped`: every recorded skip, one a line (`--json`: one object
/// a line).
pub fn run_skipped(dir: &std::path::Path, json: bool) -> Result<()> {
    let store = review::open_collection(dir)?;
    let skipped = store.skipped()?;
    if json {
        for s in &skipped {
            println!("{}", serde_json::to_string(s)?);
        }
    } else {
        println!("source\tlocator\treason\tdetail");
        for s in &skipped {
            println!("{}\t{}\t{}\t{}", s.source, s.locator, s.reason, s.detail);
        }
    }
    Ok(())
}

/// Runs `collect stats DIR`.
pub fn run_stats(dir: &std::path::Path, json: bool) -> Result<()> {
    let store = review::open_collection(dir)?;
    let s = crate::review::stats::stats(&store)?;
    if json {
        println!("{}", serde_json::to_string(&s)?);
    } else {
        print!("{}", crate::review::stats::render(&store, &s)?);
    }
    Ok(())
}
