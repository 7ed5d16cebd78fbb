//! The queue a curator works through: contained pairs grouped into clusters, ordered by how
//! much text a decision changes, and decisions taken on a cluster or on every pair a rule picks
//! (by hand, or by the topic's standing rules in build and update). Each decision is one entry
//! of the review log, and `undo` takes one back as a whole.
//!
//! A cluster is a connected component of the contained pairs: texts linked by containment,
//! however long the chain. Pairs on record and not only pending ones make the graph, so a
//! cluster keeps its id (its smallest pair id) while the curator works through it. The other
//! grouping, [`Grouping::Closed`], puts together the pairs whose two texts generate the same
//! closed set of shared signature elements (the clustering paper's duplicate clusters): a chain
//! of quotes no longer joins texts that share nothing, and one decision fits more clusters
//! (README, "Reviewing contained pairs", has the figures).

use super::{list, PairStatus, PairSummary};
use crate::collection;
use crate::rule::Rule;
use crate::store::queries::Decision;
use crate::store::review_log::{Applied, EntryKind};
use crate::store::Store;
use crate::topic::StandingRule;
use anyhow::Result;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use std::path::Path;

/// What a text is within its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Contains others and is contained in none of the cluster.
    Container,
    /// Contained in another and contains none.
    Contained,
    /// Both: a link of a chain.
    Both,
}

/// A text of a cluster.
#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// Document id.
    pub id: String,
    /// Title.
    pub title: Option<String>,
    /// URL.
    pub url: Option<String>,
    /// Source.
    pub source: String,
    /// Words.
    pub words: u64,
    /// Container, contained or both.
    pub role: Role,
    /// Its highest containment in another member (None for a container).
    pub cont: Option<f64>,
}

/// A cluster of the queue.
#[derive(Debug, Clone, Serialize)]
pub struct Cluster {
    /// Cluster id: its smallest pair id.
    pub id: i64,
    /// pending while any of its pairs waits for a decision, else decided (or moot).
    pub status: PairStatus,
    /// Its pairs, by id.
    pub pairs: Vec<i64>,
    /// Its pairs waiting for a decision, by id.
    pub pending: Vec<i64>,
    /// Words of the contained texts of its pending pairs: what keeping the containers would
    /// take out of the collection.
    pub words_at_stake: u64,
    /// Highest containment among its pending pairs.
    pub max_cont: f64,
    /// The contained texts of its pending pairs, with their words (by id): the texts behind
    /// `words_at_stake`, which a text in more than one cluster (closed sets overlap) adds to
    /// each.
    #[serde(skip)]
    pub at_stake: Vec<(String, u64)>,
    /// Its texts: containers first, then by words.
    pub members: Vec<Member>,
}

/// How the queue groups its pairs into clusters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Grouping {
    /// Connected components: texts linked by containment, however long the chain.
    #[default]
    Components,
    /// Closed sets: the pairs whose two texts share the same part of their signatures, held
    /// by the same texts of the queue.
    Closed,
}

impl Grouping {
    /// The option that asks for this grouping on the command line, with a space after it
    /// (nothing for the default).
    pub fn flag(self) -> &'static str {
        match self {
            Grouping::Components => "",
            Grouping::Closed => "--clusters closed ",
        }
    }
}

/// Signature elements the two texts of a pair must share for the pair to join a closed set's
/// cluster; a pair sharing fewer is a cluster of its own. The K that `collect relation` reports
/// the dev corpus's closed sets at for mod-m signatures; 4, 8 and 16 give 812, 822 and 823
/// closed clusters of its queue, so the choice is not delicate.
pub const CLOSED_MIN_SHARED: usize = 8;

