//! A12, "3+5": the 3 longest sentences and the 5 longest words, paired through length-banded
//! chains (docs/method.md §3.5). The only detector with its own pairing step.
//!
//! The signature packs one record per document into tagged elements (top two bits):
//! 0 = CRC32 of one of the 3 longest sentences, 1 = CRC32 of one of the 5 longest words,
//! 2 = length in long words, 3 = sentence count. Only the sentence keys are ever looked up.

use super::stats::{long_words, sentences};
use super::{key_detector_common, Detector};
use crate::canon::CanonText;
use rustc_hash::FxHashMap;

/// Neighbouring lengths in a chain differ by at most this ratio (similarity 0.85).
pub const LENGTH_RATIO: f64 = 1.15;
/// Compared documents' sentence counts differ by at most this ratio.
pub const SENTENCE_RATIO: f64 = 1.20;
/// Long words two compared documents must share.
pub const SHARED_WORDS: usize = 2;

const TAG_SENT: u64 = 0;
const TAG_WORD: u64 = 1;
const TAG_LEN: u64 = 2;
const TAG_COUNT: u64 = 3;

fn tag(t: u64, v: u64) -> u64 {
    (t << 62) | (v & ((1 << 62) - 1))
}

/// The unpacked record of one document.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Record {
    /// CRC32s of the (up to) 3 longest sentences.
    pub sentences: Vec<u64>,
    /// CRC32s of the (up to) 5 longest words.
    pub words: Vec<u64>,
    /// Length in long words.
    pub len: u64,
    /// Number of sentences.
    pub count: u64,
}

impl Record {
    /// Unpacks a signature built by [`A12::sign_doc`].
    pub fn from_sig(sig: &[u64]) -> Record {
        let mut r = Record::default();
        for &e in sig {
            let v = e & ((1 << 62) - 1);
            match e >> 62 {
                TAG_SENT => r.sentences.push(v),
                TAG_WORD => r.words.push(v),
                TAG_LEN => r.len = v,
                _ => r.count = v,
            }
        }
        r
    }

    /// The method's final test: the longest-sentence signatures agree — 2 of the 3 in any order
    /// when both documents have more than 5 sentences, all of them otherwise.
    pub fn agrees(&self, o: &Record) -> bool {
        let shared = self
            .sentences
            .iter()
            .filter(|s| o.sentences.contains(s))
            .count();
        if self.count > 5 && o.count > 5 {
            shared >= 2
        } else {
            shared >= 1 && shared == self.sentences.len() && shared == o.sentences.len()
        }
    }

    /// The chain's neighbour filter: similar sentence counts and ≥ 2 shared long words.
    pub fn comparable(&self, o: &Record) -> bool {
        let (lo, hi) = (self.count.min(o.count).max(1), self.count.max(o.count));
        let shared = self.words.iter().filter(|w| o.words.contains(w)).count();
        hi as f64 / lo as f64 <= SENTENCE_RATIO && shared >= SHARED_WORDS.min(self.words.len())
    }
}

/// 3 longest sentences + 5 longest words, paired by length-banded chains.
#[derive(Debug, Clone, Copy, Default)]
pub struct A12;

