//! Commands that grow and curate a built collection: update, review, explain, serve, export,
//! stats.

use crate::build::update::{self, Lookup, UpdateOptions};
use crate::collection::{self, Format};
use crate::error::bad_input;
use crate::review::{self, PairStatus};
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
    /// List contained pairs (default: pending ones).
    List {
        /// pending, decided, moot or all.
        #[arg(long, value_enum, default_value_t = ListStatus::Pending)]
        status: ListStatus,
    },
    /// Show both texts of a pair with the shared passages marked [[like this]].
    Show {
        /// Pair id.
        id: i64,
    },
    /// Decide a pair: keep-both, drop-contained or drop-container.
    Decide {
        /// Pair id.
        id: i64,
        /// keep-both, drop-contained or drop-container.
        #[arg(value_enum)]
        decision: Decision,
        /// Why (stored with the decision).
        #[arg(long)]
        note: Option<String>,
    },
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
        ReviewCommand::List { status } => {
            let filter = match status {
                ListStatus::Pending => Some(PairStatus::Pending),
                ListStatus::Decided => Some(PairStatus::Decided),
                ListStatus::Moot => Some(PairStatus::Moot),
                ListStatus::All => None,
            };
            let store = review::open_collection(dir)?;
            let list = review::list(&store, filter)?;
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
                        serde_json::to_value(p.status)?.as_str().unwrap_or(""),
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
        ReviewCommand::Decide { id, decision, note } => {
            let d = *decision;
            let mut store = review::open_collection_mut(dir)?;
            review::decide(&mut store, dir, *id, d, note.as_deref())?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string(&review::show(&store, *id)?.summary)?
                );
            } else if !quiet {
                eprintln!("pair {id}: {} saved and applied", d.as_str());
            }
            Ok(())
        }
    }
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
        eprintln!(
            "{}: exported {n} texts{}",
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