/// Groups contained pairs into clusters (connected components), in queue order: pending
/// clusters first, most words at stake first, then higher containment, then id; the others
/// by id.
pub fn clusters(pairs: &[PairSummary]) -> Vec<Cluster> {
    let (docs, edges) = numbered(pairs);
    let mut cluster_of: Vec<usize> = vec![usize::MAX; docs.len()];
    let groups = crate::dedup::components(docs.len(), edges.iter().copied());
    for (c, g) in groups.iter().enumerate() {
        for &d in g {
            cluster_of[d as usize] = c;
        }
    }
    let group_of: Vec<usize> = edges.iter().map(|&(a, _)| cluster_of[a as usize]).collect();
    assemble(pairs, &group_of, groups.len())
}

/// Groups contained pairs by the closed set each pair's texts generate in the context of the
/// queue's texts and their signatures (`signature_of`, by document id; a text without one
/// shares nothing), in the queue order of [`clusters`].
pub fn closed_clusters(
    pairs: &[PairSummary],
    signature_of: &FxHashMap<String, Vec<u64>>,
) -> Vec<Cluster> {
    let (docs, edges) = numbered(pairs);
    let sigs: Vec<Vec<u64>> = docs
        .iter()
        .map(|d| signature_of.get(*d).cloned().unwrap_or_default())
        .collect();
    let context = crate::dedup::closed_sets::Context::new(&sigs);
    // A pair's group is named by its closed set, or by the pair itself when it has none.
    let mut group_by_key: FxHashMap<Result<Vec<u32>, usize>, usize> = FxHashMap::default();
    let mut group_of = Vec::with_capacity(edges.len());
    for (i, &(a, b)) in edges.iter().enumerate() {
        let key = context.pair_closure(a, b, CLOSED_MIN_SHARED).ok_or(i);
        let next = group_by_key.len();
        group_of.push(*group_by_key.entry(key).or_insert(next));
    }
    assemble(pairs, &group_of, group_by_key.len())
}

/// The pairs' texts numbered in order of appearance, and each pair as two numbers.
fn numbered(pairs: &[PairSummary]) -> (Vec<&str>, Vec<(u32, u32)>) {
    let mut index: FxHashMap<&str, u32> = FxHashMap::default();
    let mut docs: Vec<&str> = Vec::new();
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        let mut ends = [0u32; 2];
        for (end, id) in ends.iter_mut().zip([p.a.as_str(), p.b.as_str()]) {
            *end = *index.entry(id).or_insert_with(|| {
                docs.push(id);
                (docs.len() - 1) as u32
            });
        }
        edges.push((ends[0], ends[1]));
    }
    (docs, edges)
}

/// The clusters of `groups` groups, pair `i` in group `group_of[i]`, in queue order.
fn assemble(pairs: &[PairSummary], group_of: &[usize], groups: usize) -> Vec<Cluster> {
    let mut members_of: Vec<Vec<&PairSummary>> = vec![Vec::new(); groups];
    for (p, &g) in pairs.iter().zip(group_of) {
        members_of[g].push(p);
    }
    let mut out: Vec<Cluster> = members_of
        .into_iter()
        .filter(|ps| !ps.is_empty())
        .map(|ps| cluster(&ps))
        .collect();
    out.sort_by(|x, y| {
        let waiting = |c: &Cluster| c.status != PairStatus::Pending;
        waiting(x)
            .cmp(&waiting(y))
            .then_with(|| match x.status {
                PairStatus::Pending => y
                    .words_at_stake
                    .cmp(&x.words_at_stake)
                    .then(y.max_cont.total_cmp(&x.max_cont)),
                _ => std::cmp::Ordering::Equal,
            })
            .then(x.id.cmp(&y.id))
    });
    out
}

/// The clusters of `all` (every contained pair on record) as `grouping` makes them; the
/// closed sets read the texts' signatures from `store`.
pub fn grouped(store: &Store, all: &[PairSummary], grouping: Grouping) -> Result<Vec<Cluster>> {
    match grouping {
        Grouping::Components => Ok(clusters(all)),
        Grouping::Closed => {
            let mut ids: Vec<&str> = all
                .iter()
                .flat_map(|p| [p.a.as_str(), p.b.as_str()])
                .collect();
            ids.sort_unstable();
            ids.dedup();
            let signature_of: FxHashMap<String, Vec<u64>> =
                store.signatures_of_ids(&ids)?.into_iter().collect();
            Ok(closed_clusters(all, &signature_of))
        }
    }
}

