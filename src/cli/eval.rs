//! `collect eval` and `collect stats --relation`: the method workbench's command lines.

use crate::canon::StopWords;
use crate::error::bad_input;
use crate::sign::{DedupSettings, Thresholds, METHODS};
use crate::workbench::eval::{self, Row};
use crate::workbench::learned;
use anyhow::{Context, Result};
use clap::Args;
use rustc_hash::FxHashSet;
use std::path::{Path, PathBuf};

/// Options of `collect eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// JSONL of {"id","text"} or a directory of .txt files (ids: file names, `.txt` optional).
    #[arg(long)]
    docs: PathBuf,
    /// TSV with header `a b label …`.
    #[arg(long)]
    pairs: PathBuf,
    /// Methods, comma-separated, or `all` (`svm` needs --model or --train).
    #[arg(long, default_value = "all")]
    method: String,
    /// Thresholds FROM:TO:STEP (ends included) or one value; both resemblance and containment.
    #[arg(long, default_value = "0.5:1.0:0.1")]
    thresholds: String,
    /// Labels counted as positive (default: all but 0, unrelated, non).
    #[arg(long, value_delimiter = ',')]
    positive: Option<Vec<String>>,
    /// Count only `duplicate` verdicts, not `contained` ones.
    #[arg(long)]
    duplicates_only: bool,
    /// Train the learned detector on all labelled pairs, write the model here and print the
    /// learning curve (F1 by training-set size, cross-validated).
    #[arg(long)]
    train: Option<PathBuf>,
    /// A model written by --train, for the `svm` method.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Folds of the learning curve.
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// infostream: terms (of 12) that must agree.
    #[arg(long, default_value_t = DedupSettings::default().agree)]
    agree: usize,
    /// Stop-word languages, comma-separated.
    #[arg(long, default_value = "ru,en", value_delimiter = ',')]
    stop_langs: Vec<String>,
    #[command(flatten)]
    grey: super::GreyArgs,
    /// Also print, per method and threshold, how many pairs of each label are flagged.
    #[arg(long)]
    by_label: bool,
}

fn params(method: &str, agree: usize, base: DedupSettings) -> DedupSettings {
    DedupSettings {
        method: method.to_string(),
        agree,
        ..base
    }
}

