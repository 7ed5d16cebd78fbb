//! `collect spark-job`: the build of a topic on Apache Spark. It writes the job (the Python
//! driver `spark/collect_job.py`, built into the binary, and its settings), runs
//! `spark-submit` with this very binary shipped to the executors, then makes the collection
//! directory from the job's output ([`assemble`](super::assemble::assemble)).
//!
//! Spark distributes the documents and joins the postings; every decision (clean, filter,
//! sign, pair verdicts, boilerplate, keep rule) is taken by the binary through `collect
//! worker` and `collect keep`, so the collection equals `collect build`'s of the same input.

use super::BuildSummary;
use crate::error::bad_input;
use crate::topic::{SourceSpec, Topic};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The job's driver program.
const JOB: &str = include_str!("../../spark/collect_job.py");

/// How the job runs.
#[derive(Debug, Clone)]
pub struct SparkOptions {
    /// The collection directory.
    pub out: PathBuf,
    /// Spark master URL (`local[2]`, `yarn`, `spark://host:7077`, `k8s://…`).
    pub master: String,
    /// Where the job and its output go (default: `<out>.spark` beside the collection).
    pub work: Option<PathBuf>,
    /// Spark-readable URIs for sources, by source name (default: the topic's local path).
    pub inputs: Vec<(String, String)>,
    /// Partitions per input file at least.
    pub partitions: usize,
    /// A fingerprint held by more documents than this is split into blocks.
    pub heavy_postings: usize,
    /// Replace an existing collection.
    pub force: bool,
    /// Only print the commands; run nothing.
    pub print_command: bool,
    /// Only assemble the collection from a job already run.
    pub assemble_only: bool,
    /// Grow the collection with the newcomers (new-vs-store against the Parquet signatures
    /// an earlier run left in the work directory), as `collect update`.
    pub update: bool,
    /// `spark-submit` to run.
    pub spark_submit: PathBuf,
}

/// What the job did: the build summary and the job's own figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SparkSummary {
    /// The collection, as `build` reports it.
    #[serde(flatten)]
    pub build: BuildSummary,
    /// The job's figures (documents, candidate pairs, verified pairs, label-propagation rounds).
    pub job: serde_json::Value,
}

/// The JSONL sources the job reads, as (name, rank, URI).
fn inputs(topic: &Topic, opts: &SparkOptions) -> Result<Vec<serde_json::Value>> {
    let mut out = Vec::new();
    for (rank, (spec, name)) in topic.sources.iter().zip(topic.source_names()).enumerate() {
        let given = opts
            .inputs
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, u)| u.clone());
        let uri = match (spec, given) {
            (SourceSpec::Local(_), Some(u)) => u,
            (SourceSpec::Local(l), None) => {
                let path = topic.resolve(&l.path);
                if !path.is_file() {
                    return Err(bad_input(format!(
                        "source `{name}`: {} is not a JSONL file; the Spark job reads JSONL sources (give a file, or --input {name}=URI)",
                        path.display()
                    )));
                }
                let abs = std::fs::canonicalize(&path)
                    .with_context(|| format!("{}: cannot resolve", path.display()))?;
                format!("file://{}", abs.display())
            }
            (SourceSpec::Warc(c), None) => {
                let reader = super::ingest::warc_reader(topic, name.clone(), rank as u32, c);
                let mut refused = Vec::new();
                let files = reader.archive_files(&mut |n| {
                    if let crate::readers::Notice::Skipped(s) = n {
                        refused.push(s.to_string());
                    }
                    Ok(())
                })?;
                if let Some(first) = refused.first() {
                    return Err(bad_input(format!(
                        "source `{name}`: {first}; the Spark job reads only the archives a walk takes (fix or remove the entry, or build with `collect build`)"
                    )));
                }
                let mut listed = Vec::new();
                for (path, label) in files {
                    let abs = std::fs::canonicalize(&path)
                        .with_context(|| format!("{}: cannot resolve", path.display()))?;
                    listed.push(serde_json::json!({
                        "uri": format!("file://{}", abs.display()),
                        "path": path, "label": label,
                    }));
                }
                out.push(serde_json::json!({"name": name, "rank": rank, "kind": "warc", "files": listed}));
                continue;
            }
            (SourceSpec::Warc(_), Some(_)) => {
                return Err(bad_input(format!(
                    "--input {name}=…: a warc source's archives are listed from its path on this machine; --input names JSONL sources only"
                )))
            }
            (other, _) => {
                return Err(bad_input(format!(
                    "source `{name}` is a {} source; the Spark job reads JSONL and warc sources (build the others with `collect build`)",
                    other.kind()
                )))
            }
        };
        out.push(serde_json::json!({"name": name, "rank": rank, "kind": "jsonl", "uri": uri}));
    }
    if out.is_empty() {
        return Err(bad_input("the topic has no sources".to_string()));
    }
    Ok(out)
}