fn cluster(pairs: &[&PairSummary]) -> Cluster {
    let mut contains: FxHashSet<&str> = FxHashSet::default();
    let mut cont_of: FxHashMap<&str, f64> = FxHashMap::default();
    let mut members: FxHashMap<&str, Member> = FxHashMap::default();
    let mut stake: FxHashMap<&str, u64> = FxHashMap::default();
    let mut max_cont = 0.0f64;
    let mut pending = Vec::new();
    let mut decided = false;
    for p in pairs {
        contains.insert(p.container());
        let c = cont_of.entry(&p.contained).or_insert(0.0);
        *c = c.max(p.containment());
        for (id, title, url, source, words) in [
            (&p.a, &p.title_a, &p.url_a, &p.source_a, p.words_a),
            (&p.b, &p.title_b, &p.url_b, &p.source_b, p.words_b),
        ] {
            members.entry(id).or_insert_with(|| Member {
                id: id.clone(),
                title: title.clone(),
                url: url.clone(),
                source: source.clone(),
                words,
                role: Role::Container,
                cont: None,
            });
        }
        match p.status {
            PairStatus::Pending => {
                pending.push(p.id);
                stake.insert(&p.contained, p.words_contained());
                max_cont = max_cont.max(p.containment());
            }
            PairStatus::Decided => decided = true,
            PairStatus::Moot => {}
        }
    }
    let mut members: Vec<Member> = members
        .into_values()
        .map(|mut m| {
            m.cont = cont_of.get(m.id.as_str()).copied();
            m.role = match (m.cont.is_some(), contains.contains(m.id.as_str())) {
                (true, true) => Role::Both,
                (true, false) => Role::Contained,
                _ => Role::Container,
            };
            m
        })
        .collect();
    members.sort_by(|x, y| {
        (x.role != Role::Container)
            .cmp(&(y.role != Role::Container))
            .then(y.words.cmp(&x.words))
            .then(x.id.cmp(&y.id))
    });
    let mut ids: Vec<i64> = pairs.iter().map(|p| p.id).collect();
    ids.sort_unstable();
    pending.sort_unstable();
    let status = if !pending.is_empty() {
        PairStatus::Pending
    } else if decided {
        PairStatus::Decided
    } else {
        PairStatus::Moot
    };
    let mut at_stake: Vec<(String, u64)> = stake
        .into_iter()
        .map(|(id, words)| (id.to_string(), words))
        .collect();
    at_stake.sort_unstable();
    Cluster {
        id: ids[0],
        status,
        pairs: ids,
        pending,
        words_at_stake: at_stake.iter().map(|(_, w)| w).sum(),
        max_cont,
        members,
        at_stake,
    }
}

/// Every cluster of the store's contained pairs, in queue order.
pub fn list_clusters(store: &Store, grouping: Grouping) -> Result<Vec<Cluster>> {
    grouped(store, &list(store, None)?, grouping)
}

/// What a bulk decision would change, or changed.
#[derive(Debug, Clone, Serialize)]
pub struct Bulk {
    /// What picked the pairs: `cluster N`, or the rule as written.
    pub target: String,
    /// The decision.
    pub decision: Decision,
    /// The pending pairs it applies to, by id.
    pub pairs: Vec<i64>,
    /// Texts it takes out of the collection (by id, sorted).
    pub drops: Vec<String>,
    /// Their words.
    pub words_dropped: u64,
    /// The log entry, once applied (None on a dry run, or when no pair matched).
    pub entry: Option<i64>,
}

