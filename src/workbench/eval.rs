//! `collect eval`: every detector against labelled pairs, as the papers' tables (docs/method.md §3.5).
//!
//! Documents are held in memory (evaluation sets are small); the engine is the same as
//! `collect dedup`'s: statistics pass, signatures, candidate pairs, verdicts, and small-signature
//! pairs verified on full indexes.

use crate::canon::{CanonText, Canonicalizer, StopWords};
use crate::dedup::{self, Pair};
use crate::error::bad_input;
use crate::readers::local::{for_each_jsonl_line, list_files, read_text_file};
use crate::sign::{
    build_detector, CorpusStats, DedupSettings, Detector, GreyZone, Thresholds, Verdict,
};
use anyhow::Result;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;

/// One document of an evaluation set.
#[derive(Debug, Clone)]
pub struct Doc {
    /// Id as the labels write it (file name without `.txt`).
    pub id: String,
    /// The text.
    pub text: String,
    /// Title, when the input has one.
    pub title: Option<String>,
    /// Publication time in seconds, when the input has one (`"time"`).
    pub time: Option<f64>,
}

/// An id without a trailing `.txt`, so `a.txt` in the labels matches file `a.txt` and id `a`.
pub fn norm_id(id: &str) -> &str {
    id.strip_suffix(".txt").unwrap_or(id)
}

/// Reads a JSONL of `{"id","text"[,"title","time"]}` or a directory of `.txt` files.
pub fn load_docs(input: &Path) -> Result<Vec<Doc>> {
    let mut docs = Vec::new();
    if input.is_dir() {
        for f in list_files(input, &[".txt"], &mut |w| eprintln!("warning: {w}"))? {
            let (text, _) = read_text_file(&f, &mut |w| eprintln!("warning: {w}"))?;
            let id = f.strip_prefix(input).unwrap_or(&f).to_string_lossy();
            docs.push(Doc {
                id: norm_id(&id.replace('\\', "/")).to_string(),
                text,
                title: None,
                time: None,
            });
        }
    } else if input.is_file() {
        for_each_jsonl_line(input, |line_no, line| {
            let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
                bad_input(format!(
                    "{}:{}:{}: {e}",
                    input.display(),
                    line_no,
                    e.column()
                ))
            })?;
            let id = match &v["id"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => {
                    return Err(bad_input(format!(
                        "{}:{line_no}: `id` missing or not a string/number",
                        input.display()
                    )))
                }
            };
            let Some(text) = v["text"].as_str() else {
                return Err(bad_input(format!(
                    "{}:{line_no}: `text` missing or not a string",
                    input.display()
                )));
            };
            docs.push(Doc {
                id: norm_id(&id).to_string(),
                text: text.to_string(),
                title: v["title"].as_str().map(String::from),
                time: v["time"].as_f64(),
            });
            Ok(())
        })?;
    } else {
        return Err(bad_input(format!(
            "{}: no such file or directory",
            input.display()
        )));
    }
    let mut seen = FxHashSet::default();
    for d in &docs {
        if !seen.insert(d.id.as_str()) {
            return Err(bad_input(format!(
                "{}: id `{}` appears twice",
                input.display(),
                d.id
            )));
        }
    }
    Ok(docs)
}

/// A labelled pair (ids normalised, `a < b`).
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    /// First id.
    pub a: String,
    /// Second id.
    pub b: String,
    /// Whether the pair is a duplicate (positive).
    pub positive: bool,
    /// The label as the file writes it (`cut`, `light`, …).
    pub label: String,
}

/// Labels that mean "not a duplicate" when `--positive` is not given.
pub const NEGATIVE_LABELS: &[&str] = &["0", "unrelated", "non"];