/// A command line as a shell reads it.
fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,[]@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the job, runs it and assembles the collection; with `print_command`, prints the
/// commands instead and returns `None`.
pub fn run(topic: &Topic, topic_file: &Path, opts: &SparkOptions) -> Result<Option<SparkSummary>> {
    super::worker::pair_steps_of(topic)?;
    let sources = inputs(topic, opts)?;
    let out_abs = std::path::absolute(&opts.out)
        .with_context(|| format!("{}: cannot resolve", opts.out.display()))?;
    let work = match &opts.work {
        Some(w) => std::path::absolute(w)?,
        None => {
            let mut name = out_abs.file_name().unwrap_or_default().to_os_string();
            name.push(".spark");
            out_abs.with_file_name(name)
        }
    };
    let parts = work.join("parts");
    let topic_abs = std::fs::canonicalize(topic_file)
        .with_context(|| format!("{}: cannot resolve", topic_file.display()))?;
    let binary = std::env::current_exe().context("cannot find this program's own path")?;
    let mut submit: Vec<String> = vec![
        opts.spark_submit.display().to_string(),
        "--master".into(),
        opts.master.clone(),
        "--name".into(),
        format!("collect-{}", topic.name),
        "--files".into(),
        format!("{},{}", binary.display(), topic_abs.display()),
        work.join("collect_job.py").display().to_string(),
        work.join("job.json").display().to_string(),
    ];
    let mut assemble_line = vec![
        binary.display().to_string(),
        "spark-job".into(),
        topic_abs.display().to_string(),
        "--out".into(),
        out_abs.display().to_string(),
        "--work".into(),
        work.display().to_string(),
        "--assemble-only".into(),
    ];
    let store = work.join("store");
    let standing = work.join("standing.tsv");
    if opts.update {
        assemble_line.push("--update".into());
    }
    if !opts.assemble_only {
        if opts.update {
            let built = super::assemble::open_built(topic, &opts.out)?;
            if !store.join("documents").is_dir() {
                return Err(bad_input(format!(
                    "{}: no signatures of the collection here (a collection `collect spark-job` built keeps them in its work directory; give it with --work)",
                    store.display()
                )));
            }
            std::fs::create_dir_all(&work)
                .with_context(|| format!("{}: cannot create", work.display()))?;
            super::assemble::write_standing(&built, &standing)?;
        } else if !opts.force && super::assemble::is_complete(&opts.out)? {
            // A collection whose assembly was interrupted is made again, as a killed build
            // resumes; a complete one is only replaced when asked.
            return Err(crate::error::CollectionExists(opts.out.clone()).into());
        }
        std::fs::create_dir_all(&work)
            .with_context(|| format!("{}: cannot create", work.display()))?;
        std::fs::write(work.join("collect_job.py"), JOB)
            .with_context(|| format!("{}: cannot write", work.display()))?;
        let conf = serde_json::json!({
            "topic": topic_abs, "topic_name": topic.name, "binary": binary,
            "sources": sources, "partitions": opts.partitions.max(1),
            "heavy_postings": opts.heavy_postings.max(2),
            "parts": format!("file://{}", parts.display()), "scratch": work,
            "mode": if opts.update { "update" } else { "build" },
            "store": format!("file://{}", store.display()),
            "standing": format!("file://{}", standing.display()),
        });
        std::fs::write(work.join("job.json"), serde_json::to_string_pretty(&conf)?)
            .with_context(|| format!("{}: cannot write", work.display()))?;
        if opts.print_command {
            println!("{}", shell_line(&submit));
            println!("{}", shell_line(&assemble_line));
            return Ok(None);
        }
        if parts.exists() {
            std::fs::remove_dir_all(&parts)
                .with_context(|| format!("{}: cannot clear", parts.display()))?;
        }
        let status = std::process::Command::new(submit.remove(0))
            .args(&submit)
            // Spark's own output is a log: it goes to stderr, and stdout stays the summary's.
            .stdout(std::io::stderr())
            .status()
            .with_context(|| {
                format!(
                    "cannot run {} (install PySpark: pip install pyspark, and Java 17)",
                    opts.spark_submit.display()
                )
            })?;
        if !status.success() {
            anyhow::bail!(
                "the Spark job failed ({status}); its log is above, the job is in {}",
                work.display()
            );
        }
    }
    let build = if opts.update {
        super::assemble::assemble_update(topic, &parts, &opts.out)?
    } else {
        super::assemble::assemble(topic, &parts, &opts.out, opts.force || !opts.assemble_only)?
    };
    let figures = work.join("figures.json");
    let job = std::fs::read_to_string(&figures)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    Ok(Some(SparkSummary { build, job }))
}