/// Runs `collect eval`; prints markdown, or JSON with `--json`.
pub fn run(a: &EvalArgs, json: bool, quiet: bool) -> Result<()> {
    let thresholds = eval::parse_thresholds(&a.thresholds).map_err(bad_input)?;
    if a.folds < 2 {
        return Err(bad_input("--folds must be at least 2"));
    }
    let stop = a
        .grey
        .settings()
        .canon_words(&a.stop_langs)
        .map_err(bad_input)?;
    let docs = eval::load_docs(&a.docs)?;
    let labels = eval::load_labels(&a.pairs, a.positive.as_deref())?;
    let ids: FxHashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    let missing = labels
        .iter()
        .filter(|l| !ids.contains(l.a.as_str()) || !ids.contains(l.b.as_str()))
        .count();
    if missing > 0 && !quiet {
        eprintln!(
            "warning: {}: {missing} labelled pairs name documents not in {}",
            a.pairs.display(),
            a.docs.display()
        );
    }
    let mut model = match &a.model {
        Some(p) => Some(learned::Model::load(p)?),
        None => None,
    };
    let mut curve = None;
    if let Some(out) = &a.train {
        let samples = learned::labelled_samples(&docs, &labels, &stop);
        let all: Vec<usize> = (0..learned::FEATURES.len()).collect();
        let m = learned::train(&learned::directed(&samples), &all, 1.0)?;
        std::fs::write(out, serde_json::to_string_pretty(&m)?)
            .with_context(|| format!("{}: cannot write", out.display()))?;
        curve = Some(learned::learning_curve(&samples, a.folds));
        model.get_or_insert(m);
    }
    let methods: Vec<String> = if a.method == "all" {
        let mut m: Vec<String> = METHODS.iter().map(|s| s.to_string()).collect();
        if model.is_some() {
            m.push("svm".into());
        }
        m
    } else {
        a.method.split(',').map(|s| s.trim().to_string()).collect()
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut label_rows: Vec<eval::LabelRow> = Vec::new();
    for m in &methods {
        let started = std::time::Instant::now();
        if m == "svm" {
            let Some(model) = &model else {
                return Err(bad_input("method `svm` needs --model FILE or --train FILE"));
            };
            rows.push(eval_svm(model, &docs, &labels, &stop));
        } else {
            let run = eval::run_method(&docs, &params(m, a.agree, a.grey.settings()), &stop)?;
            rows.extend(eval::eval_method(
                &run,
                m,
                &docs,
                &labels,
                &thresholds,
                a.duplicates_only,
            ));
            if a.by_label {
                label_rows.extend(eval::by_label(&run, m, &docs, &labels, &thresholds));
            }
        }
        if !quiet {
            eprintln!("{m}: {:.2} s", started.elapsed().as_secs_f64());
        }
    }
    if json {
        let v =
            serde_json::json!({ "rows": rows, "learning_curve": curve, "by_label": label_rows });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", eval::markdown(&rows));
        if a.by_label {
            print!("\n{}", eval::label_markdown(&label_rows));
        }
        if let Some(c) = curve {
            println!("\n| training pairs | F1 all criteria | F1 text cosine only | folds |");
            println!("|---:|---:|---:|---:|");
            for p in c {
                println!(
                    "| {} | {:.3} | {:.3} | {} |",
                    p.train_pairs, p.f1_all, p.f1_words, p.folds
                );
            }
        }
    }
    Ok(())
}

/// The learned detector over every labelled pair: it classifies pairs, it does not find them.
fn eval_svm(
    model: &learned::Model,
    docs: &[eval::Doc],
    labels: &[eval::Labelled],
    stop: &StopWords,
) -> Row {
    let samples = learned::labelled_samples(docs, labels, stop);
    let mut flagged = FxHashSet::default();
    let present: Vec<&eval::Labelled> = labels
        .iter()
        .filter(|l| docs.iter().any(|d| d.id == l.a) && docs.iter().any(|d| d.id == l.b))
        .collect();
    for (l, ((ab, ba), _)) in present.iter().zip(&samples) {
        if model.predict(ab) || model.predict(ba) {
            flagged.insert((l.a.clone(), l.b.clone()));
        }
    }
    eval::score("svm", None, &flagged, labels)
}

/// Options of `collect relation` (also spelled `collect stats --relation METHOD`).
#[derive(Debug, Args)]
pub struct RelationArgs {
    /// Resemblance threshold (containment: --containment).
    #[arg(long, default_value_t = DedupSettings::default().resemblance)]
    resemblance: f64,
    /// Containment threshold.
    #[arg(long, default_value_t = DedupSettings::default().containment)]
    containment: f64,
    /// Closed sets: signature elements a cluster's documents must all share.
    #[arg(long, default_value_t = 2)]
    min_shared: usize,
    /// Cliques are searched only in components of at most this many documents.
    #[arg(long, default_value_t = 40)]
    clique_bound: usize,
    /// infostream: terms (of 12) that must agree.
    #[arg(long, default_value_t = DedupSettings::default().agree)]
    agree: usize,
}

/// Runs `collect stats --relation METHOD PATH` (a collection directory, JSONL or .txt directory).
pub fn run_relation(path: &Path, method: &str, a: &RelationArgs, json: bool) -> Result<()> {
    for (name, v) in [
        ("--resemblance", a.resemblance),
        ("--containment", a.containment),
    ] {
        if !(v > 0.0 && v <= 1.0) {
            return Err(bad_input(format!("{name} must be in (0, 1], got {v}")));
        }
    }
    let docs_dir = path.join("docs");
    let input = if crate::collection::store_path(path).is_file() && docs_dir.is_dir() {
        docs_dir
    } else {
        path.to_path_buf()
    };
    let docs = eval::load_docs(&input)?;
    let t = Thresholds {
        resemblance: a.resemblance,
        containment: a.containment,
        min_shared_shingles: DedupSettings::default().min_shared_shingles as f64,
    };
    let s = crate::workbench::relation::analyse(
        &docs,
        &params(method, a.agree, DedupSettings::default()),
        StopWords::default_shared(),
        &t,
        a.min_shared,
        a.clique_bound,
    )?;
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", crate::workbench::relation::markdown(method, &s));
    }
    Ok(())
}
