//! The relevance stage: how much a cleaned text is about the topic (docs/method.md §9.4).
//!
//! A text is scored against the topic's profile, the Snowball stems of its keywords and, when
//! the curator names example texts, the stems those examples use most. The score of one text
//! depends on that text and the profile only, never on the other texts of the collection: a
//! build, an update and a streaming job give a text the same score, whatever came before it.
//! No IO here: the topic loader reads the example files and hands their texts in.

use crate::canon::{fold_word, is_word_char, stem, StopWords};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Default threshold: chosen on the dev set in `tests/fixtures/relevance/` (README,
/// "Relevance"), where it gives the best F1 of `off_topic` over both topics and languages.
pub const DEFAULT_THRESHOLD: f64 = 0.15;

/// Texts of this many words weigh a topic-word density as much as the text itself: one
/// passing mention in a short page is not taken for a topic.
const PRIOR_WORDS: f64 = 100.0;
/// Density (weighted topic words per word) at which the density part reaches 1 − 1/e.
const DENSITY_SCALE: f64 = 0.01;
/// Distinct topic terms a text must use for full coverage (fewer when the profile is smaller).
const COVERAGE_TERMS: usize = 3;
/// Weight of a term learned from the examples, against 1 for a keyword's term.
const EXAMPLE_WEIGHT: f64 = 0.5;
/// Terms shown by `collect explain`.
pub const SHOWN_TERMS: usize = 8;

/// The topic file's `relevance` section: `relevance: off`, or a map of these keys.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RelevanceSettings {
    /// Whether texts are scored at all (`relevance: off` switches the stage off).
    pub enabled: bool,
    /// Texts scoring below this are kept out as `off_topic`.
    pub threshold: f64,
    /// Files or folders of texts on the topic, relative to the topic file.
    pub examples: Vec<PathBuf>,
    /// Terms taken from the examples (the most used stems beyond the keywords').
    pub example_terms: usize,
}

impl Default for RelevanceSettings {
    fn default() -> Self {
        RelevanceSettings {
            enabled: true,
            threshold: DEFAULT_THRESHOLD,
            examples: Vec::new(),
            example_terms: 20,
        }
    }
}

/// The map form of the section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsMap {
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default = "default_threshold")]
    threshold: f64,
    #[serde(default)]
    examples: Vec<PathBuf>,
    #[serde(default = "default_example_terms")]
    example_terms: usize,
}

fn yes() -> bool {
    true
}

fn default_threshold() -> f64 {
    DEFAULT_THRESHOLD
}

fn default_example_terms() -> usize {
    RelevanceSettings::default().example_terms
}

/// `relevance: off` / `on` / `false` / `true`, or the map.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SettingsForm {
    Switch(bool),
    Word(String),
    Map(SettingsMap),
}

impl<'de> Deserialize<'de> for RelevanceSettings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let on = |enabled: bool| RelevanceSettings {
            enabled,
            ..RelevanceSettings::default()
        };
        match SettingsForm::deserialize(d)? {
            SettingsForm::Switch(b) => Ok(on(b)),
            SettingsForm::Word(w) => match w.as_str() {
                "off" | "no" => Ok(on(false)),
                "on" | "yes" => Ok(on(true)),
                other => Err(serde::de::Error::custom(format!(
                    "relevance: expected `off`, `on` or a map, got `{other}`"
                ))),
            },
            SettingsForm::Map(m) => Ok(RelevanceSettings {
                enabled: m.enabled,
                threshold: m.threshold,
                examples: m.examples,
                example_terms: m.example_terms,
            }),
        }
    }
}

/// The stems of a text's content words, in order: folded like the canonical form, without stop
/// words, numbers and one-letter words.
pub fn stems(text: &str) -> Vec<String> {
    let stop = StopWords::default_shared();
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .filter_map(|w| {
            let f = fold_word(w);
            let content = f.chars().count() > 1
                && !f.chars().all(|c| c.is_ascii_digit())
                && !stop.contains(&f);
            content.then(|| stem(&f).into_owned())
        })
        .collect()
}

/// What a text is scored against: weighted stems.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    terms: BTreeMap<String, f64>,
}

impl Profile {
    /// The profile of a topic: its keywords' stems (weight 1), then the `example_terms` stems
    /// the example texts use in most of them (weight ½), so that the words a topic is written
    /// in count even when the curator did not think of them as keywords.
    pub fn new(keywords: &[String], examples: &[String], example_terms: usize) -> Profile {
        let mut terms: BTreeMap<String, f64> = BTreeMap::new();
        for k in keywords {
            for s in stems(k) {
                terms.insert(s, 1.0);
            }
        }
        if !examples.is_empty() && example_terms > 0 {
            // Document frequency over the examples first, total count second: a stem used by
            // every example is the topic's; one used often by one example is that text's.
            let mut df: BTreeMap<String, (usize, usize)> = BTreeMap::new();
            for e in examples {
                let s = stems(e);
                let mut seen = std::collections::BTreeSet::new();
                for w in s {
                    let entry = df.entry(w.clone()).or_default();
                    entry.1 += 1;
                    if seen.insert(w) {
                        entry.0 += 1;
                    }
                }
            }
            let mut ranked: Vec<(String, (usize, usize))> = df
                .into_iter()
                .filter(|(w, _)| !terms.contains_key(w) && w.chars().count() > 2)
                .collect();
            ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            for (w, _) in ranked.into_iter().take(example_terms) {
                terms.insert(w, EXAMPLE_WEIGHT);
            }
        }
        Profile { terms }
    }

