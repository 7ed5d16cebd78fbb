//! Connected components of an undirected graph on documents `0..n`: the groups the review queue
//! shows as clusters and the workbench compares with cliques and closed sets.

use rustc_hash::FxHashMap;

/// The components with at least two members, each sorted, largest first (ties by first member),
/// so that the output depends on the edges alone, not on their order.
pub fn components(n: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> Vec<Vec<u32>> {
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn root(p: &mut [u32], x: u32) -> u32 {
        let mut r = x;
        while p[r as usize] != r {
            r = p[r as usize];
        }
        // Path compression keeps later lookups near constant on long chains of contained texts.
        let mut y = x;
        while p[y as usize] != r {
            let next = p[y as usize];
            p[y as usize] = r;
            y = next;
        }
        r
    }
    for (a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb) as usize] = ra.min(rb);
        }
    }
    let mut groups: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for x in 0..n as u32 {
        let r = root(&mut parent, x);
        groups.entry(r).or_default().push(x);
    }
    let mut out: Vec<Vec<u32>> = groups.into_values().filter(|g| g.len() > 1).collect();
    out.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_join_and_singletons_are_left_out() {
        // 0-1-2 a chain, 3-4 a pair, 5 alone.
        let c = components(6, [(1, 2), (4, 3), (0, 1)]);
        assert_eq!(c, vec![vec![0, 1, 2], vec![3, 4]]);
    }
}
