//! The learned detector of the stream paper: a criteria vector per ordered pair of documents,
//! classified by a linear SVM (`linfa-svm`). Two vectors per pair ("A is a duplicate of B" and
//! "B of A"); the pair is flagged when either direction is.

use crate::canon::{Canonicalizer, StopWords};
use crate::error::bad_input;
use crate::workbench::eval::{Doc, Labelled};
use anyhow::{Context, Result};
use linfa::prelude::*;
use linfa_svm::Svm;
use ndarray::{Array1, Array2};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Names of the criteria, in vector order (direction A → B).
pub const FEATURES: &[&str] = &[
    "text_cosine",
    "title_cosine",
    "sent_cont_a_in_b",
    "sent_cont_b_in_a",
    "para_cont_a_in_b",
    "para_cont_b_in_a",
    "num_cont_a_in_b",
    "num_cont_b_in_a",
    "num_damerau_levenshtein",
    "link_diff",
    "image_diff",
    "time_diff_days",
    "time_known",
];

/// What the criteria need from one document, computed once.
pub struct DocFeatures {
    tf: FxHashMap<String, f64>,
    title: FxHashMap<String, f64>,
    sentences: FxHashMap<String, f64>,
    paragraphs: FxHashMap<String, f64>,
    numbers: Vec<String>,
    links: f64,
    images: f64,
    time: Option<f64>,
}

fn bag(c: &mut Canonicalizer, s: &str) -> FxHashMap<String, f64> {
    let mut m = FxHashMap::default();
    for w in c.canonicalize(s).words() {
        *m.entry(w.to_string()).or_default() += 1.0;
    }
    m
}

/// Canonical units (sentences or paragraphs) with their length in words as weight.
fn units<'a>(
    c: &mut Canonicalizer,
    parts: impl Iterator<Item = &'a str>,
) -> FxHashMap<String, f64> {
    let mut m = FxHashMap::default();
    for p in parts {
        let t = c.canonicalize(p);
        if !t.is_empty() {
            *m.entry(t.buf.clone()).or_default() += t.len() as f64;
        }
    }
    m
}

