//! Diagnostics of a duplicate relation (the news and clustering papers): asymmetry and
//! transitivity coefficients, and duplicate clusters three ways — connected components, cliques
//! (bounded) and closed sets of shared signature elements.

use crate::sign::{DedupSettings, Thresholds, Verdict};
use crate::workbench::eval::{run_method, MethodRun};
use anyhow::Result;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

/// The directed relation: `a → b` means "a is a duplicate of b".
pub type Arcs = FxHashSet<(u32, u32)>;

/// Arcs of a method's verdicts: a duplicate pair both ways; a contained pair from the contained
/// text(s) to the other (containment ≥ threshold); methods without containment stay symmetric.
pub fn arcs(run: &MethodRun, t: &Thresholds) -> Arcs {
    let mut out = Arcs::default();
    for p in &run.pairs {
        match run.verdict(p, t) {
            Verdict::Duplicate => {
                out.insert((p.a, p.b));
                out.insert((p.b, p.a));
            }
            Verdict::Contained => {
                if p.scores.cont_a_in_b >= t.containment {
                    out.insert((p.a, p.b));
                }
                if p.scores.cont_b_in_a >= t.containment {
                    out.insert((p.b, p.a));
                }
            }
            _ => {}
        }
    }
    out
}

/// Figures of one relation.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RelationStats {
    /// Documents.
    pub documents: usize,
    /// Arcs (ordered pairs in the relation).
    pub arcs: usize,
    /// Σ|a_ij − a_ji| / Σ a_ij: 0 for a symmetric relation.
    pub asymmetry: f64,
    /// Σ a_ij·a_jk·a_ik / Σ a_ij, as docs/method.md §10.3 states it (i, j, k distinct).
    pub transitivity: f64,
    /// Σ a_ij·a_jk·a_ik / Σ a_ij·a_jk: the share of two-step paths that are closed (1 = transitive).
    pub closed_paths: f64,
    /// Sizes of connected components with at least 2 documents, largest first.
    pub components: Vec<usize>,
    /// Sizes of maximal cliques (≥ 2 documents) in components small enough to search.
    pub cliques: Vec<usize>,
    /// Components larger than the clique bound, left unsearched.
    pub clique_skipped: usize,
    /// Sizes of closed sets (FCA clusters): all documents sharing a set of ≥ k signature
    /// elements, mined from the element × document context.
    pub closed_sets: Vec<usize>,
    /// How many closed sets are maximal (what FPmax lists).
    pub closed_maximal: usize,
    /// The search stopped at `closed_sets::MAX_SETS` closed sets.
    pub closed_truncated: bool,
    /// Share of closed sets whose documents are all related pairwise (cliques of the relation).
    pub closed_are_cliques: f64,
    /// Share of related pairs (either direction) inside some closed set.
    pub pairs_in_closed: f64,
}

/// Asymmetry and both transitivity coefficients of `arcs`.
pub fn coefficients(arcs: &Arcs) -> (f64, f64, f64) {
    let total = arcs.len() as f64;
    if total == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let asym = arcs
        .iter()
        .filter(|(i, j)| !arcs.contains(&(*j, *i)))
        .count() as f64;
    let mut out: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for &(i, j) in arcs {
        out.entry(i).or_default().push(j);
    }
    let (mut closed, mut paths) = (0.0, 0.0);
    for (&i, js) in &out {
        for &j in js {
            for &k in out.get(&j).map(Vec::as_slice).unwrap_or(&[]) {
                if k != i {
                    paths += 1.0;
                    if arcs.contains(&(i, k)) {
                        closed += 1.0;
                    }
                }
            }
        }
    }
    let ratio = if paths == 0.0 { 1.0 } else { closed / paths };
    (asym / total, closed / total, ratio)
}

/// Maximal cliques of the undirected graph restricted to `members` (Bron–Kerbosch with pivot).
pub fn cliques(members: &[u32], arcs: &Arcs) -> Vec<Vec<u32>> {
    let adj = |a: u32, b: u32| arcs.contains(&(a, b)) || arcs.contains(&(b, a));
    let mut out = Vec::new();
    fn bk(
        r: &mut Vec<u32>,
        p: Vec<u32>,
        mut x: Vec<u32>,
        adj: &dyn Fn(u32, u32) -> bool,
        out: &mut Vec<Vec<u32>>,
    ) {
        if p.is_empty() && x.is_empty() {
            if r.len() > 1 {
                let mut c = r.clone();
                c.sort_unstable();
                out.push(c);
            }
            return;
        }
        let pivot = p
            .iter()
            .chain(&x)
            .copied()
            .max_by_key(|&u| p.iter().filter(|&&v| adj(u, v)).count());
        let mut p = p;
        let candidates: Vec<u32> = p
            .iter()
            .copied()
            .filter(|&v| pivot.is_none_or(|u| !adj(u, v)))
            .collect();
        for v in candidates {
            r.push(v);
            let np = p.iter().copied().filter(|&w| w != v && adj(v, w)).collect();
            let nx = x.iter().copied().filter(|&w| adj(v, w)).collect();
            bk(r, np, nx, adj, out);
            r.pop();
            p.retain(|&w| w != v);
            x.push(v);
        }
    }
    bk(
        &mut Vec::new(),
        members.to_vec(),
        Vec::new(),
        &adj,
        &mut out,
    );
    out.sort();
    out
}