fn plan(target: String, decision: Decision, picked: &[&PairSummary]) -> Bulk {
    let mut drops: FxHashMap<&str, u64> = FxHashMap::default();
    for p in picked {
        match decision {
            Decision::KeepBoth => {}
            Decision::DropContained => {
                drops.insert(&p.contained, p.words_contained());
            }
            Decision::DropContainer => {
                drops.insert(p.container(), p.words_container());
            }
        }
    }
    let mut ids: Vec<String> = drops.keys().map(|s| s.to_string()).collect();
    ids.sort();
    Bulk {
        target,
        decision,
        pairs: picked.iter().map(|p| p.id).collect(),
        drops: ids,
        words_dropped: drops.values().sum(),
        entry: None,
    }
}

/// What deciding one pair would change (`review decide ID … --dry-run`).
pub fn plan_pair(pair: &PairSummary, decision: Decision) -> Bulk {
    plan(format!("pair {}", pair.id), decision, &[pair])
}

fn apply(
    store: &mut Store,
    dir: &Path,
    kind: EntryKind,
    mut bulk: Bulk,
    note: Option<&str>,
) -> Result<Bulk> {
    if bulk.pairs.is_empty() {
        return Ok(bulk);
    }
    let applied = store.record_decisions(kind, &bulk.target, bulk.decision, note, &bulk.pairs)?;
    bulk.entry = Some(applied.entry);
    collection::sync_collection(store, dir)?;
    Ok(bulk)
}

/// Decides every pending pair a rule picks, as one entry of the log (none on a dry run).
pub fn decide_where(
    store: &mut Store,
    dir: &Path,
    rule: &Rule,
    decision: Decision,
    note: Option<&str>,
    dry_run: bool,
) -> Result<Bulk> {
    let pending = list(store, Some(PairStatus::Pending))?;
    let picked: Vec<&PairSummary> = pending
        .iter()
        .filter(|p| rule.matches(&p.facts()))
        .collect();
    let bulk = plan(rule.text().to_string(), decision, &picked);
    if dry_run {
        return Ok(bulk);
    }
    apply(store, dir, EntryKind::Rule, bulk, note)
}

/// Which cluster a bulk decision takes: its id under a grouping.
#[derive(Debug, Clone, Copy)]
pub struct ClusterRef {
    /// Cluster id (its smallest pair id).
    pub id: i64,
    /// The grouping the id was listed under.
    pub grouping: Grouping,
}

/// The cluster `target` names among the clusters of `all` (every contained pair on record);
/// an id that names none is a bad input that says where the ids are listed.
pub fn find_cluster(store: &Store, all: &[PairSummary], target: ClusterRef) -> Result<Cluster> {
    grouped(store, all, target.grouping)?
        .into_iter()
        .find(|c| c.id == target.id)
        .ok_or_else(|| {
            crate::error::bad_input(format!(
                "{}: no cluster {} (cluster ids are in `collect review {}list`)",
                store.path().display(),
                target.id,
                target.grouping.flag()
            ))
        })
}

/// Decides the pending pairs of a cluster, as one entry of the log: `keep-container`
/// (drop-contained) keeps the texts nothing in the cluster contains, `keep-all` keeps all.
pub fn decide_cluster(
    store: &mut Store,
    dir: &Path,
    target: ClusterRef,
    decision: Decision,
    note: Option<&str>,
    dry_run: bool,
) -> Result<Bulk> {
    let cluster = target.id;
    let all = list(store, None)?;
    let c = find_cluster(store, &all, target)?;
    let pending: FxHashSet<i64> = c.pending.iter().copied().collect();
    let picked: Vec<&PairSummary> = all.iter().filter(|p| pending.contains(&p.id)).collect();
    let name = match target.grouping {
        Grouping::Components => format!("cluster {cluster}"),
        Grouping::Closed => format!("closed cluster {cluster}"),
    };
    let bulk = plan(name, decision, &picked);
    if dry_run {
        return Ok(bulk);
    }
    apply(store, dir, EntryKind::Cluster, bulk, note)
}