impl DocFeatures {
    /// Extracts the document's parts; the title is the `title` field or else the first line.
    pub fn new(d: &Doc, stop: &StopWords) -> Self {
        let mut c = Canonicalizer::new(stop);
        let title = d
            .title
            .clone()
            .unwrap_or_else(|| d.text.lines().next().unwrap_or("").to_string());
        let sentences = units(
            &mut c,
            d.text
                .split_inclusive(['.', '!', '?', '…', '\n'])
                .map(str::trim),
        );
        let paragraphs = units(&mut c, d.text.split("\n\n"));
        let numbers = d
            .text
            .split(|ch: char| !ch.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let lower = d.text.to_lowercase();
        let links = (lower.matches("http://").count() + lower.matches("https://").count()) as f64;
        let images = [".jpg", ".jpeg", ".png", ".gif", "<img", "![", "[image"]
            .iter()
            .map(|p| lower.matches(p).count())
            .sum::<usize>() as f64;
        DocFeatures {
            tf: bag(&mut c, &d.text),
            title: bag(&mut c, &title),
            sentences,
            paragraphs,
            numbers,
            links,
            images,
            time: d.time,
        }
    }
}

/// Cosine of two bags of words (0 when either is empty).
pub fn cosine(a: &FxHashMap<String, f64>, b: &FxHashMap<String, f64>) -> f64 {
    let dot: f64 = a.iter().filter_map(|(w, x)| b.get(w).map(|y| x * y)).sum();
    let na: f64 = a.values().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.values().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Weighted containment of `a`'s units in `b`: the share of `a`'s words in units `b` also has.
pub fn weighted_containment(a: &FxHashMap<String, f64>, b: &FxHashMap<String, f64>) -> f64 {
    let total: f64 = a.values().sum();
    if total == 0.0 {
        return 0.0;
    }
    a.iter()
        .filter(|(u, _)| b.contains_key(*u))
        .map(|(_, w)| w)
        .sum::<f64>()
        / total
}

fn set_containment(a: &[String], b: &[String]) -> f64 {
    let sa: FxHashSet<&String> = a.iter().collect();
    let sb: FxHashSet<&String> = b.iter().collect();
    if sa.is_empty() {
        return 0.0;
    }
    sa.iter().filter(|x| sb.contains(*x)).count() as f64 / sa.len() as f64
}

/// Damerau–Levenshtein distance (optimal string alignment) of two token sequences.
pub fn damerau_levenshtein<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

/// The criteria vector for "A is a duplicate of B".
pub fn criteria(a: &DocFeatures, b: &DocFeatures) -> Vec<f64> {
    let rel = |x: f64, y: f64| (x - y) / (1.0 + x + y);
    let dl = damerau_levenshtein(&a.numbers, &b.numbers) as f64;
    let (time_diff, known) = match (a.time, b.time) {
        (Some(x), Some(y)) => (((x - y).abs() / 86_400.0).min(365.0) / 365.0, 1.0),
        _ => (0.0, 0.0),
    };
    vec![
        cosine(&a.tf, &b.tf),
        cosine(&a.title, &b.title),
        weighted_containment(&a.sentences, &b.sentences),
        weighted_containment(&b.sentences, &a.sentences),
        weighted_containment(&a.paragraphs, &b.paragraphs),
        weighted_containment(&b.paragraphs, &a.paragraphs),
        set_containment(&a.numbers, &b.numbers),
        set_containment(&b.numbers, &a.numbers),
        dl / (a.numbers.len().max(b.numbers.len()).max(1)) as f64,
        rel(a.links, b.links),
        rel(a.images, b.images),
        time_diff,
        known,
    ]
}

/// A labelled pair's criteria in both directions (A → B, B → A) and its label.
pub type PairSample = ((Vec<f64>, Vec<f64>), bool);

/// A trained linear model: standardisation, weights and bias (decision w·z − rho ≥ 0).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Model {
    /// Criteria names, to refuse a model trained on other criteria.
    pub features: Vec<String>,
    /// Which criteria are used (all, or a subset such as text cosine alone).
    pub used: Vec<usize>,
    /// Mean of each used criterion on the training set.
    pub mean: Vec<f64>,
    /// Standard deviation of each used criterion (1 where constant).
    pub std: Vec<f64>,
    /// Hyperplane weights.
    pub w: Vec<f64>,
    /// Offset.
    pub rho: f64,
}

impl Model {
    fn z(&self, x: &[f64]) -> Vec<f64> {
        self.used
            .iter()
            .enumerate()
            .map(|(k, &i)| (x[i] - self.mean[k]) / self.std[k])
            .collect()
    }

    /// Whether the direction described by `x` is a duplicate.
    pub fn predict(&self, x: &[f64]) -> bool {
        let z = self.z(x);
        z.iter().zip(&self.w).map(|(a, b)| a * b).sum::<f64>() - self.rho >= 0.0
    }

    /// Whether the pair is a duplicate in either direction.
    pub fn predict_pair(&self, a: &DocFeatures, b: &DocFeatures) -> bool {
        self.predict(&criteria(a, b)) || self.predict(&criteria(b, a))
    }

    /// Reads a model written by `collect eval --train`.
    pub fn load(path: &Path) -> Result<Model> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let m: Model = serde_json::from_str(&text).map_err(|e| {
            bad_input(format!(
                "{}:{}:{}: {e}",
                path.display(),
                e.line(),
                e.column()
            ))
        })?;
        if m.features != FEATURES || m.w.len() != m.used.len() {
            return Err(bad_input(format!(
                "{}: model was trained on other criteria",
                path.display()
            )));
        }
        Ok(m)
    }
}

