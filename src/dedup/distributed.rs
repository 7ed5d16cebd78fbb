//! The engine's steps one record at a time, for a distributed run: the cluster does the joins
//! (postings on fingerprint, pairs with their documents), and every decision on a pair is taken
//! here, by the functions [`find_pairs`](super::find_pairs) calls, so a Spark job and `collect
//! dedup` give the same pairs with the same verdicts.
//!
//! Records are JSON lines; pairs name their documents by id with `a < b` (the store's order, so
//! `a` is the document a build puts first). The steps, in the order a job runs them:
//!
//! 1. [`judge`]: a candidate pair with its shared element count and both signatures' sizes →
//!    scores and verdict, and whether it must be verified on the full texts;
//! 2. [`shingles`]: a document that a pair to verify names → its shingles, which the cluster
//!    counts;
//! 3. [`boilerplate`]: a shingle with the number of verified texts holding it → the shingle,
//!    when that makes it boilerplate;
//! 4. [`verify`]: a pair to verify with both texts → its verdict on them.

use super::{
    conclude, full_detector, grey_zone_of, is_boilerplate, mark_boilerplate, needs_verifying,
    verify_pair, Pair,
};
use crate::canon::{Canonicalizer, StopWords};
use crate::error::bad_input;
use crate::sign::{Common, Detector, GreyZone, Scores, ShingleSeq, SigSize, Thresholds, Verdict};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// A judged pair as the steps write it: ids in store order, scores oriented `a`→`b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairRecord {
    /// The document first in id order.
    pub a: String,
    /// The other document.
    pub b: String,
    /// Shared elements (signature elements, or shingles once verified).
    pub inter: u32,
    /// Resemblance.
    pub resemblance: f64,
    /// Containment of `a` in `b`.
    pub cont_a_in_b: f64,
    /// Containment of `b` in `a`.
    pub cont_b_in_a: f64,
    /// The verdict.
    pub verdict: Verdict,
    /// Whether it was re-scored on the full texts.
    pub verified: bool,
    /// Share of the shorter text in copied passages (verified pairs).
    pub copied: f64,
    /// Shingles the texts share.
    pub shared: u64,
    /// Whether the pair still has to be verified on the full texts ([`verify`]); its verdict
    /// and `shared` are not final until then.
    #[serde(default)]
    pub verify: bool,
    /// Whether both signatures are full indexes (what verification reads).
    #[serde(default)]
    pub both_exact: bool,
    /// Whether the store records the pair ([`Verdict::is_recorded`]), once final.
    #[serde(default)]
    pub recorded: bool,
}

impl PairRecord {
    fn pair(&self) -> Pair {
        Pair {
            a: 0,
            b: 1,
            scores: Scores {
                inter: self.inter,
                resemblance: self.resemblance,
                cont_a_in_b: self.cont_a_in_b,
                cont_b_in_a: self.cont_b_in_a,
            },
            verdict: self.verdict,
            verified: self.verified,
            copied: self.copied,
            shared: self.shared,
        }
    }

    fn of(a: String, b: String, p: &Pair, verify: bool, both_exact: bool) -> PairRecord {
        PairRecord {
            a,
            b,
            inter: p.scores.inter,
            resemblance: p.scores.resemblance,
            cont_a_in_b: p.scores.cont_a_in_b,
            cont_b_in_a: p.scores.cont_b_in_a,
            verdict: p.verdict,
            verified: p.verified,
            copied: p.copied,
            shared: p.shared,
            verify,
            both_exact,
            recorded: !verify && p.verdict.is_recorded(),
        }
    }
}

/// The settings every step reads, from the topic's dedup section.
pub struct Steps<'a> {
    /// The topic's detector.
    pub detector: &'a dyn Detector,
    /// Its thresholds.
    pub thresholds: Thresholds,
    /// Its grey zone.
    pub grey: GreyZone,
    /// The canonical form's words.
    pub stop: &'a StopWords,
}

/// Input of [`judge`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Candidate {
    a: String,
    b: String,
    inter: u32,
    sa: SigSize,
    sb: SigSize,
}

/// Input of [`shingles`].
#[derive(Debug, Deserialize)]
struct TextRecord {
    id: String,
    text: String,
}

