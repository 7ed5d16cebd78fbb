//! Curation at the scale of a queue, with the real binary on the real PEP revisions of
//! examples/texts: clusters, a cluster decision, a bulk rule with its dry run, the review log
//! and undo, and standing rules that a build applies.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;

fn collection(extra_topic: &str) -> (tempfile::TempDir, PathBuf) {
    examples_collection("cur", extra_topic)
}

fn review(root: &Path, args: &[&str]) -> Vec<Value> {
    let mut a = vec!["--json", "review", "--collection", "out"];
    a.extend_from_slice(args);
    json_lines(&stdout(&run_ok(root, &a)))
}

fn statuses(root: &Path) -> BTreeMap<String, String> {
    manifest(&root.join("out"))
        .into_iter()
        .map(|e| {
            (
                e["id"].as_str().unwrap().to_string(),
                e["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

#[test]
fn clusters_a_cluster_decision_a_rule_and_undo() {
    let (_tmp, root) = collection("");
    let pairs = review(&root, &["list", "--pairs"]);
    let clusters = review(&root, &["list"]);
    assert!(
        clusters.len() >= 2,
        "the PEP revisions give several clusters: {clusters:?}"
    );
    // Every pending pair is in exactly one cluster; the queue puts most words at stake first.
    let mut in_clusters: Vec<i64> = clusters.iter().flat_map(|c| ids(&c["pending"])).collect();
    in_clusters.sort();
    let mut pending: Vec<i64> = pairs.iter().map(|p| p["id"].as_i64().unwrap()).collect();
    pending.sort();
    assert_eq!(in_clusters, pending);
    let stakes: Vec<u64> = clusters
        .iter()
        .map(|c| c["words_at_stake"].as_u64().unwrap())
        .collect();
    assert!(stakes.windows(2).all(|w| w[0] >= w[1]), "{stakes:?}");
    let o = run_ok(&root, &["review", "--collection", "out", "list"]);
    assert!(
        stderr(&o).contains(&format!(
            "left: {} clusters, {} pairs",
            clusters.len(),
            pairs.len()
        )),
        "{}",
        stderr(&o)
    );

    // A cluster with a chain: its dry run names what would leave, and changes nothing.
    let chain = clusters
        .iter()
        .find(|c| c["pending"].as_array().unwrap().len() >= 2)
        .expect("a cluster of several pairs");
    let cid = chain["id"].as_i64().unwrap().to_string();
    let shown = &review(&root, &["cluster", &cid])[0];
    assert_eq!(shown["members"][0]["role"], "container");
    let container = shown["members"][0]["id"].as_str().unwrap().to_string();
    let before = statuses(&root);
    let dry = &review(
        &root,
        &["decide", "--cluster", &cid, "keep-container", "--dry-run"],
    )[0];
    assert_eq!(ids(&dry["pairs"]), ids(&chain["pending"]));
    let drops: Vec<String> = dry["drops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().to_string())
        .collect();
    assert!(!drops.is_empty() && !drops.contains(&container));
    assert!(dry["entry"].is_null());
    assert_eq!(statuses(&root), before, "a dry run changes nothing");

    let done = &review(&root, &["decide", "--cluster", &cid, "keep-container"])[0];
    let cluster_entry = done["entry"].as_i64().unwrap();
    let after = statuses(&root);
    for d in &drops {
        assert_eq!(after[d], "dropped", "{d}");
        assert!(!root.join("out/docs").join(format!("{d}.txt")).exists());
    }
    assert_eq!(after[&container], "kept");
    assert!(review(&root, &["list"])
        .iter()
        .all(|c| c["id"].as_i64().unwrap().to_string() != cid));

    // A rule over what is left picks exactly the pending pairs its figures match.
    let left = review(&root, &["list", "--pairs"]);
    let contained_share = |p: &Value| {
        let a_in = p["contained"] == p["a"];
        p[if a_in { "cont_a_in_b" } else { "cont_b_in_a" }]
            .as_f64()
            .unwrap()
    };
    let mut expected: Vec<i64> = left
        .iter()
        .filter(|p| contained_share(p) >= 0.6)
        .map(|p| p["id"].as_i64().unwrap())
        .collect();
    expected.sort();
    let rule = &review(&root, &["decide", "--where", "cont >= 0.6", "keep-both"])[0];
    assert_eq!(ids(&rule["pairs"]), expected);
    assert!(rule["drops"].as_array().unwrap().is_empty());

    let log = review(&root, &["log"]);
    let kinds: Vec<&str> = log.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    let expected_kinds: &[&str] = if expected.is_empty() {
        &["cluster"]
    } else {
        &["cluster", "rule"]
    };
    assert_eq!(kinds, expected_kinds);

    // Undoing the cluster decision as one brings every text back, in docs/ too.
    let undo = run_ok(
        &root,
        &[
            "review",
            "--collection",
            "out",
            "undo",
            &cluster_entry.to_string(),
        ],
    );
    assert!(stderr(&undo).contains("texts back in the collection"));
    assert_eq!(statuses(&root), before);
    for d in &drops {
        assert!(root.join("out/docs").join(format!("{d}.txt")).exists());
    }
    let log = review(&root, &["log"]);
    assert_eq!(log[0]["undone_by"], log.last().unwrap()["id"]);
    assert_eq!(log.last().unwrap()["kind"], "undo");

    // Mistakes are named, exit 2, and change nothing.
    for (args, says) in [
        (
            vec!["decide", "--where", "cont >= 0.9 and wrds < 3", "keep-both"],
            "column 17: unknown field `wrds`",
        ),
        (vec!["undo", &cluster_entry.to_string()], "already undone"),
        (
            vec!["decide", "--cluster", "999999", "keep-all"],
            "no cluster 999999",
        ),
        (
            vec!["decide", "keep-both"],
            "give a pair id, --cluster ID or --where",
        ),
    ] {
        let mut a = vec!["review", "--collection", "out"];
        a.extend(args.iter().copied());
        let o = run(&root, &a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{a:?}: {}", stderr(&o));
    }
    assert_eq!(statuses(&root), before);
}

#[test]
fn closed_set_clusters_partition_the_queue_and_decide_as_listed() {
    let (_tmp, root) = collection("");
    let pending: Vec<i64> = review(&root, &["list", "--pairs"])
        .iter()
        .map(|p| p["id"].as_i64().unwrap())
        .collect();
    let components = review(&root, &["list"]);
    let closed = review(&root, &["--clusters", "closed", "list"]);
    // Each pending pair is in exactly one closed cluster, and they split the queue finer.
    let mut in_closed: Vec<i64> = closed.iter().flat_map(|c| ids(&c["pending"])).collect();
    in_closed.sort();
    let mut sorted = pending.clone();
    sorted.sort();
    assert_eq!(in_closed, sorted);
    assert!(
        closed.len() > components.len(),
        "{} closed clusters, {} components",
        closed.len(),
        components.len()
    );
    // A text at stake in several closed clusters counts once in what is left.
    let left = |args: &[&str]| {
        let mut a = vec!["review", "--collection", "out"];
        a.extend_from_slice(args);
        let e = stderr(&run_ok(&root, &a));
        let line = e
            .lines()
            .find(|l| l.starts_with("left: "))
            .unwrap()
            .to_string();
        line.split(", ").nth(2).unwrap().to_string()
    };
    assert_eq!(left(&["list"]), left(&["--clusters", "closed", "list"]));

    // A closed cluster's id picks that cluster's pairs under --clusters closed, and is logged so.
    let several = closed
        .iter()
        .find(|c| c["pending"].as_array().unwrap().len() >= 2)
        .unwrap_or(&closed[0]);
    let cid = several["id"].as_i64().unwrap().to_string();
    let shown = &review(&root, &["--clusters", "closed", "cluster", &cid])[0];
    assert_eq!(ids(&shown["pending"]), ids(&several["pending"]));
    let before = statuses(&root);
    let done = &review(
        &root,
        &[
            "--clusters",
            "closed",
            "decide",
            "--cluster",
            &cid,
            "keep-all",
        ],
    )[0];
    assert_eq!(ids(&done["pairs"]), ids(&several["pending"]));
    assert_eq!(statuses(&root), before, "keep-all drops nothing");
    let log = review(&root, &["log"]);
    assert_eq!(log[0]["target"], format!("closed cluster {cid}"));
    // The review page served with --clusters closed lists the same clusters.
    let mut server = std::process::Command::new(BIN)
        .args(["serve", "out", "--port", "0", "--clusters", "closed"])
        .current_dir(&root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().unwrap()),
        &mut url,
    )
    .unwrap();
    let _server = Guard(server);
    let port = port_of(url.trim());
    let page = http(
        port,
        &format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"),
    );
    let listed = page.matches("href=\"/cluster/").count();
    assert_eq!(listed, (closed.len() - 1).min(50), "{page}");
    for c in closed.iter().filter(|c| c["id"] != several["id"]).take(50) {
        assert!(
            page.contains(&format!("href=\"/cluster/{}\"", c["id"])),
            "{}",
            c["id"]
        );
    }
    // An id that names no closed cluster is refused, saying where the ids are listed.
    let mut a = vec!["review", "--collection", "out", "--clusters", "closed"];
    a.extend(["cluster", "999999"]);
    let o = run(&root, &a);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`collect review --clusters closed list`"),
        "{}",
        stderr(&o)
    );
    let still: Vec<i64> = review(&root, &["list", "--pairs"])
        .iter()
        .map(|p| p["id"].as_i64().unwrap())
        .collect();
    assert_eq!(still.len(), pending.len() - ids(&several["pending"]).len());
}

#[test]
fn standing_rules_of_the_topic_decide_at_build_and_are_logged() {
    let (_tmp, plain) = collection("");
    let pairs = review(&plain, &["list", "--pairs"]);
    let near: Vec<&Value> = pairs
        .iter()
        .filter(|p| {
            p["cont_a_in_b"]
                .as_f64()
                .unwrap()
                .max(p["cont_b_in_a"].as_f64().unwrap())
                >= 0.6
        })
        .collect();
    assert!(!near.is_empty(), "some pair has containment ≥ 0.6");

    let (_tmp2, root) = collection(
        "review:\n  rules:\n    - {where: \"cont >= 0.6\", decision: drop-contained, note: near copies}\n",
    );
    let log = review(&root, &["log"]);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["kind"], "standing");
    assert_eq!(log[0]["target"], "cont >= 0.6");
    assert_eq!(log[0]["pairs"].as_u64().unwrap() as usize, near.len());
    let st = statuses(&root);
    for p in &near {
        assert_eq!(st[p["contained"].as_str().unwrap()], "dropped");
    }
    let decided = review(&root, &["list", "--pairs", "--status", "decided"]);
    assert!(decided.iter().all(|p| p["note"] == "near copies"));

    // A rule the grammar refuses stops the topic at load, naming the file and the place.
    write(
        &root,
        "bad.yaml",
        "name: bad\nsources:\n  - {kind: local, path: texts}\nreview:\n  rules:\n    - {where: \"cont >= high\", decision: drop-contained}\n",
    );
    let o = run(&root, &["check", "bad.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("bad.yaml") && err.contains("`cont` is a number"),
        "{err}"
    );
}