/// Trains on `(criteria, label)` samples using the criteria in `used`; `c` is the SVM penalty.
pub fn train(samples: &[(Vec<f64>, bool)], used: &[usize], c: f64) -> Result<Model> {
    let pos = samples.iter().filter(|s| s.1).count();
    if pos == 0 || pos == samples.len() {
        return Err(bad_input(
            "training needs both positive and negative pairs".to_string(),
        ));
    }
    let k = used.len();
    let n = samples.len() as f64;
    let mean: Vec<f64> = used
        .iter()
        .map(|&i| samples.iter().map(|s| s.0[i]).sum::<f64>() / n)
        .collect();
    let std: Vec<f64> = used
        .iter()
        .zip(&mean)
        .map(|(&i, m)| {
            let v = samples.iter().map(|s| (s.0[i] - m).powi(2)).sum::<f64>() / n;
            if v > 1e-12 {
                v.sqrt()
            } else {
                1.0
            }
        })
        .collect();
    let mut x = Array2::<f64>::zeros((samples.len(), k));
    for (r, s) in samples.iter().enumerate() {
        for (col, &i) in used.iter().enumerate() {
            x[[r, col]] = (s.0[i] - mean[col]) / std[col];
        }
    }
    let y: Array1<bool> = samples.iter().map(|s| s.1).collect();
    let ds = linfa::Dataset::new(x, y);
    let svm = Svm::<f64, bool>::params()
        .pos_neg_weights(c, c)
        .linear_kernel()
        .fit(&ds)
        .map_err(|e| anyhow::anyhow!("SVM training failed: {e}"))?;
    // A linear SVM's decision is w·z − rho; w is read back one unit vector at a time.
    let w: Vec<f64> = (0..k)
        .map(|i| {
            let mut e = Array1::<f64>::zeros(k);
            e[i] = 1.0;
            svm.weighted_sum(&e)
        })
        .collect();
    Ok(Model {
        features: FEATURES.iter().map(|s| s.to_string()).collect(),
        used: used.to_vec(),
        mean,
        std,
        w,
        rho: svm.rho,
    })
}

/// Criteria of every labelled pair whose documents exist, both directions.
pub fn labelled_samples(docs: &[Doc], labels: &[Labelled], stop: &StopWords) -> Vec<PairSample> {
    let index: FxHashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let mut feats: FxHashMap<usize, DocFeatures> = FxHashMap::default();
    let mut out = Vec::new();
    for l in labels {
        let (Some(&a), Some(&b)) = (index.get(l.a.as_str()), index.get(l.b.as_str())) else {
            continue;
        };
        for i in [a, b] {
            feats
                .entry(i)
                .or_insert_with(|| DocFeatures::new(&docs[i], stop));
        }
        let (fa, fb) = (&feats[&a], &feats[&b]);
        out.push(((criteria(fa, fb), criteria(fb, fa)), l.positive));
    }
    out
}

/// Both directions of each pair as separate training samples.
pub fn directed(pairs: &[PairSample]) -> Vec<(Vec<f64>, bool)> {
    pairs
        .iter()
        .flat_map(|((ab, ba), y)| [(ab.clone(), *y), (ba.clone(), *y)])
        .collect()
}

/// F1 of `model` on pairs (flagged when either direction is positive).
pub fn f1_on(model: &Model, pairs: &[PairSample]) -> f64 {
    let (mut tp, mut fp, mut fneg) = (0.0, 0.0, 0.0);
    for ((ab, ba), y) in pairs {
        let hit = model.predict(ab) || model.predict(ba);
        match (hit, *y) {
            (true, true) => tp += 1.0,
            (true, false) => fp += 1.0,
            (false, true) => fneg += 1.0,
            _ => {}
        }
    }
    if tp == 0.0 {
        0.0
    } else {
        2.0 * tp / (2.0 * tp + fp + fneg)
    }
}

/// One point of the learning curve: mean F1 over the folds at a training-set size.
#[derive(Debug, Clone, Serialize)]
pub struct CurvePoint {
    /// Labelled pairs trained on.
    pub train_pairs: usize,
    /// Mean F1 on the held-out folds, all criteria.
    pub f1_all: f64,
    /// Mean F1 with the text cosine alone (the paper's "words only").
    pub f1_words: f64,
    /// Folds where both classes were present in the training prefix.
    pub folds: usize,
}