/// How the closed sets (FCA clusters) and the relation agree: the share of closed sets whose
/// documents are all related to each other (cliques of the relation), and the share of related
/// pairs that lie inside some closed set (the maximal ones cover every pair any set covers).
pub fn agreement(mined: &crate::dedup::closed_sets::Mined, arcs: &Arcs) -> (f64, f64) {
    let related = |a: u32, b: u32| arcs.contains(&(a, b)) || arcs.contains(&(b, a));
    let cliques = mined
        .closed
        .iter()
        .filter(|set| {
            set.iter()
                .enumerate()
                .all(|(i, &a)| set[i + 1..].iter().all(|&b| related(a, b)))
        })
        .count();
    let mut inside: FxHashSet<(u32, u32)> = FxHashSet::default();
    for &m in &mined.maximal {
        let set = &mined.closed[m];
        for (i, &a) in set.iter().enumerate() {
            for &b in &set[i + 1..] {
                inside.insert((a, b));
            }
        }
    }
    let pairs: FxHashSet<(u32, u32)> = arcs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    let covered = pairs.iter().filter(|p| inside.contains(p)).count();
    let share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    (
        share(cliques, mined.closed.len()),
        share(covered, pairs.len()),
    )
}

/// Runs `method` over the documents of `input` and computes every figure.
pub fn analyse(
    docs: &[crate::workbench::eval::Doc],
    params: &DedupSettings,
    stop: &crate::canon::StopWords,
    t: &Thresholds,
    min_shared: usize,
    clique_bound: usize,
) -> Result<RelationStats> {
    let run = run_method(docs, params, stop)?;
    let arcs = arcs(&run, t);
    let (asymmetry, transitivity, closed_paths) = coefficients(&arcs);
    let comps = crate::dedup::components(docs.len(), arcs.iter().copied());
    let mut cl = Vec::new();
    let mut skipped = 0;
    for c in &comps {
        if c.len() > clique_bound {
            skipped += 1;
        } else {
            cl.extend(cliques(c, &arcs).into_iter().map(|q| q.len()));
        }
    }
    cl.sort_unstable_by(|a, b| b.cmp(a));
    let mined = crate::dedup::closed_sets::closed_sets(&run.sigs, min_shared);
    let (closed_are_cliques, pairs_in_closed) = agreement(&mined, &arcs);
    Ok(RelationStats {
        documents: docs.len(),
        arcs: arcs.len(),
        asymmetry,
        transitivity,
        closed_paths,
        components: comps.iter().map(Vec::len).collect(),
        cliques: cl,
        clique_skipped: skipped,
        closed_sets: mined.closed.iter().map(Vec::len).collect(),
        closed_maximal: mined.maximal.len(),
        closed_truncated: mined.truncated,
        closed_are_cliques,
        pairs_in_closed,
    })
}

fn summary(sizes: &[usize]) -> String {
    if sizes.is_empty() {
        return "none".into();
    }
    let docs: usize = sizes.iter().sum();
    let shown: Vec<String> = sizes.iter().take(10).map(|s| s.to_string()).collect();
    let more = if sizes.len() > 10 { ", …" } else { "" };
    format!(
        "{} ({} documents; largest: {}{more})",
        sizes.len(),
        docs,
        shown.join(", ")
    )
}

/// The figures as markdown.
pub fn markdown(method: &str, s: &RelationStats) -> String {
    format!(
        "| {method} | value |\n|---|---|\n\
         | documents | {} |\n| arcs (a is a duplicate of b) | {} |\n\
         | asymmetry Σ∣a_ij − a_ji∣ / Σ a_ij | {:.4} |\n\
         | transitivity Σ a_ij·a_jk·a_ik / Σ a_ij | {:.4} |\n\
         | closed two-step paths | {:.4} |\n\
         | connected components | {} |\n| maximal cliques | {} |\n\
         | components too large for clique search | {} |\n| closed sets (FCA) | {}{} |\n\
         | maximal closed sets | {} |\n| closed sets that are cliques of the relation | {:.3} |\n\
         | related pairs inside a closed set | {:.3} |\n",
        s.documents,
        s.arcs,
        s.asymmetry,
        s.transitivity,
        s.closed_paths,
        summary(&s.components),
        summary(&s.cliques),
        s.clique_skipped,
        summary(&s.closed_sets),
        if s.closed_truncated {
            " (search stopped: too many)"
        } else {
            ""
        },
        s.closed_maximal,
        s.closed_are_cliques,
        s.pairs_in_closed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[(u32, u32)]) -> Arcs {
        v.iter().copied().collect()
    }

    #[test]
    fn coefficients_by_hand() {
        // Symmetric triangle: asymmetry 0; 6 arcs, 6 closed ordered triples, all paths closed.
        let tri = set(&[(0, 1), (1, 0), (1, 2), (2, 1), (0, 2), (2, 0)]);
        assert_eq!(coefficients(&tri), (0.0, 1.0, 1.0));
        // A chain 0–1–2 (symmetric) without 0–2: 4 arcs, 2 open paths (0→1→2, 2→1→0).
        let chain = set(&[(0, 1), (1, 0), (1, 2), (2, 1)]);
        assert_eq!(coefficients(&chain), (0.0, 0.0, 0.0));
        // One-way containment 0 → 1: asymmetry 1.
        assert_eq!(coefficients(&set(&[(0, 1)])).0, 1.0);
    }

    #[test]
    fn components_and_cliques_of_a_chain() {
        let chain = set(&[(0, 1), (1, 0), (1, 2), (2, 1), (3, 4)]);
        let comps = crate::dedup::components(6, chain.iter().copied());
        assert_eq!(comps, vec![vec![0, 1, 2], vec![3, 4]]);
        // The chain is one component but two cliques: the weak and the strong definition.
        assert_eq!(cliques(&comps[0], &chain), vec![vec![0, 1], vec![1, 2]]);
    }
}