/// Applies the topic's standing rules in order to the pending pairs, each matching rule one
/// entry of the log; what one rule decided is no longer pending for the next. The collection
/// directory is left to the caller, which writes it next.
pub fn apply_standing_rules(store: &mut Store, rules: &[StandingRule]) -> Result<Vec<Bulk>> {
    let mut out = Vec::new();
    for r in rules {
        let pending = list(store, Some(PairStatus::Pending))?;
        let picked: Vec<&PairSummary> = pending
            .iter()
            .filter(|p| r.rule.matches(&p.facts()))
            .collect();
        let mut bulk = plan(r.rule.text().to_string(), r.decision, &picked);
        if bulk.pairs.is_empty() {
            continue;
        }
        let applied = store.record_decisions(
            EntryKind::Standing,
            &bulk.target,
            bulk.decision,
            r.note.as_deref(),
            &bulk.pairs,
        )?;
        bulk.entry = Some(applied.entry);
        out.push(bulk);
    }
    Ok(out)
}

/// `, N pairs decided by standing rules (entries …)` for a stage line; empty when none matched.
pub fn standing_summary(ruled: &[Bulk]) -> String {
    if ruled.is_empty() {
        return String::new();
    }
    let pairs: usize = ruled.iter().map(|b| b.pairs.len()).sum();
    let entries: Vec<String> = ruled
        .iter()
        .filter_map(|b| b.entry.map(|e| e.to_string()))
        .collect();
    format!(
        ", {pairs} pairs decided by standing rules (review log entries {})",
        entries.join(", ")
    )
}

/// Undoes one entry of the log and brings the collection directory in line.
pub fn undo(store: &mut Store, dir: &Path, entry: i64) -> Result<Applied> {
    let applied = store.undo_entry(entry)?;
    collection::sync_collection(store, dir)?;
    Ok(applied)
}

/// Where the queue stands: what a curator has left.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Left {
    /// Pairs waiting.
    pub pairs: usize,
    /// Clusters with a pair waiting.
    pub clusters: usize,
    /// Words at stake in them, each text counted once.
    pub words: u64,
}