impl Detector for A12 {
    fn name(&self) -> &'static str {
        "a12"
    }

    fn key(&self) -> String {
        format!("a12:3+5:len={LENGTH_RATIO}:sent={SENTENCE_RATIO}")
    }

    fn shingle(&self) -> usize {
        4
    }

    fn sign(&self, text: &CanonText) -> Vec<u64> {
        self.sign_doc(&text.buf, text)
    }

    fn sign_doc(&self, raw: &str, canon: &CanonText) -> Vec<u64> {
        let sents = sentences(raw);
        if sents.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for i in super::longsent::longest(&sents, 3) {
            out.push(tag(TAG_SENT, super::stats::crc_words(&sents[i])));
        }
        let mut words = long_words(canon);
        words.sort_unstable();
        words.dedup();
        // Longest first; equal lengths alphabetically, so the choice does not depend on order.
        words.sort_by(|a, b| b.chars().count().cmp(&a.chars().count()).then(a.cmp(b)));
        for w in words.iter().take(5) {
            out.push(tag(TAG_WORD, crc32fast::hash(w.as_bytes()) as u64));
        }
        out.push(tag(TAG_LEN, long_words(canon).len() as u64));
        out.push(tag(TAG_COUNT, sents.len() as u64));
        super::into_set(out)
    }

    fn candidate_pairs(
        &self,
        sigs: &[Vec<u64>],
        queries: usize,
        sink: &mut dyn FnMut(Vec<(u32, u32, u32)>),
    ) {
        let recs: Vec<Record> = sigs.iter().map(|s| Record::from_sig(s)).collect();
        let mut groups: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (d, r) in recs.iter().enumerate() {
            for &s in &r.sentences {
                groups.entry(s).or_default().push(d as u32);
            }
        }
        let mut out = Vec::new();
        for mut g in groups.into_values() {
            g.sort_by_key(|&d| (recs[d as usize].len, d));
            // Cut the group into chains where neighbouring lengths jump by more than the ratio.
            let mut start = 0;
            for i in 1..=g.len() {
                let cut = i == g.len() || {
                    let (a, b) = (recs[g[i - 1] as usize].len, recs[g[i] as usize].len);
                    b as f64 > a.max(1) as f64 * LENGTH_RATIO
                };
                if cut {
                    let chain = &g[start..i];
                    for (x, &a) in chain.iter().enumerate() {
                        for &b in &chain[x + 1..] {
                            let (ra, rb) = (&recs[a as usize], &recs[b as usize]);
                            // Only near neighbours: within the ratio of each other, not just
                            // linked through a run of small steps.
                            if rb.len as f64 > ra.len.max(1) as f64 * LENGTH_RATIO {
                                break;
                            }
                            // Pairs of two documents past `queries` were settled earlier.
                            if a.min(b) as usize >= queries {
                                continue;
                            }
                            if ra.comparable(rb) && ra.agrees(rb) {
                                let shared =
                                    ra.sentences.iter().filter(|s| rb.sentences.contains(s));
                                out.push((a.min(b), a.max(b), shared.count() as u32));
                            }
                        }
                    }
                    start = i;
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        sink(out)
    }

    key_detector_common!(|_: &Self| 1);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sign::test_support::canon;

    fn sign(raw: &str) -> Vec<u64> {
        A12.sign_doc(raw, &canon(raw))
    }

    const BASE: &str = "Alpha bravo charlie delta echo foxtrot. Golf hotel india juliet kilo. \
                        Lima mike november oscar. Papa quebec romeo. Sierra tango.";

    #[test]
    fn record_by_hand() {
        let r = Record::from_sig(&sign(BASE));
        // Every word has at least 4 letters, so all 20 count; sentences of 6, 5, 4, 3 and 2
        // words: the 3 longest are the first three.
        let crc = |s: &str| crc32fast::hash(s.as_bytes()) as u64;
        let mut want = vec![
            crc("alpha bravo charlie delta echo foxtrot"),
            crc("golf hotel india juliet kilo"),
            crc("lima mike november oscar"),
        ];
        want.sort_unstable();
        let mut got = r.sentences.clone();
        got.sort_unstable();
        assert_eq!(got, want);
        assert_eq!((r.len, r.count), (20, 5));
        // Longest words: november (8), charlie and foxtrot (7), then the first two of the
        // 6-letter juliet, quebec, sierra in alphabetical order.
        let mut w: Vec<u64> = ["november", "charlie", "foxtrot", "juliet", "quebec"]
            .iter()
            .map(|x| crc(x))
            .collect();
        w.sort_unstable();
        let mut gw = r.words.clone();
        gw.sort_unstable();
        assert_eq!(gw, w);
    }

    #[test]
    fn chains_pair_copies_and_skip_different_lengths() {
        let copy = format!("{BASE} Extra.");
        let longer = format!("{BASE} {}", "Whiskey xray yankee zulu. ".repeat(3));
        let other = "Completely different words appear here today. Nothing shared with anything.";
        let sigs = vec![sign(BASE), sign(&copy), sign(&longer), sign(other)];
        let mut pairs = Vec::new();
        A12.candidate_pairs(&sigs, sigs.len(), &mut |block| pairs.extend(block));
        // BASE and copy: same 3 sentences, lengths 20 and 21, 5 and 6 sentences → duplicates.
        // longer has 32 words (> 1.15 × 21) and 8 sentences: a different chain.
        assert_eq!(pairs, vec![(0, 1, 3)]);
    }

    #[test]
    fn two_of_three_suffice_for_long_documents() {
        let a = Record {
            sentences: vec![1, 2, 3],
            words: vec![7, 8, 9],
            len: 100,
            count: 8,
        };
        let mut b = a.clone();
        b.sentences = vec![3, 1, 4];
        assert!(a.agrees(&b));
        b.count = 5;
        assert!(!a.agrees(&b));
    }
}