/// Reads a TSV with header `a b label …`; `positive` names the positive labels, otherwise every
/// label but those of [`NEGATIVE_LABELS`] is positive.
pub fn load_labels(path: &Path, positive: Option<&[String]>) -> Result<Vec<Labelled>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad_input(format!("{}: cannot read: {e}", path.display())))?;
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = match lines.next() {
        Some((_, h)) => h.split('\t').collect(),
        None => return Err(bad_input(format!("{}:1: empty file", path.display()))),
    };
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let (Some(ca), Some(cb), Some(cl)) = (col("a"), col("b"), col("label")) else {
        return Err(bad_input(format!(
            "{}:1: header must name columns `a`, `b` and `label`",
            path.display()
        )));
    };
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let get = |c: usize| f.get(c).map(|s| s.trim()).filter(|s| !s.is_empty());
        let (Some(a), Some(b), Some(l)) = (get(ca), get(cb), get(cl)) else {
            return Err(bad_input(format!(
                "{}:{}: expected columns a, b and label",
                path.display(),
                i + 1
            )));
        };
        let pos = match positive {
            Some(p) => p.iter().any(|x| x == l),
            None => !NEGATIVE_LABELS.contains(&l),
        };
        let (a, b) = (norm_id(a), norm_id(b));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        out.push(Labelled {
            a: a.to_string(),
            b: b.to_string(),
            positive: pos,
            label: l.to_string(),
        });
    }
    Ok(out)
}

/// Parses `from:to:step` (or one number) into the thresholds it spans, ends included.
pub fn parse_thresholds(s: &str) -> Result<Vec<f64>, String> {
    let parts: Vec<f64> = s
        .split(':')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("thresholds `{s}`: expected FROM:TO:STEP or a number"))?;
    let ok = |x: f64| x > 0.0 && x <= 1.0;
    match parts.as_slice() {
        [t] if ok(*t) => Ok(vec![*t]),
        [a, b, step] if ok(*a) && ok(*b) && a <= b && *step > 0.0 => {
            let n = ((b - a) / step + 1e-9).floor() as usize;
            // Rounded to 6 places so that 0.1 steps print and compare as written.
            Ok((0..=n)
                .map(|i| ((a + i as f64 * step) * 1e6).round() / 1e6)
                .collect())
        }
        _ => Err(format!(
            "thresholds `{s}`: expected FROM:TO:STEP with 0 < FROM ≤ TO ≤ 1 and STEP > 0"
        )),
    }
}

/// A detector's pairs over documents, with everything needed to re-judge them per threshold.
pub struct MethodRun {
    /// The prepared detector.
    pub detector: Box<dyn Detector>,
    /// Signatures by document.
    pub sigs: Vec<Vec<u64>>,
    /// Candidate pairs; `verified` ones carry full-index scores and copied passages.
    pub pairs: Vec<Pair>,
    /// The grey-zone rule the verified pairs are judged by.
    pub grey: GreyZone,
    /// Shingles a contained pair must share (`DedupSettings::min_shared_shingles`).
    pub min_shared_shingles: f64,
}

/// Runs one detector over in-memory documents: statistics, signatures, pairs, verification.
pub fn run_method(docs: &[Doc], settings: &DedupSettings, stop: &StopWords) -> Result<MethodRun> {
    let mut detector = build_detector(settings).map_err(bad_input)?;
    let canon: Vec<CanonText> = docs
        .par_iter()
        .map_init(|| Canonicalizer::new(stop), |c, d| c.canonicalize(&d.text))
        .collect();
    if detector.needs_stats() {
        let mut stats = CorpusStats::default();
        for (d, c) in docs.iter().zip(&canon) {
            stats.add(&detector.terms(&d.text, c));
        }
        detector.prepare(Arc::new(stats));
    }
    let det: &dyn Detector = detector.as_ref();
    let sigs: Vec<Vec<u64>> = docs
        .par_iter()
        .zip(&canon)
        .map(|(d, c)| det.sign_doc(&d.text, c))
        .collect();
    // The lowest thresholds any caller uses; verdicts are recomputed per threshold later.
    let lowest = Thresholds {
        resemblance: 0.5,
        containment: 0.5,
        min_shared_shingles: settings.min_shared_shingles as f64,
    };
    let grey = settings.grey_zone();
    let pairs = dedup::find_pairs(&sigs, sigs.len(), det, &lowest, &grey, &mut |need| {
        Ok(need
            .iter()
            .map(|&i| (i, canon[i as usize].clone()))
            .collect())
    })?;
    Ok(MethodRun {
        detector,
        sigs,
        pairs,
        grey,
        min_shared_shingles: settings.min_shared_shingles as f64,
    })
}

impl MethodRun {
    /// The verdict of pair `p` at thresholds `t`.
    pub fn verdict(&self, p: &Pair, t: &Thresholds) -> Verdict {
        let det = self.detector.as_ref();
        let judged = if p.verified {
            let full = dedup::full_detector(det);
            self.grey.judge(&full, &p.scores, p.copied, t)
        } else {
            // Unsure pairs were all verified, so the scores alone decide.
            det.judge(&p.scores, t)
        };
        let exact = p.verified
            || (det.is_exact(&self.sigs[p.a as usize]) && det.is_exact(&self.sigs[p.b as usize]));
        dedup::weigh(
            judged,
            dedup::shared_shingles(p.scores.inter, exact, det),
            t,
        )
    }
}