/// What is left of the queue.
pub fn left(clusters: &[Cluster]) -> Left {
    let waiting = clusters.iter().filter(|c| c.status == PairStatus::Pending);
    let texts: FxHashMap<&str, u64> = waiting
        .clone()
        .flat_map(|c| c.at_stake.iter().map(|(id, w)| (id.as_str(), *w)))
        .collect();
    Left {
        // A pair is in exactly one cluster of either grouping.
        pairs: waiting.clone().map(|c| c.pending.len()).sum(),
        clusters: waiting.count(),
        words: texts.values().sum(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn pair(
        id: i64,
        contained: &str,
        container: &str,
        cont: f64,
        words: u64,
    ) -> PairSummary {
        PairSummary {
            id,
            a: contained.into(),
            b: container.into(),
            url_a: None,
            url_b: None,
            source_a: "s".into(),
            source_b: "s".into(),
            title_a: None,
            title_b: None,
            resemblance: cont / 2.0,
            cont_a_in_b: Some(cont),
            cont_b_in_a: Some(cont / 3.0),
            verified: false,
            shared: 30,
            words_a: words,
            words_b: words * 4,
            contained: contained.into(),
            status: PairStatus::Pending,
            decision: None,
            note: None,
            decided_at: None,
        }
    }

    #[test]
    fn chains_make_one_cluster_ranked_by_words_at_stake() {
        // x ⊂ y ⊂ z is one cluster; p ⊂ q another, with more words at stake.
        let pairs = vec![
            pair(1, "x", "y", 0.9, 100),
            pair(2, "y", "z", 0.8, 400),
            pair(3, "p", "q", 0.6, 1000),
        ];
        let cs = clusters(&pairs);
        assert_eq!(cs.len(), 2);
        assert_eq!(cs[0].id, 3);
        assert_eq!(cs[0].words_at_stake, 1000);
        assert_eq!(cs[1].id, 1);
        assert_eq!(cs[1].pairs, vec![1, 2]);
        assert_eq!(cs[1].words_at_stake, 500);
        let roles: Vec<(&str, Role)> = cs[1]
            .members
            .iter()
            .map(|m| (m.id.as_str(), m.role))
            .collect();
        assert_eq!(
            roles,
            vec![
                ("z", Role::Container),
                ("y", Role::Both),
                ("x", Role::Contained)
            ]
        );
        assert_eq!(cs[1].max_cont, 0.9);
    }

    #[test]
    fn closed_sets_split_a_chain_and_join_the_copies_of_one_core() {
        // y quotes the first half of x and z the second half of y: a chain x ⊂ y ⊃ z whose
        // ends share nothing. p is quoted whole by q and by r: one core, held by three texts.
        let range = |a: u64, b: u64| (a..b).collect::<Vec<u64>>();
        let sig: FxHashMap<String, Vec<u64>> = [
            ("x", range(0, 20)),
            ("y", range(0, 40)),
            ("z", range(30, 60)),
            ("p", range(100, 120)),
            ("q", range(100, 150)),
            ("r", range(90, 120)),
            ("s", range(200, 230)),
            ("t", range(225, 260)),
        ]
        .into_iter()
        .map(|(id, s)| (id.to_string(), s))
        .collect();
        let pairs = vec![
            pair(1, "x", "y", 0.9, 100),
            pair(2, "z", "y", 0.5, 100),
            pair(3, "p", "q", 1.0, 50),
            pair(4, "p", "r", 1.0, 50),
            // s and t share 5 elements, fewer than CLOSED_MIN_SHARED: a cluster of its own.
            pair(5, "s", "t", 0.4, 30),
        ];
        let components: Vec<Vec<i64>> = clusters(&pairs).into_iter().map(|c| c.pairs).collect();
        assert_eq!(components, vec![vec![1, 2], vec![3, 4], vec![5]]);
        let closed = closed_clusters(&pairs, &sig);
        let ids: Vec<Vec<i64>> = closed.iter().map(|c| c.pairs.clone()).collect();
        assert_eq!(ids, vec![vec![1], vec![2], vec![3, 4], vec![5]]);
        // p is at stake in one cluster; y's cluster and x's each count their own text.
        assert_eq!(left(&closed).words, 100 + 100 + 50 + 30);
        assert_eq!(left(&closed).clusters, 4);
    }

    #[test]
    fn decided_clusters_go_last_and_leave_the_count() {
        let mut pairs = vec![pair(1, "x", "y", 0.9, 100), pair(2, "p", "q", 0.6, 10)];
        pairs[0].status = PairStatus::Decided;
        let cs = clusters(&pairs);
        assert_eq!(cs[0].id, 2);
        assert_eq!(cs[1].status, PairStatus::Decided);
        let l = left(&cs);
        assert_eq!((l.pairs, l.clusters, l.words), (1, 1, 10));
    }

    #[test]
    fn a_plan_names_the_texts_it_drops_once() {
        // Two pairs share a contained text: keeping the containers drops it once.
        let pairs = [pair(1, "x", "y", 0.9, 100), pair(2, "x", "z", 0.7, 100)];
        let picked: Vec<&PairSummary> = pairs.iter().collect();
        let b = plan("cluster 1".into(), Decision::DropContained, &picked);
        assert_eq!(b.drops, vec!["x".to_string()]);
        assert_eq!(b.words_dropped, 100);
        let b = plan("cluster 1".into(), Decision::DropContainer, &picked);
        assert_eq!(b.drops, vec!["y".to_string(), "z".to_string()]);
        assert_eq!(b.words_dropped, 800);
        assert!(plan("c".into(), Decision::KeepBoth, &picked)
            .drops
            .is_empty());
    }
}