    /// Whether the profile has no term (a topic without keywords or examples): nothing can be
    /// scored, so the stage lets every text through.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The profile's stems and weights.
    pub fn terms(&self) -> &BTreeMap<String, f64> {
        &self.terms
    }

    /// Scores a cleaned text.
    ///
    /// `score = (1 − exp(−D / 0.01)) × min(1, m / min(3, T))`, where `D` is the weighted count
    /// of topic stems in the text over (its content words + 100) and `m` the distinct topic
    /// stems it uses out of the profile's `T`. The first factor saturates: beyond about three
    /// topic words in a hundred, more repetition adds little. The second asks for more than
    /// one of the topic's words, so a text that keeps to one of them weighs less.
    pub fn score(&self, text: &str) -> Scored {
        let words = stems(text);
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for w in &words {
            if self.terms.contains_key(w.as_str()) {
                *counts.entry(w.as_str()).or_default() += 1;
            }
        }
        let weighted: f64 = counts
            .iter()
            .map(|(t, &n)| self.terms[*t] * f64::from(n))
            .sum();
        let density = weighted / (words.len() as f64 + PRIOR_WORDS);
        let saturation = 1.0 - (-density / DENSITY_SCALE).exp();
        let need = COVERAGE_TERMS.min(self.terms.len()).max(1);
        let coverage = (counts.len() as f64 / need as f64).min(1.0);
        let mut terms: Vec<(String, u32)> = counts
            .into_iter()
            .map(|(t, n)| (t.to_string(), n))
            .collect();
        terms.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        terms.truncate(SHOWN_TERMS);
        Scored {
            score: round3(saturation * coverage),
            terms,
        }
    }
}

/// Scores are stored and shown to three decimals; rounding before the threshold compares
/// keeps what `explain` shows and what decided the same.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A text's relevance and the topic stems that carried it.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// In [0, 1).
    pub score: f64,
    /// The most frequent topic stems in the text, with their counts (most first).
    pub terms: Vec<(String, u32)>,
}

impl Scored {
    /// The terms as stored and shown: `собак×12 пород×5`.
    pub fn terms_text(&self) -> String {
        self.terms
            .iter()
            .map(|(t, n)| format!("{t}×{n}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn inflected_forms_share_a_stem_in_russian_and_english() {
        assert_eq!(stem("овчарки"), stem("овчарка"));
        assert_eq!(stem("овчарку"), stem("овчарке"));
        assert_eq!(stem("собаками"), stem("собака"));
        assert_eq!(stem("breeds"), stem("breed"));
        assert_eq!(stem("puppies"), stem("puppy"));
        assert_eq!(
            stems("Немецкие ОВЧАРКИ и щенки"),
            stems("немецкая овчарка, щенков")
        );
    }

    #[test]
    fn keyword_inflections_match_in_a_text() {
        let p = Profile::new(&kw(&["немецкая овчарка", "породы собак"]), &[], 0);
        let s = p.score("Немецкие овчарки — порода служебных собак; овчарку легко обучить.");
        let shown: Vec<&str> = s.terms.iter().map(|(t, _)| t.as_str()).collect();
        assert!(shown.contains(&&*stem("овчарка")), "{shown:?}");
        assert!(shown.contains(&&*stem("собака")), "{shown:?}");
        assert!(s.score > DEFAULT_THRESHOLD, "{s:?}");
    }

    #[test]
    fn a_passing_mention_scores_below_a_text_on_the_topic() {
        let p = Profile::new(&kw(&["dog breeds", "german shepherd", "puppies"]), &[], 0);
        let on = "The German Shepherd is a breed of working dog. Shepherd dogs were bred \
                  for herding; the breed standard asks for a calm dog. Puppies of the breed \
                  learn quickly, and breeders test every puppy.";
        let filler = "The engine of the car was rebuilt in the spring and the gearbox \
                      replaced. The owner drove it across the country, stopping at small \
                      towns and garages along the road. ";
        let off = format!(
            "{}The owner's dog slept on the back seat. {}",
            filler.repeat(3),
            filler.repeat(3)
        );
        let (a, b) = (p.score(on), p.score(&off));
        assert!(
            a.score > DEFAULT_THRESHOLD && b.score < DEFAULT_THRESHOLD,
            "{a:?} {b:?}"
        );
        assert_eq!(b.terms, vec![(stem("dog").into_owned(), 1)]);
    }

    #[test]
    fn examples_add_the_words_a_topic_is_written_in() {
        let ex = kw(&[
            "The hound has a keen nose; hounds hunt by scent.",
            "A hound of the pack follows the scent of the hare.",
        ]);
        let p = Profile::new(&kw(&["dog"]), &ex, 3);
        assert_eq!(p.terms().get(&*stem("hound")), Some(&EXAMPLE_WEIGHT));
        assert_eq!(p.terms().get(&*stem("scent")), Some(&EXAMPLE_WEIGHT));
        assert_eq!(p.terms().get(&*stem("dog")), Some(&1.0));
    }

    #[test]
    fn settings_parse_from_off_or_a_map() {
        let off: RelevanceSettings = serde_yaml::from_str("off").unwrap();
        assert!(!off.enabled);
        let m: RelevanceSettings =
            serde_yaml::from_str("{threshold: 0.2, examples: [ex/]}").unwrap();
        assert!(m.enabled);
        assert_eq!(m.threshold, 0.2);
        assert_eq!(m.examples, vec![PathBuf::from("ex/")]);
        assert!(serde_yaml::from_str::<RelevanceSettings>("maybe").is_err());
        assert!(serde_yaml::from_str::<RelevanceSettings>("{treshold: 1}").is_err());
    }
}