/// One row of the evaluation table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Method name.
    pub method: String,
    /// Threshold, or `None` for methods a shared key decides.
    pub threshold: Option<f64>,
    /// Pairs flagged over the whole collection, labelled or not.
    pub flagged: usize,
    /// Labelled pairs flagged.
    pub found: usize,
    /// Flagged labelled pairs that are positive.
    pub tp: usize,
    /// Flagged labelled pairs that are negative.
    pub fp: usize,
    /// Positive labelled pairs not flagged.
    pub missed: usize,
    /// tp / found.
    pub precision: f64,
    /// tp / positives.
    pub recall: f64,
    /// Harmonic mean of precision and recall.
    pub f1: f64,
    /// Type I error as the papers report it: wrongly flagged share of the found pairs, in %.
    pub type1_pct: f64,
}

/// Scores a set of flagged id pairs against the labels.
pub fn score(
    method: &str,
    threshold: Option<f64>,
    flagged: &FxHashSet<(String, String)>,
    labels: &[Labelled],
) -> Row {
    let (mut tp, mut fp, mut missed) = (0, 0, 0);
    for l in labels {
        let hit = flagged.contains(&(l.a.clone(), l.b.clone()));
        match (hit, l.positive) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => missed += 1,
            (false, false) => {}
        }
    }
    let found = tp + fp;
    let ratio = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    let (p, r) = (ratio(tp, found), ratio(tp, tp + missed));
    Row {
        method: method.to_string(),
        threshold,
        flagged: flagged.len(),
        found,
        tp,
        fp,
        missed,
        precision: p,
        recall: r,
        f1: if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        },
        type1_pct: 100.0 * ratio(fp, found),
    }
}

/// The thresholds a method is judged at: each of `thresholds`, or one `None` for methods a
/// shared key decides.
fn method_thresholds(run: &MethodRun, thresholds: &[f64]) -> Vec<Option<f64>> {
    if run.detector.uses_thresholds() {
        thresholds.iter().map(|&t| Some(t)).collect()
    } else {
        vec![None]
    }
}

/// Verdicts of the run's pairs at threshold `t` (both thresholds), by id pair.
fn verdicts_at(
    run: &MethodRun,
    docs: &[Doc],
    t: Option<f64>,
) -> FxHashMap<(String, String), Verdict> {
    let th = Thresholds {
        resemblance: t.unwrap_or(0.5),
        containment: t.unwrap_or(0.5),
        min_shared_shingles: run.min_shared_shingles,
    };
    run.pairs
        .iter()
        .map(|p| {
            let ids = ordered(&docs[p.a as usize].id, &docs[p.b as usize].id);
            (ids, run.verdict(p, &th))
        })
        .collect()
}

/// Rows for one rule-based method at every threshold (one row if thresholds do not apply).
pub fn eval_method(
    run: &MethodRun,
    name: &str,
    docs: &[Doc],
    labels: &[Labelled],
    thresholds: &[f64],
    duplicates_only: bool,
) -> Vec<Row> {
    method_thresholds(run, thresholds)
        .into_iter()
        .map(|t| {
            let flagged: FxHashSet<(String, String)> = verdicts_at(run, docs, t)
                .into_iter()
                .filter(|(_, v)| match v {
                    Verdict::Duplicate => true,
                    Verdict::Contained => !duplicates_only,
                    _ => false,
                })
                .map(|(ids, _)| ids)
                .collect();
            score(name, t, &flagged, labels)
        })
        .collect()
}

/// How many labelled pairs of one label a method flags at one threshold.
#[derive(Debug, Clone, Serialize)]
pub struct LabelRow {
    /// Method name.
    pub method: String,
    /// Threshold, or `None` for methods a shared key decides.
    pub threshold: Option<f64>,
    /// The label.
    pub label: String,
    /// Labelled pairs with this label.
    pub pairs: usize,
    /// Of those, pairs judged `duplicate` or `contained`.
    pub flagged: usize,
    /// Of those, pairs judged `duplicate`.
    pub duplicate: usize,
}

