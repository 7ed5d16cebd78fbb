//! Measures the relevance stage on a labelled dev set (`tests/fixtures/relevance/`): for each
//! `TOPIC.yaml` there, the texts of `TOPIC.jsonl` (`{"id", "label": "on"|"off", "hard",
//! "lang", "text"}`) are scored against the topic and `off_topic` is judged against the labels.

use crate::relevance::RelevanceSettings;
use crate::topic::Topic;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One labelled text of the dev set.
#[derive(Debug, Clone, Deserialize)]
pub struct Labelled {
    /// Id (where it came from).
    pub id: String,
    /// `on` or `off` the topic.
    pub label: String,
    /// A negative that uses the topic's words in passing.
    #[serde(default)]
    pub hard: bool,
    /// Language.
    pub lang: String,
    /// The text.
    pub text: String,
}

/// A scored text of the dev set.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Topic name.
    pub topic: String,
    /// Text id.
    pub id: String,
    /// Language.
    pub lang: String,
    /// Whether the label says off topic.
    pub off: bool,
    /// A hard negative.
    pub hard: bool,
    /// The score.
    pub score: f64,
}

/// Precision and recall of `off_topic` at one threshold.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Figures {
    /// The threshold.
    pub threshold: f64,
    /// Of the texts put off topic, the share labelled off.
    pub precision: f64,
    /// Of the texts labelled off, the share put off topic.
    pub recall: f64,
    /// Of the hard negatives, the share put off topic.
    pub hard_recall: f64,
}

/// Scores every text of the dev set in `dir` against its topic.
pub fn score_dev_set(dir: &Path) -> Result<Vec<Row>> {
    let mut topics: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list the dev set", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("yaml"))
        .collect();
    topics.sort();
    let mut rows = Vec::new();
    for t in topics {
        let topic = Topic::load(&t)?;
        let profile = topic
            .relevance_profile()
            .with_context(|| format!("{}: relevance is off or has no keywords", t.display()))?;
        let texts = t.with_extension("jsonl");
        let body = std::fs::read_to_string(&texts)
            .with_context(|| format!("{}: cannot read", texts.display()))?;
        for (n, line) in body.lines().enumerate() {
            let l: Labelled = serde_json::from_str(line)
                .with_context(|| format!("{}:{}: not a labelled text", texts.display(), n + 1))?;
            rows.push(Row {
                topic: topic.name.clone(),
                id: l.id,
                lang: l.lang,
                off: l.label == "off",
                hard: l.hard,
                score: profile.score(&l.text).score,
            });
        }
    }
    Ok(rows)
}

/// Precision and recall of `off_topic` at `threshold`, deciding through the filter stage's
/// own rule.
pub fn figures(rows: &[Row], threshold: f64) -> Figures {
    let settings = RelevanceSettings {
        threshold,
        ..RelevanceSettings::default()
    };
    let mut tp = 0usize;
    let mut fp = 0usize;
    let mut fneg = 0usize;
    let (mut hard, mut hard_caught) = (0usize, 0usize);
    for r in rows {
        let scored = crate::relevance::Scored {
            score: r.score,
            terms: Vec::new(),
        };
        let (st, _) =
            crate::filter::relevance_verdict(&settings, crate::store::Status::Pending, &scored);
        let put_off = st == crate::store::Status::OffTopic;
        match (put_off, r.off) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fneg += 1,
            (false, false) => {}
        }
        if r.hard {
            hard += 1;
            hard_caught += usize::from(put_off);
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    Figures {
        threshold,
        precision: ratio(tp, tp + fp),
        recall: ratio(tp, tp + fneg),
        hard_recall: ratio(hard_caught, hard),
    }
}
