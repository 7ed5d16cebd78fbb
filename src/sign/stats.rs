//! Collection statistics and text helpers shared by the term- and sentence-based detectors
//! (docs/method.md §3.5): document frequency, collection frequency, N, average length, BM25 weights.

use crate::canon::{CanonText, Canonicalizer, StopWords};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;

/// Document and collection frequencies of terms over one collection.
#[derive(Debug, Clone, Default)]
pub struct CorpusStats {
    /// Number of documents observed.
    pub n_docs: u64,
    /// Sum of document lengths in terms.
    pub total_len: u64,
    /// Documents containing each term.
    pub df: FxHashMap<u64, u32>,
    /// Occurrences of each term over the collection.
    pub cf: FxHashMap<u64, u64>,
}

impl CorpusStats {
    /// Adds one document given as its terms in text order (repeats included).
    pub fn add(&mut self, terms: &[u64]) {
        self.n_docs += 1;
        self.total_len += terms.len() as u64;
        let mut seen: Vec<u64> = terms.to_vec();
        seen.sort_unstable();
        seen.dedup();
        for t in terms {
            *self.cf.entry(*t).or_default() += 1;
        }
        for t in seen {
            *self.df.entry(t).or_default() += 1;
        }
    }

    /// Merges statistics gathered on another part of the collection.
    pub fn merge(&mut self, other: CorpusStats) {
        self.n_docs += other.n_docs;
        self.total_len += other.total_len;
        for (t, d) in other.df {
            *self.df.entry(t).or_default() += d;
        }
        for (t, c) in other.cf {
            *self.cf.entry(t).or_default() += c;
        }
    }

    /// Document frequency, at least 1: a term being signed exists in at least its own document,
    /// even when the statistics come from another collection.
    pub fn df(&self, t: u64) -> f64 {
        self.df.get(&t).copied().unwrap_or(0).max(1) as f64
    }

    /// Collection frequency, at least 1 (same reason as [`CorpusStats::df`]).
    pub fn cf(&self, t: u64) -> f64 {
        self.cf.get(&t).copied().unwrap_or(0).max(1) as f64
    }

    /// Number of documents, at least 1.
    pub fn n(&self) -> f64 {
        self.n_docs.max(1) as f64
    }

    /// Average document length in terms, at least 1.
    pub fn avg_len(&self) -> f64 {
        (self.total_len as f64 / self.n()).max(1.0)
    }

    /// Okapi BM25 IDF, log((N − df + 0.5)/(df + 0.5)) (docs/method.md §3.5).
    pub fn bm25_idf(&self, t: u64) -> f64 {
        let (n, df) = (self.n(), self.df(t));
        ((n - df + 0.5) / (df + 0.5)).ln()
    }

    /// Okapi BM25 TF with k = 2, b = 0.75: tf / (2·(0.25 + 0.75·dl/dl_avg) + tf).
    pub fn bm25_tf(&self, tf: f64, dl: f64) -> f64 {
        tf / (2.0 * (0.25 + 0.75 * dl / self.avg_len()) + tf)
    }
}

/// Stable 64-bit hash of a term: the same in every run, so stored statistics stay valid.
pub fn term_hash(s: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(s.as_bytes());
    // FxHash alone clusters short strings; a final mix spreads them over all 64 bits.
    let mut z = h.finish() ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The paper's preprocessing drops words of three letters or fewer (docs/method.md §3.5).
pub const MIN_WORD_CHARS: usize = 4;

/// Canonical words of at least [`MIN_WORD_CHARS`] letters, in text order.
pub fn long_words(canon: &CanonText) -> Vec<&str> {
    canon
        .words()
        .filter(|w| w.chars().count() >= MIN_WORD_CHARS)
        .collect()
}

/// Term counts of a document: (term, word, tf), first occurrence order.
pub fn term_counts<'a>(words: &[&'a str]) -> Vec<(u64, &'a str, u32)> {
    let mut index: FxHashMap<u64, usize> = FxHashMap::default();
    let mut out: Vec<(u64, &str, u32)> = Vec::new();
    for w in words {
        let h = term_hash(w);
        match index.get(&h) {
            Some(&i) => out[i].2 += 1,
            None => {
                index.insert(h, out.len());
                out.push((h, w, 1));
            }
        }
    }
    out
}

