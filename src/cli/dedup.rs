//! Prints what `collect dedup` found: the TSV of pairs.

use crate::dedup::standalone::DedupResult;
use crate::sign::Verdict;
use anyhow::{Context, Result};
use std::io::Write;

/// A score as the TSV gives it: six decimals, or `nan`.
struct Score(f64);

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_nan() {
            f.write_str("nan")
        } else {
            write!(f, "{:.6}", self.0)
        }
    }
}

/// Writes the TSV: header, then one row per pair oriented and sorted by id.
pub fn write_tsv(result: &DedupResult, all_pairs: bool, out: &mut dyn Write) -> Result<()> {
    let mut rows: Vec<(&str, &str, f64, f64, f64, Verdict)> = result
        .pairs
        .iter()
        .filter(|p| all_pairs || matches!(p.verdict, Verdict::Duplicate | Verdict::Contained))
        .map(|p| {
            let (a, b) = (&result.ids[p.a as usize], &result.ids[p.b as usize]);
            let s = &p.scores;
            if a <= b {
                (
                    a.as_str(),
                    b.as_str(),
                    s.resemblance,
                    s.cont_a_in_b,
                    s.cont_b_in_a,
                    p.verdict,
                )
            } else {
                (
                    b.as_str(),
                    a.as_str(),
                    s.resemblance,
                    s.cont_b_in_a,
                    s.cont_a_in_b,
                    p.verdict,
                )
            }
        })
        .collect();
    rows.sort_by(|x, y| (x.0, x.1).cmp(&(y.0, y.1)));
    let mut w = std::io::BufWriter::new(out);
    writeln!(w, "a\tb\tresemblance\tcont_a_in_b\tcont_b_in_a\tverdict")?;
    for (a, b, r, ab, ba, v) in rows {
        writeln!(
            w,
            "{a}\t{b}\t{}\t{}\t{}\t{}",
            Score(r),
            Score(ab),
            Score(ba),
            v.as_str()
        )?;
    }
    w.flush().context("cannot write output")?;
    Ok(())
}