/// Flagged pairs per label (labels in order of first appearance) at every threshold.
pub fn by_label(
    run: &MethodRun,
    name: &str,
    docs: &[Doc],
    labels: &[Labelled],
    thresholds: &[f64],
) -> Vec<LabelRow> {
    let mut names: Vec<&str> = Vec::new();
    for l in labels {
        if !names.contains(&l.label.as_str()) {
            names.push(&l.label);
        }
    }
    let mut rows = Vec::new();
    for t in method_thresholds(run, thresholds) {
        let verdicts = verdicts_at(run, docs, t);
        for &label in &names {
            let mut row = LabelRow {
                method: name.to_string(),
                threshold: t,
                label: label.to_string(),
                pairs: 0,
                flagged: 0,
                duplicate: 0,
            };
            for l in labels.iter().filter(|l| l.label == label) {
                row.pairs += 1;
                match verdicts.get(&(l.a.clone(), l.b.clone())) {
                    Some(Verdict::Duplicate) => {
                        row.flagged += 1;
                        row.duplicate += 1;
                    }
                    Some(Verdict::Contained) => row.flagged += 1,
                    _ => {}
                }
            }
            rows.push(row);
        }
    }
    rows
}

/// The per-label table as markdown.
pub fn label_markdown(rows: &[LabelRow]) -> String {
    let mut s = String::from(
        "| method | t | label | pairs | flagged | of which duplicate |\n|---|---:|---|---:|---:|---:|\n",
    );
    for r in rows {
        let t = r.threshold.map_or("—".to_string(), |t| format!("{t:.2}"));
        s.push_str(&format!(
            "| {} | {t} | {} | {} | {} | {} |\n",
            r.method, r.label, r.pairs, r.flagged, r.duplicate
        ));
    }
    s
}

/// An id pair in `a < b` order.
pub fn ordered(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// The table as markdown, shaped like the papers' (found pairs, P, R, F1, type I error %).
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "| method | t | flagged (all) | found (labelled) | TP | FP | precision | recall | F1 | type I err % |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let t = r.threshold.map_or("—".to_string(), |t| format!("{t:.2}"));
        s.push_str(&format!(
            "| {} | {t} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.1} |\n",
            r.method, r.flagged, r.found, r.tp, r.fp, r.precision, r.recall, r.f1, r.type1_pct
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_span_ends() {
        assert_eq!(
            parse_thresholds("0.5:1.0:0.1").unwrap(),
            vec![0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
        );
        assert_eq!(parse_thresholds("0.7").unwrap(), vec![0.7]);
        assert!(parse_thresholds("0:2:1").is_err());
        assert!(parse_thresholds("x").is_err());
    }

    #[test]
    fn scores_by_hand() {
        let labels = vec![
            Labelled {
                a: "a".into(),
                b: "b".into(),
                positive: true,
                label: "cut".into(),
            },
            Labelled {
                a: "a".into(),
                b: "c".into(),
                positive: true,
                label: "cut".into(),
            },
            Labelled {
                a: "b".into(),
                b: "c".into(),
                positive: false,
                label: "non".into(),
            },
        ];
        let flagged: FxHashSet<(String, String)> =
            [ordered("b", "a"), ordered("b", "c"), ordered("x", "y")]
                .into_iter()
                .collect();
        let r = score("m", Some(0.5), &flagged, &labels);
        assert_eq!((r.flagged, r.found, r.tp, r.fp, r.missed), (3, 2, 1, 1, 1));
        assert_eq!(
            (r.precision, r.recall, r.f1, r.type1_pct),
            (0.5, 0.5, 0.5, 50.0)
        );
    }

    #[test]
    fn labels_default_and_named_positives() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.tsv");
        std::fs::write(&p, "a\tb\tlabel\nx.txt\tw\tcut\ny\tz.txt\tnon\n").unwrap();
        let l = load_labels(&p, None).unwrap();
        assert_eq!(
            l[0],
            Labelled {
                a: "w".into(),
                b: "x".into(),
                positive: true,
                label: "cut".into(),
            }
        );
        assert!(!l[1].positive);
        let only = load_labels(&p, Some(&["non".to_string()])).unwrap();
        assert!(!only[0].positive && only[1].positive);
        std::fs::write(&p, "a\tb\tlabel\nx\n").unwrap();
        let e = load_labels(&p, None).unwrap_err().to_string();
        assert!(e.contains("l.tsv:2"), "{e}");
    }
}