/// The `k` words of highest weight (ties: alphabetical), alphabetised, joined by spaces and
/// hashed with CRC32: the one-key signature of A1, A2, A3, A10 and the stream pre-filter.
pub fn top_words_key(mut weighted: Vec<(f64, &str)>, k: usize) -> Option<u64> {
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let mut top: Vec<&str> = weighted.into_iter().take(k).map(|(_, w)| w).collect();
    if top.is_empty() {
        return None;
    }
    top.sort_unstable();
    Some(crc32fast::hash(top.join(" ").as_bytes()) as u64)
}

/// BM25 weight (k = 2, b = 0.75) of every distinct word of a document.
pub fn bm25_weights<'a>(stats: &CorpusStats, words: &[&'a str]) -> Vec<(f64, &'a str)> {
    let dl = words.len() as f64;
    term_counts(words)
        .into_iter()
        .map(|(h, w, tf)| (stats.bm25_tf(tf as f64, dl) * stats.bm25_idf(h), w))
        .collect()
}

/// Sentences of a raw text: split after `.`, `!`, `?`, `…` and at line breaks, each given as
/// its canonical long words. Sentences without such words are dropped.
pub fn sentences(raw: &str) -> Vec<Vec<String>> {
    let mut canon = Canonicalizer::new(StopWords::default_shared());
    let mut out = Vec::new();
    let mut start = 0;
    let mut push = |s: &str, out: &mut Vec<Vec<String>>| {
        let c = canon.canonicalize(s);
        let words: Vec<String> = long_words(&c).into_iter().map(String::from).collect();
        if !words.is_empty() {
            out.push(words);
        }
    };
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\n' => true,
            '.' | '!' | '?' | '…' => chars.peek().is_none_or(|(_, n)| n.is_whitespace()),
            _ => false,
        };
        if end {
            let stop = i + c.len_utf8();
            push(&raw[start..stop], &mut out);
            start = stop;
        }
    }
    push(&raw[start..], &mut out);
    out
}

/// CRC32 of a word sequence joined by spaces.
pub fn crc_words(words: &[String]) -> u64 {
    crc32fast::hash(words.join(" ").as_bytes()) as u64
}

/// The one-key signature of two sentences: their CRC32s alphabetised (so that order does not
/// matter) and hashed together.
pub fn two_sentence_key(a: &[String], b: Option<&[String]>) -> u64 {
    let mut parts = vec![a.join(" ")];
    if let Some(b) = b {
        parts.push(b.join(" "));
    }
    parts.sort();
    crc32fast::hash(parts.join("\n").as_bytes()) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bm25_matches_hand_computation() {
        let mut s = CorpusStats::default();
        s.add(&[1, 1, 2]);
        s.add(&[2, 3, 4, 5, 6]);
        // N = 2, df(1) = 1: ln(1.5/1.5) = 0; df(3) = 1 likewise; avg len 4.
        assert_eq!(s.bm25_idf(1), 0.0);
        // tf 2, dl 3: 2 / (2·(0.25 + 0.75·3/4) + 2) = 2 / 3.625.
        assert!((s.bm25_tf(2.0, 3.0) - 2.0 / 3.625).abs() < 1e-12);
        assert_eq!(s.cf(1), 2.0);
        assert_eq!(s.df(2), 2.0);
    }

    #[test]
    fn sentences_split_on_stops_and_lines() {
        let s = sentences("Cats chase mice. Dogs chase cats!\nBirds sing songs loudly");
        assert_eq!(
            s,
            vec![
                vec!["cats", "chase", "mice"],
                vec!["dogs", "chase", "cats"],
                vec!["birds", "sing", "songs", "loudly"]
            ]
        );
        // 3.14 does not end a sentence: no whitespace after the dot.
        assert_eq!(sentences("Value 3.14 here").len(), 1);
    }

    #[test]
    fn top_words_key_is_crc_of_alphabetised_words() {
        let w = vec![(1.0, "zeta"), (3.0, "beta"), (2.0, "alpha"), (0.5, "omega")];
        assert_eq!(
            top_words_key(w, 3),
            Some(crc32fast::hash(b"alpha beta zeta") as u64)
        );
    }
}