/// Input of [`verify`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToVerify {
    pair: PairRecord,
    text_a: String,
    text_b: String,
    /// The engine takes `b` first (an update's newcomer before a stored text): it decides
    /// which text is the shorter when both have as many words.
    #[serde(default)]
    swap: bool,
}

/// Calls `f` on each non-blank line of `input` parsed as `T`; a line that does not parse is
/// bad input naming its line.
fn each<T: serde::de::DeserializeOwned>(
    input: impl BufRead,
    step: &str,
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<usize> {
    let mut n = 0;
    for (i, line) in input.lines().enumerate() {
        let line = line.with_context(|| format!("{step}: stdin:{}: cannot read", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let rec: T = serde_json::from_str(&line)
            .map_err(|e| bad_input(format!("{step}: stdin:{}: {e}", i + 1)))?;
        f(rec)?;
        n += 1;
    }
    Ok(n)
}

fn write_json(output: &mut dyn Write, rec: &impl Serialize) -> Result<()> {
    serde_json::to_writer(&mut *output, rec)?;
    output.write_all(b"\n")?;
    Ok(())
}

/// Step 1: judges candidate pairs `{a, b, inter, sa, sb}` (ids with `a < b`, the shared
/// element count, both signatures' [`SigSize`]s) on their signatures. Returns the pairs read.
pub fn judge(steps: &Steps, input: impl BufRead, output: &mut dyn Write) -> Result<usize> {
    let grey = grey_zone_of(steps.detector, &steps.grey);
    each(input, "judge", |c: Candidate| {
        if c.a >= c.b {
            return Err(bad_input(format!(
                "judge: pair ({}, {}) is not in id order",
                c.a, c.b
            )));
        }
        let (scores, verdict) =
            steps
                .detector
                .judge_sizes(c.sa, c.sb, c.inter as usize, &steps.thresholds);
        let mut p = Pair {
            a: 0,
            b: 1,
            scores,
            verdict,
            verified: false,
            copied: 0.0,
            shared: 0,
        };
        let both_exact = c.sa.exact && c.sb.exact;
        let verify = needs_verifying(&p, both_exact, grey, steps.detector.shingle());
        if !verify {
            conclude(&mut p, both_exact, steps.detector, &steps.thresholds);
        }
        write_json(output, &PairRecord::of(c.a, c.b, &p, verify, both_exact))
    })
}

/// Step 2: the shingles (without repeats) of each document `{id, text}`, as `{id, shingles}`.
pub fn shingles(steps: &Steps, input: impl BufRead, output: &mut dyn Write) -> Result<usize> {
    let mut canon = Canonicalizer::new(steps.stop);
    let w = steps.detector.shingle();
    each(input, "shingles", |d: TextRecord| {
        let seq = ShingleSeq::new(&canon.canonicalize(&d.text), w);
        write_json(
            output,
            &serde_json::json!({"id": d.id, "shingles": seq.set()}),
        )
    })
}

/// Step 3: of the shingles counted over the texts to verify (`[shingle, count]` lines), writes
/// those the count makes boilerplate ([`is_boilerplate`]), one number per line.
pub fn boilerplate(steps: &Steps, input: impl BufRead, output: &mut dyn Write) -> Result<usize> {
    each(input, "boilerplate", |(shingle, count): (u64, usize)| {
        if is_boilerplate(count, &steps.grey) {
            writeln!(output, "{shingle}")?;
        }
        Ok(())
    })
}

/// Step 4: verifies pairs `{pair, text_a, text_b}` (a pair from [`judge`] with `verify` set,
/// and both documents' cleaned texts) on the full texts, with `frequent` (sorted, from
/// [`boilerplate`]) left out of copied passages. Writes the final pair.
pub fn verify(
    steps: &Steps,
    frequent: &[u32],
    input: impl BufRead,
    output: &mut dyn Write,
) -> Result<usize> {
    let grey = grey_zone_of(steps.detector, &steps.grey);
    let full = full_detector(steps.detector);
    let mut canon = Canonicalizer::new(steps.stop);
    let w = steps.detector.shingle();
    let passages = grey.is_some_and(|g| g.passage_words > 0);
    let frequent = Common::new(frequent.to_vec());
    each(input, "verify", |v: ToVerify| {
        let mut seq = |text: &str| {
            let mut s = ShingleSeq::new(&canon.canonicalize(text), w);
            if passages {
                mark_boilerplate(&mut s, &frequent);
            }
            s
        };
        let (sa, sb) = (seq(&v.text_a), seq(&v.text_b));
        let mut p = v.pair.pair();
        let both_exact = v.pair.both_exact;
        if v.swap {
            swap_sides(&mut p);
            verify_pair(&mut p, &sb, &sa, both_exact, &full, &steps.thresholds, grey);
            swap_sides(&mut p);
        } else {
            verify_pair(&mut p, &sa, &sb, both_exact, &full, &steps.thresholds, grey);
        }
        conclude(&mut p, both_exact, steps.detector, &steps.thresholds);
        write_json(
            output,
            &PairRecord::of(v.pair.a, v.pair.b, &p, false, both_exact),
        )
    })
}

/// Turns a pair's scores to face the other way.
fn swap_sides(p: &mut Pair) {
    std::mem::swap(&mut p.scores.cont_a_in_b, &mut p.scores.cont_b_in_a);
}

/// Reads the boilerplate shingles [`boilerplate`] wrote (one number per line), sorted.
pub fn read_frequent(path: &std::path::Path) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        out.push(
            line.parse::<u32>()
                .map_err(|e| bad_input(format!("{}:{}: `{line}`: {e}", path.display(), i + 1)))?,
        );
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canon::CanonText;
    use crate::sign::test_support::{between, canon, words};
    use crate::sign::{intersection_size, ModM};
    use std::collections::BTreeMap;

    /// The engine's pairs over `texts`, and the same pairs through the four steps, fed as a
    /// cluster would feed them (counting shared elements and shingles itself).
    fn both_ways(texts: &[String]) -> (Vec<PairRecord>, Vec<PairRecord>) {
        let det = ModM::new(4, 25, 8);
        let thresholds = Thresholds {
            resemblance: 0.5,
            containment: 0.6,
            min_shared_shingles: 20.0,
        };
        let grey = GreyZone {
            from: 0.15,
            passage_words: 12,
            passage_share: 0.1,
            passage_common: 3,
        };
        let stop = StopWords::none();
        let ids: Vec<String> = (0..texts.len()).map(|i| format!("d{i:02}")).collect();
        let canons: Vec<CanonText> = texts.iter().map(|t| canon(t)).collect();
        let sigs: Vec<Vec<u64>> = canons.iter().map(|c| det.sign(c)).collect();
        let engine: Vec<PairRecord> =
            super::super::find_pairs(&sigs, sigs.len(), &det, &thresholds, &grey, &mut |need| {
                Ok(need
                    .iter()
                    .map(|&i| (i, canons[i as usize].clone()))
                    .collect())
            })
            .unwrap()
            .iter()
            .map(|p| {
                let mut r = PairRecord::of(
                    ids[p.a as usize].clone(),
                    ids[p.b as usize].clone(),
                    p,
                    false,
                    false,
                );
                r.both_exact =
                    det.is_exact(&sigs[p.a as usize]) && det.is_exact(&sigs[p.b as usize]);
                r
            })
            .collect();

        let steps = Steps {
            detector: &det,
            thresholds,
            grey,
            stop: &stop,
        };
        let mut candidates = String::new();
        for a in 0..sigs.len() {
            for b in a + 1..sigs.len() {
                let inter = intersection_size(&sigs[a], &sigs[b]);
                if inter > 0 {
                    let rec = serde_json::json!({"a": ids[a], "b": ids[b], "inter": inter,
                        "sa": det.size_of(&sigs[a]).unwrap(), "sb": det.size_of(&sigs[b]).unwrap()});
                    candidates.push_str(&format!("{rec}\n"));
                }
            }
        }
        let mut out = Vec::new();
        judge(&steps, candidates.as_bytes(), &mut out).unwrap();
        let judged: Vec<PairRecord> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let to_verify: Vec<&PairRecord> = judged.iter().filter(|p| p.verify).collect();
        let mut need: Vec<usize> = to_verify
            .iter()
            .flat_map(|p| [&p.a, &p.b])
            .map(|id| ids.iter().position(|x| x == id).unwrap())
            .collect();
        need.sort_unstable();
        need.dedup();
        let docs: String = need
            .iter()
            .map(|&i| format!("{}\n", serde_json::json!({"id": ids[i], "text": texts[i]})))
            .collect();
        let mut out = Vec::new();
        shingles(&steps, docs.as_bytes(), &mut out).unwrap();
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for line in String::from_utf8(out).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for s in v["shingles"].as_array().unwrap() {
                *counts.entry(s.as_u64().unwrap()).or_default() += 1;
            }
        }
        let counted: String = counts.iter().map(|(s, c)| format!("[{s},{c}]\n")).collect();
        let mut out = Vec::new();
        boilerplate(&steps, counted.as_bytes(), &mut out).unwrap();
        let frequent: Vec<u32> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let text_of = |id: &str| &texts[ids.iter().position(|x| x == id).unwrap()];
        let lines: String = to_verify
            .iter()
            .map(|p| {
                format!(
                    "{}\n",
                    serde_json::json!({"pair": p, "text_a": text_of(&p.a), "text_b": text_of(&p.b)})
                )
            })
            .collect();
        let mut out = Vec::new();
        verify(&steps, &frequent, lines.as_bytes(), &mut out).unwrap();
        let mut steps_pairs: Vec<PairRecord> = judged.into_iter().filter(|p| !p.verify).collect();
        steps_pairs.extend(
            String::from_utf8(out)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<PairRecord>(l).unwrap()),
        );
        steps_pairs.sort_by(|x, y| (&x.a, &x.b).cmp(&(&y.a, &y.b)));
        (engine, steps_pairs)
    }

    #[test]
    fn the_steps_give_the_engines_pairs_and_verdicts() {
        let source = words(0..600, "s");
        let footer = words(0..40, "footer");
        let texts = vec![
            source.clone(),
            // A near-copy (duplicate), a pasted passage (grey zone), a short text inside the
            // long one (unsure until verified), boilerplate shared by four.
            format!("{} {}", words(0..560, "s"), words(0..40, "x")),
            between("p", 100, &words(100..160, "s"), 100),
            words(200..260, "s"),
            format!("{} {footer}", words(0..150, "m")),
            format!("{} {footer}", words(0..150, "n")),
            format!("{} {footer}", words(0..150, "o")),
            format!("{} {footer}", words(0..150, "q")),
            words(0..500, "unrelated"),
        ];
        let (engine, steps) = both_ways(&texts);
        let verdicts: Vec<Verdict> = engine.iter().map(|p| p.verdict).collect();
        assert!(verdicts.contains(&Verdict::Duplicate), "{verdicts:?}");
        assert!(verdicts.contains(&Verdict::Contained), "{verdicts:?}");
        assert!(engine.iter().any(|p| p.verified));
        // The pasted passage raises its pair to contained on the full texts; the footer the
        // four texts share is boilerplate, so their pairs stay different.
        let verdict_of = |a: &str, b: &str| {
            engine
                .iter()
                .find(|p| p.a == a && p.b == b)
                .map(|p| (p.verdict, p.verified))
        };
        assert_eq!(verdict_of("d00", "d02"), Some((Verdict::Contained, true)));
        assert_eq!(verdict_of("d04", "d05"), Some((Verdict::Different, true)));
        assert_eq!(engine, steps);
    }

    #[test]
    fn a_pair_out_of_id_order_is_refused() {
        let det = ModM::new(4, 25, 8);
        let stop = StopWords::none();
        let steps = Steps {
            detector: &det,
            thresholds: Thresholds {
                resemblance: 0.5,
                containment: 0.6,
                min_shared_shingles: 20.0,
            },
            grey: GreyZone {
                from: 0.15,
                passage_words: 12,
                passage_share: 0.1,
                passage_common: 20,
            },
            stop: &stop,
        };
        let size = r#"{"len":10,"sampled":10,"exact":true}"#;
        let line = format!(r#"{{"a":"z","b":"a","inter":3,"sa":{size},"sb":{size}}}"#);
        let err = judge(&steps, line.as_bytes(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("not in id order"), "{err}");
        let err = judge(&steps, "{\"a\":1}\n".as_bytes(), &mut Vec::new()).unwrap_err();
        assert!(err.to_string().contains("judge: stdin:1:"), "{err}");
    }
}
