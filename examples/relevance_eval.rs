//! Precision and recall of `off_topic` on the relevance dev set, over a range of thresholds,
//! and every text's score.
//!
//! `cargo run --release --example relevance_eval -- tests/fixtures/relevance`

use collect::workbench::relevance::{figures, score_dev_set};
use std::path::PathBuf;

fn main() -> anyhow::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("usage: relevance_eval DEV_SET_DIR"))?;
    let mut rows = score_dev_set(&dir)?;
    rows.sort_by(|a, b| {
        (&a.topic, a.off, a.score.to_bits()).cmp(&(&b.topic, b.off, b.score.to_bits()))
    });
    for r in &rows {
        println!(
            "{:6} {:3} {:4} {:5} {:.3} {}",
            r.topic,
            r.lang,
            if r.off { "off" } else { "on" },
            if r.hard { "hard" } else { "" },
            r.score,
            r.id
        );
    }
    println!("\nthreshold precision recall hard-negatives-caught");
    for t in [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6] {
        let f = figures(&rows, t);
        println!(
            "{:.2}      {:.3}     {:.3}  {:.3}",
            t, f.precision, f.recall, f.hard_recall
        );
    }
    Ok(())
}
