//! The keep rule: which copy of a group of duplicates stays in the collection.
//!
//! Most words first, then the earlier source in the topic, then the smaller id, so the choice
//! depends on the texts alone, not on input order or threads. A text stored by an earlier run
//! and kept there stays: an update never drops what a user may already have exported, even
//! when a newcomer would outrank it (docs/method.md §8).

use std::cmp::Ordering;

/// Where a document stands before the rule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Not settled yet: the rule decides whether it stays.
    New,
    /// Stored and kept by an earlier run: it stays, and outranks every newcomer.
    Kept,
    /// Stored and out of the collection (a duplicate, dropped by review): never a reason to drop
    /// another text.
    Out,
}

/// What the rule reads of a document.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// Stable id (the last tie-break).
    pub id: &'a str,
    /// Words in the cleaned text (more is better).
    pub words: u64,
    /// Position of its source in the topic (earlier is better).
    pub source_rank: u32,
    /// Settled or not.
    pub standing: Standing,
}

/// The order of preference: stored kept texts first, then most words, earlier source, smaller id.
fn preference(x: &Candidate, y: &Candidate) -> Ordering {
    let settled = |c: &Candidate| c.standing != Standing::Kept;
    settled(x)
        .cmp(&settled(y))
        .then(y.words.cmp(&x.words))
        .then(x.source_rank.cmp(&y.source_rank))
        .then(x.id.cmp(y.id))
}

/// Chooses which copy of each duplicate group stays; returns `duplicate_of` per candidate
/// (always `None` for stored ones).
///
/// Walking the candidates from most to least worth keeping, a new document is dropped when a
/// duplicate partner was already kept, and records the best-ranked such partner; a document
/// whose partners were all dropped stays, so chains of near-copies (A≈B≈C, A≉C) never remove a
/// text that no kept text resembles.
pub fn choose_kept(candidates: &[Candidate], duplicates: &[(u32, u32)]) -> Vec<Option<u32>> {
    let n = candidates.len();
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&i| candidates[i as usize].standing != Standing::Out)
        .collect();
    order.sort_by(|&x, &y| preference(&candidates[x as usize], &candidates[y as usize]));
    let mut rank = vec![u32::MAX; n];
    for (r, &d) in order.iter().enumerate() {
        rank[d as usize] = r as u32;
    }
    let mut partners: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in duplicates {
        partners[a as usize].push(b);
        partners[b as usize].push(a);
    }
    let mut duplicate_of: Vec<Option<u32>> = vec![None; n];
    let mut kept = vec![false; n];
    for &d in &order {
        if candidates[d as usize].standing == Standing::Kept {
            kept[d as usize] = true;
            continue;
        }
        let best_kept = partners[d as usize]
            .iter()
            .copied()
            .filter(|&p| kept[p as usize])
            .min_by_key(|&p| rank[p as usize]);
        match best_kept {
            Some(p) => duplicate_of[d as usize] = Some(p),
            None => kept[d as usize] = true,
        }
    }
    duplicate_of
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new(id: &str, words: u64) -> Candidate<'_> {
        Candidate {
            id,
            words,
            source_rank: 0,
            standing: Standing::New,
        }
    }

    #[test]
    fn keeps_best_ranked_and_breaks_chains() {
        // 0≈1, 1≈2, but 0≉2: 0 is longest, so it stays, 1 goes, and 2 stays (its only
        // partner was dropped).
        let c = [new("a", 30), new("b", 20), new("c", 10)];
        assert_eq!(
            choose_kept(&c, &[(0, 1), (1, 2)]),
            vec![None, Some(0), None]
        );
        // 1 is longest: it stays and both others are its duplicates.
        let c = [new("a", 20), new("b", 30), new("c", 10)];
        assert_eq!(
            choose_kept(&c, &[(0, 1), (1, 2)]),
            vec![Some(1), None, Some(1)]
        );
    }

    #[test]
    fn ties_go_to_the_earlier_source_then_the_smaller_id() {
        let mut c = [new("b", 10), new("a", 10)];
        assert_eq!(choose_kept(&c, &[(0, 1)]), vec![Some(1), None]);
        c[0].source_rank = 0;
        c[1].source_rank = 1;
        assert_eq!(choose_kept(&c, &[(0, 1)]), vec![None, Some(0)]);
    }

    #[test]
    fn a_stored_kept_text_stays_even_when_a_newcomer_outranks_it() {
        let stored = Candidate {
            standing: Standing::Kept,
            ..new("s", 10)
        };
        let c = [new("n", 500), stored];
        assert_eq!(choose_kept(&c, &[(0, 1)]), vec![Some(1), None]);
    }

    #[test]
    fn a_stored_text_out_of_the_collection_drops_nothing() {
        let stored = Candidate {
            standing: Standing::Out,
            ..new("s", 900)
        };
        let c = [new("n", 10), stored];
        assert_eq!(choose_kept(&c, &[(0, 1)]), vec![None, None]);
    }
}