/// k-fold learning curve: for each size, train on that many pairs of the training folds (in a
/// fixed shuffled order) and test on the held-out fold.
pub fn learning_curve(pairs: &[PairSample], folds: usize) -> Vec<CurvePoint> {
    let mut order: Vec<usize> = (0..pairs.len()).collect();
    // A fixed shuffle, so the curve is the same on every run.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..order.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let all: Vec<usize> = (0..FEATURES.len()).collect();
    let max_train = pairs.len() - pairs.len().div_ceil(folds);
    let mut sizes: Vec<usize> = [10, 20, 30, 40, 50, 60]
        .into_iter()
        .filter(|&s| s < max_train)
        .collect();
    sizes.push(max_train);
    sizes
        .into_iter()
        .map(|size| {
            let (mut sum_all, mut sum_words, mut used) = (0.0, 0.0, 0);
            for f in 0..folds {
                let test: Vec<_> = order
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| k % folds == f)
                    .map(|(_, &i)| pairs[i].clone())
                    .collect();
                let train_pairs: Vec<_> = order
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| k % folds != f)
                    .map(|(_, &i)| pairs[i].clone())
                    .take(size)
                    .collect();
                let samples = directed(&train_pairs);
                if let (Ok(ma), Ok(mw)) = (train(&samples, &all, 1.0), train(&samples, &[0], 1.0)) {
                    sum_all += f1_on(&ma, &test);
                    sum_words += f1_on(&mw, &test);
                    used += 1;
                }
            }
            let d = used.max(1) as f64;
            CurvePoint {
                train_pairs: size,
                f1_all: sum_all / d,
                f1_words: sum_words / d,
                folds: used,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damerau_levenshtein_by_hand() {
        let s = |x: &str| x.chars().collect::<Vec<_>>();
        assert_eq!(damerau_levenshtein(&s("1234"), &s("1243")), 1);
        assert_eq!(damerau_levenshtein(&s("kitten"), &s("sitting")), 3);
        assert_eq!(damerau_levenshtein::<char>(&[], &s("ab")), 2);
    }

    #[test]
    fn criteria_by_hand() {
        let stop = StopWords::none();
        let doc = |t: &str| Doc {
            id: "x".into(),
            text: t.into(),
            title: None,
            time: None,
        };
        let a = DocFeatures::new(
            &doc("Title here\n\nOne two three. Year 1999 and 2001."),
            &stop,
        );
        let b = DocFeatures::new(&doc("Title here\n\nOne two three. Other text 2001."), &stop);
        let x = criteria(&a, &b);
        assert!((x[1] - 1.0).abs() < 1e-12); // same first line
                                             // a's sentences: "title here" (2 words), "one two three" (3), "year 1999 and 2001" (4):
                                             // b holds the first two, 5 of 9 words.
        assert!((x[2] - 5.0 / 9.0).abs() < 1e-12);
        assert_eq!(x[6], 0.5); // numbers {1999, 2001} vs {2001}
        assert_eq!(x[7], 1.0);
        assert_eq!(x[8], 0.5); // [1999, 2001] → [2001]: one deletion over length 2
    }

    #[test]
    fn svm_separates_a_clear_case() {
        let mut samples = Vec::new();
        for i in 0..20 {
            let v = i as f64 / 20.0;
            let mut x = vec![0.0; FEATURES.len()];
            x[0] = if i % 2 == 0 {
                0.8 + v / 10.0
            } else {
                0.1 + v / 10.0
            };
            samples.push((x, i % 2 == 0));
        }
        let all: Vec<usize> = (0..FEATURES.len()).collect();
        let m = train(&samples, &all, 1.0).unwrap();
        assert!(samples.iter().all(|(x, y)| m.predict(x) == *y));
    }
}
