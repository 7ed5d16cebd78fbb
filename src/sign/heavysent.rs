//! A5, Heavy Sent: one key from the two sentences with the largest sum of BM25 word weights.

use super::stats::{long_words, sentences, term_counts, term_hash, two_sentence_key, CorpusStats};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// CRC32 of the two heaviest sentences, alphabetised. A word's weight is its BM25 weight in the
/// whole document (tf over the document, not the sentence), so repeated words count once per
/// occurrence in a sentence.
#[derive(Debug, Clone, Default)]
pub struct HeavySent {
    stats: Arc<CorpusStats>,
}

impl Detector for HeavySent {
    fn name(&self) -> &'static str {
        "heavysent"
    }

    fn key(&self) -> String {
        "heavysent:k=2".into()
    }

    fn shingle(&self) -> usize {
        4
    }

    fn needs_stats(&self) -> bool {
        true
    }

    fn terms(&self, _raw: &str, canon: &CanonText) -> Vec<u64> {
        long_words(canon).iter().map(|w| term_hash(w)).collect()
    }

    fn prepare(&mut self, stats: Arc<CorpusStats>) {
        self.stats = stats;
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        self.sign_doc(&text.buf, text)
    }

    fn sign_doc(&self, raw: &str, canon: &CanonText) -> Vec<u64> {
        let sents = sentences(raw);
        if sents.is_empty() {
            return Vec::new();
        }
        let words = long_words(canon);
        let dl = words.len() as f64;
        let s = &self.stats;
        let weight: FxHashMap<u64, f64> = term_counts(&words)
            .into_iter()
            .map(|(h, _, tf)| (h, s.bm25_tf(tf as f64, dl) * s.bm25_idf(h)))
            .collect();
        let sent_weight = |sent: &Vec<String>| -> f64 {
            sent.iter()
                .map(|w| weight.get(&term_hash(w)).copied().unwrap_or(0.0))
                .sum()
        };
        let mut order: Vec<(f64, usize)> = sents
            .iter()
            .enumerate()
            .map(|(i, x)| (sent_weight(x), i))
            .collect();
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let second = order.get(1).map(|&(_, i)| sents[i].as_slice());
        vec![two_sentence_key(&sents[order[0].1], second)]
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    #[test]
    fn picks_sentences_of_rare_words() {
        let docs = [
            "Common words appear. Unique zebra quagga. Common words again. Rare okapi tapir.",
            "Common words appear everywhere.",
            "Common words again here.",
        ];
        let mut d = HeavySent::default();
        let mut st = CorpusStats::default();
        for t in docs {
            st.add(&d.terms(t, &canon(t)));
        }
        d.prepare(Arc::new(st));
        // "common", "words", "appear", "again" occur in 2–3 of 3 documents: IDF ≤ 0;
        // zebra, quagga, okapi, tapir have df 1: IDF ln(2.5/1.5) > 0.
        let sig = d.sign_doc(docs[0], &canon(docs[0]));
        let hand = crc32fast::hash(b"rare okapi tapir\nunique zebra quagga") as u64;
        assert_eq!(sig, vec![hand]);
    }
}
