//! The filter stage: which cleaned texts go on to dedup. A text that is too short, too long or
//! in a language outside the topic's stays in the store with its status and reason, so the
//! report can count it and `collect explain` can say why (docs/method.md §9).

use crate::clean::Defect;
use crate::relevance::{RelevanceSettings, Scored};
use crate::store::Status;
use serde::{Deserialize, Serialize};

/// The topic file's `filter` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilterSettings {
    /// Texts with fewer words than this (after cleaning) are kept out as `short`.
    pub min_words: usize,
    /// Texts with more words than this are kept out as `filtered` (0: no limit).
    pub max_words: usize,
    /// Keep only texts detected in one of the topic's `languages`.
    pub language: bool,
}

impl Default for FilterSettings {
    fn default() -> Self {
        FilterSettings {
            min_words: 100,
            max_words: 0,
            language: true,
        }
    }
}

/// Status and reason of a cleaned text of `words` words detected as `lang`; `languages` are
/// the topic's. `Pending` means it goes on to dedup. A body the cleaner could not read
/// (`defect`) is kept out with the defect as its reason, before any other rule.
pub fn verdict(
    settings: &FilterSettings,
    languages: &[String],
    words: u64,
    lang: Option<&str>,
    defect: Option<Defect>,
) -> (Status, Option<String>) {
    if let Some(d) = defect {
        return (Status::Filtered, Some(d.as_str().to_string()));
    }
    if words < settings.min_words as u64 {
        return (
            Status::Short,
            Some(format!("{words} words < min_words {}", settings.min_words)),
        );
    }
    if settings.max_words > 0 && words > settings.max_words as u64 {
        return (
            Status::Filtered,
            Some(format!("{words} words > max_words {}", settings.max_words)),
        );
    }
    if settings.language {
        if let Some(l) = lang {
            if !languages.iter().any(|x| x == l) {
                return (
                    Status::Filtered,
                    Some(format!("language {l} not in topic languages")),
                );
            }
        }
    }
    (Status::Pending, None)
}

/// The relevance rule, applied to a text the rules of [`verdict`] let through: below the
/// topic's threshold it is kept out as `off_topic`, its score and threshold the reason.
/// Build, update and any later job decide through this function, so that one text gets one
/// status wherever it is scored.
pub fn relevance_verdict(
    settings: &RelevanceSettings,
    status: Status,
    scored: &Scored,
) -> (Status, Option<String>) {
    if status != Status::Pending || !settings.enabled || scored.score >= settings.threshold {
        return (status, None);
    }
    (
        Status::OffTopic,
        Some(format!(
            "relevance {:.3} < threshold {}",
            scored.score, settings.threshold
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_long_and_foreign_texts_are_kept_out_with_a_reason() {
        let s = FilterSettings {
            min_words: 10,
            max_words: 100,
            language: true,
        };
        let langs = vec!["ru".to_string(), "en".to_string()];
        assert_eq!(verdict(&s, &langs, 9, Some("en"), None).0, Status::Short);
        assert_eq!(
            verdict(&s, &langs, 101, Some("en"), None).0,
            Status::Filtered
        );
        let (st, why) = verdict(&s, &langs, 50, Some("fr"), None);
        assert_eq!(st, Status::Filtered);
        assert_eq!(why.as_deref(), Some("language fr not in topic languages"));
        assert_eq!(verdict(&s, &langs, 50, None, None), (Status::Pending, None));
        assert_eq!(
            verdict(&s, &langs, 50, Some("ru"), None),
            (Status::Pending, None)
        );
    }

    #[test]
    fn texts_below_the_threshold_are_off_topic_with_their_score() {
        let s = RelevanceSettings::default();
        let low = Scored {
            score: 0.05,
            terms: vec![("dog".into(), 1)],
        };
        let (st, why) = relevance_verdict(&s, Status::Pending, &low);
        assert_eq!(st, Status::OffTopic);
        assert_eq!(why.as_deref(), Some("relevance 0.050 < threshold 0.15"));
        let high = Scored {
            score: 0.9,
            terms: vec![],
        };
        assert_eq!(
            relevance_verdict(&s, Status::Pending, &high),
            (Status::Pending, None)
        );
        // Another filter's verdict stands; a switched-off stage decides nothing.
        assert_eq!(
            relevance_verdict(&s, Status::Short, &low),
            (Status::Short, None)
        );
        let off = RelevanceSettings {
            enabled: false,
            ..s
        };
        assert_eq!(
            relevance_verdict(&off, Status::Pending, &low),
            (Status::Pending, None)
        );
    }

    #[test]
    fn unreadable_bodies_are_kept_out_with_their_defect_before_any_other_rule() {
        let s = FilterSettings::default();
        let langs = vec!["en".to_string()];
        for (d, name) in [
            (Defect::TooComplex, "too-complex"),
            (Defect::NotText, "not-text"),
            (Defect::NoText, "no-text"),
            (Defect::Encrypted, "encrypted"),
            (Defect::Corrupt, "corrupt"),
        ] {
            let (st, why) = verdict(&s, &langs, 0, None, Some(d));
            assert_eq!((st, why.as_deref()), (Status::Filtered, Some(name)));
        }
    }
}
