//! The dedup settings: which detector, its parameters and the two thresholds, with their
//! defaults in this one place. The topic file's `dedup` section, the flags of `collect dedup`
//! and `collect eval`, and the header a collection keeps all read into this struct.

use super::{Detector, GreyZone, Thresholds};
use crate::canon::StopWords;
use serde::{Deserialize, Serialize};

/// Detector, parameters and thresholds (docs/method.md §5 gives the reasons for the defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DedupSettings {
    /// Detector: one of [`super::METHODS`] (docs/methods.md).
    pub method: String,
    /// Words per shingle (`None`: the detector's default, 4; megashingles 5).
    pub shingle: Option<usize>,
    /// Modulus of mod-m.
    pub modulus: u64,
    /// Signature size of min-n.
    pub min_n: usize,
    /// Megashingles: number of min-wise maps.
    pub maps: usize,
    /// Megashingles: number of supershingles (the maps are split evenly among them).
    pub supershingles: usize,
    /// Resemblance at or above which two texts are duplicates.
    pub resemblance: f64,
    /// Containment at or above which a pair goes to the curator's review.
    pub containment: f64,
    /// mod-m: a text with fewer sampled fingerprints than this keeps its full index instead.
    pub min_elements: usize,
    /// infostream: heavy terms (of 12) two documents must share to be duplicates.
    pub agree: usize,
    /// Grey zone: a pair judged `different` whose signature resemblance or containment is at
    /// least this is re-scored on the full texts (above 1: no grey zone).
    pub verify_from: f64,
    /// Grey zone: words (canonical) a shared run must span to count as a copied passage
    /// (0: no passage rule).
    pub passage_words: usize,
    /// Grey zone: share of the shorter text's words in copied passages at or above which the
    /// pair is `contained`.
    pub passage_share: f64,
    /// Grey zone: a shingle in more than this many of the texts verified together is
    /// boilerplate (a footer, a template sentence), never part of a copied passage.
    pub passage_common: usize,
    /// Canonical words are Snowball stems (Russian for Cyrillic words, English for the rest).
    pub stem: bool,
    /// Shingles a contained pair must share to go to review (estimated from the signatures,
    /// exact for pairs verified on the full texts); fewer make the pair `weak`.
    pub min_shared_shingles: usize,
}

/// Default of `min_shared_shingles`: the largest round value that keeps every dev pair the
/// defaults flag (docs/method.md §6.3).
pub const DEFAULT_MIN_SHARED_SHINGLES: usize = 20;

impl Default for DedupSettings {
    fn default() -> Self {
        DedupSettings {
            method: "modm".into(),
            shingle: None,
            modulus: 25,
            min_n: 160,
            maps: 84,
            supershingles: 6,
            resemblance: 0.5,
            containment: 0.5,
            min_elements: 8,
            agree: 6,
            verify_from: 0.15,
            passage_words: 12,
            passage_share: 0.1,
            passage_common: 20,
            stem: false,
            min_shared_shingles: DEFAULT_MIN_SHARED_SHINGLES,
        }
    }
}

impl DedupSettings {
    /// The two thresholds pairs are judged against.
    pub fn thresholds(&self) -> Thresholds {
        Thresholds {
            resemblance: self.resemblance,
            containment: self.containment,
            min_shared_shingles: self.min_shared_shingles as f64,
        }
    }

    /// The canonical form's word list for `langs`: their stop words, stemming as set.
    pub fn canon_words(&self, langs: &[String]) -> Result<StopWords, String> {
        Ok(StopWords::for_languages(langs)?.with_stemming(self.stem))
    }

    /// What a store records of how its signatures were made: the detector's key, and the
    /// stemming that changes every signature (absent when off, so older stores still match).
    pub fn signature_key(&self, detector: &dyn Detector) -> String {
        if self.stem {
            format!("{}:stem", detector.key())
        } else {
            detector.key()
        }
    }

    /// The grey-zone rule pairs below the thresholds are verified by.
    pub fn grey_zone(&self) -> GreyZone {
        GreyZone {
            from: self.verify_from,
            passage_words: self.passage_words,
            passage_share: self.passage_share,
            passage_common: self.passage_common,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stemming_changes_the_stored_key_only_when_on() {
        let off = DedupSettings::default();
        let det = super::super::build_detector(&off).unwrap();
        assert_eq!(off.signature_key(det.as_ref()), det.key());
        let on = DedupSettings {
            stem: true,
            ..Default::default()
        };
        assert_eq!(
            on.signature_key(det.as_ref()),
            format!("{}:stem", det.key())
        );
        assert!(on.canon_words(&["ru".into()]).unwrap().stems());
        assert!(!off.canon_words(&["ru".into()]).unwrap().stems());
    }
}
