"""The Spark job of `collect spark-job`: a collection's per-document work and dedup on a cluster.

Spark distributes and joins; every decision is taken by the `collect` binary, shipped to the
executors and run on each partition (the same code `collect build` runs):

  1. `collect worker` prepares the documents of each partition of each JSONL source (clean,
     filter, relevance, sign), one JSON record per document;
  2. signatures are exploded into (fingerprint, document) postings and joined on fingerprint,
     which counts the shared elements of every pair (a fingerprint held by very many documents
     is split into blocks, so no task holds the square of its posting list);
  3. `collect worker --stage judge` judges each pair from the sizes of both signatures;
  4. the pairs to verify on the full texts go through `--stage shingles` (counted here across
     the cluster), `--stage boilerplate` and `--stage verify`;
  5. the duplicate graph's connected components (label propagation) go through `collect keep`;
  6. documents, pairs and choices are written as JSON-line part files, which
     `collect spark-job` turns into the collection directory.

Usage (what `collect spark-job --print-command` prints):
  spark-submit --files collect,TOPIC.yaml collect_job.py job.json
"""

import json
import os
import stat
import subprocess
import sys
import threading
import time
import zlib
from urllib.parse import urlparse

# Partitions of every shuffle (set from the job's settings in main): without it, a union adds
# its inputs' partitions up, and label propagation would multiply them round after round.
N = 8

from pyspark import SparkFiles
from pyspark.sql import SparkSession


def shipped(path):
    """A file shipped with --files, as the executor (or driver) sees it."""
    local = SparkFiles.get(os.path.basename(path))
    return local if os.path.exists(local) else path


def binary(conf):
    path = shipped(conf["binary"])
    mode = os.stat(path).st_mode
    if not mode & stat.S_IXUSR:
        os.chmod(path, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def pipe(conf, args, lines, raw=False):
    """Runs `collect ARGS` over `lines` (str or bytes, one record each; with `raw`, bytes
    written as they are, a whole archive); yields its output lines. Like RDD.pipe, but the
    arguments may differ per partition, and a failure carries the binary's own message."""
    cmd = [binary(conf), "--quiet"] + args
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    failure = []

    def feed():
        try:
            for line in lines:
                if isinstance(line, str):
                    line = line.encode("utf-8")
                proc.stdin.write(line)
                if not raw:
                    proc.stdin.write(b"\n")
        except BrokenPipeError:
            pass
        except Exception as e:  # reported after the process ends
            failure.append(e)
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    errors = []
    drain = threading.Thread(target=lambda: errors.append(proc.stderr.read()), daemon=True)
    drain.start()
    for out in proc.stdout:
        yield out.decode("utf-8").rstrip("\n")
    writer.join()
    code = proc.wait()
    drain.join()
    if code != 0 or failure:
        message = (errors[0] if errors else b"").decode("utf-8", "replace").strip()
        raise RuntimeError(
            f"`{' '.join(args[:3])}` failed (exit {code}): {message or failure}"
        )


def topic_args(conf):
    return [shipped(conf["topic"])]


def prepare(sc, conf):
    """Step 1: worker records of every JSONL source, in file order per partition."""
    out = None
    for src in conf["sources"]:
        if src["kind"] == "warc":
            recs = prepare_archives(sc, conf, src)
            out = recs if out is None else out.union(recs)
            continue
        # Bytes as they are in the file: the worker decides what is not UTF-8, as a build does.
        lines = sc.textFile(src["uri"], minPartitions=conf["partitions"], use_unicode=False)
        counts = lines.mapPartitions(lambda it: [sum(1 for _ in it)]).collect()
        starts = [1]
        for c in counts[:-1]:
            starts.append(starts[-1] + c)
        args = ["worker"] + topic_args(conf) + ["--source", src["name"], "--text"]

        def run(i, it, args=args, starts=starts):
            return pipe(conf, args + ["--first-line", str(starts[i])], it)

        recs = lines.mapPartitionsWithIndex(run)
        out = recs if out is None else out.union(recs)
    return out.map(json.loads)


def prepare_archives(sc, conf, src):
    """Step 1 for a warc source: each archive file whole to one `collect worker --archive`
    (a web archive's records are found by reading it from its start, so a file is the unit)."""
    files = {urlparse(f["uri"]).path: f for f in src["files"]}
    if not files:
        return sc.emptyRDD()
    args = ["worker"] + topic_args(conf) + ["--source", src["name"], "--text"]
    archives = sc.binaryFiles(",".join(f["uri"] for f in src["files"]), minPartitions=conf["partitions"])

    def run(it):
        for uri, content in it:
            f = files[urlparse(uri).path]
            yield from pipe(conf, args + ["--archive", f["path"], "--label", f["label"]], [bytes(content)], raw=True)

    return archives.mapPartitions(run)


def first_of_each_id(sc, docs):
    """A JSONL id repeated across partitions: the first line keeps it, later ones are skipped
    (the worker checks repeats within its partition; a build within the whole file). Only
    the repeated keys travel to the driver; the records stay where they are."""
    keyed = docs.filter(lambda r: "id" in r and r["line"] > 0).map(
        lambda r: ((r["source"], r["record"]), (r["line"], 1))
    )
    repeated = dict(
        keyed.reduceByKey(lambda x, y: (min(x[0], y[0]), x[1] + y[1]), N)
        .filter(lambda kv: kv[1][1] > 1)
        .map(lambda kv: (kv[0], kv[1][0]))
        .collect()
    )
    first = sc.broadcast(repeated)

    def settle(rec):
        if "id" not in rec or rec["line"] == 0:
            return rec
        line = first.value.get((rec["source"], rec["record"]))
        if line is None or line == rec["line"]:
            return rec
        return {"line": rec["line"], "source": rec["source"], "duplicate_id": rec["record"]}

    return docs.map(settle)


def count_shared(conf, postings):
    """Step 2: (a, b) -> shared signature elements, a < b, for every pair sharing one and
    holding a new document. `postings` are (fingerprint, (document, new)): in an update the
    stored documents' postings join in, and pairs of two stored documents, settled long ago,
    are not counted again."""
    heavy_at = conf["heavy_postings"]
    df = postings.map(lambda p: (p[0], 1)).reduceByKey(lambda x, y: x + y, N)
    # A fingerprint in more than heavy_at documents is split into blocks of about that many;
    # each pair of blocks is one group, so its pairs are counted by many tasks.
    heavy = dict(
        df.filter(lambda kv: kv[1] > heavy_at)
        .map(lambda kv: (kv[0], -(-kv[1] // heavy_at)))
        .collect()
    )
    blocks = postings.context.broadcast(heavy)

    def cells(p):
        f, (doc, new) = p
        n = blocks.value.get(f)
        if n is None:
            yield ((f, 0, 0), (0, doc, new))
            return
        k = zlib.crc32(doc.encode("utf-8")) % n
        for j in range(n):
            yield ((f, min(k, j), max(k, j)), (k, doc, new))

    def pairs(cell):
        (_f, x, y), members = cell
        if x == y:
            docs = sorted((d, new) for _, d, new in members)
            for i, (a, an) in enumerate(docs):
                for b, bn in docs[i + 1 :]:
                    if an or bn:
                        yield ((a, b), 1)
        else:
            left = [(d, new) for k, d, new in members if k == x]
            right = [(d, new) for k, d, new in members if k == y]
            for a, an in left:
                for b, bn in right:
                    if an or bn:
                        yield ((a, b) if a < b else (b, a), 1)

    counted = postings.flatMap(cells).groupByKey(N).flatMap(pairs).reduceByKey(lambda x, y: x + y, N)
    return counted, len(heavy)


def judge(conf, shared, sizes):
    """Step 3: every counted pair judged from both signatures' sizes."""
    lines = (
        shared.map(lambda kv: (kv[0][0], (kv[0][1], kv[1])))
        .join(sizes, N)
        .map(lambda kv: (kv[1][0][0], (kv[0], kv[1][0][1], kv[1][1])))
        .join(sizes, N)
        .map(
            lambda kv: json.dumps(
                {"a": kv[1][0][0], "b": kv[0], "inter": kv[1][0][1], "sa": kv[1][0][2], "sb": kv[1][1]}
            )
        )
    )
    args = ["worker"] + topic_args(conf) + ["--stage", "judge"]
    return lines.mapPartitions(lambda it: pipe(conf, args, it)).map(json.loads)


def verify(conf, sc, judged, texts, new_ids, scratch):
    """Step 4: the pairs the signatures cannot settle, on the full texts. The engine takes a
    pair's texts newcomer first (its index order in an update), which decides the shorter text
    between two of equal length: `swap` says the pair's second id is that newcomer."""
    to_verify = (
        judged.filter(lambda p: p["verify"])
        .map(lambda p: (p["a"], p))
        .leftOuterJoin(new_ids, N)
        .map(lambda kv: dict(kv[1][0], swap=kv[1][1] is None))
        .cache()
    )
    need = to_verify.flatMap(lambda p: [(p["a"], None), (p["b"], None)]).distinct(N)
    docs = need.join(texts, N).map(lambda kv: json.dumps({"id": kv[0], "text": kv[1][1]}))
    sh_args = ["worker"] + topic_args(conf) + ["--stage", "shingles"]
    counts = (
        docs.mapPartitions(lambda it: pipe(conf, sh_args, it))
        .flatMap(lambda line: [(s, 1) for s in json.loads(line)["shingles"]])
        .reduceByKey(lambda x, y: x + y, N)
        .map(lambda kv: json.dumps([kv[0], kv[1]]))
    )
    bp_args = ["worker"] + topic_args(conf) + ["--stage", "boilerplate"]
    frequent = counts.mapPartitions(lambda it: pipe(conf, bp_args, it)).collect()
    path = os.path.join(scratch, "boilerplate.txt")
    with open(path, "w") as f:
        f.write("".join(s + "\n" for s in frequent))
    sc.addFile(path)
    lines = (
        to_verify.map(lambda p: (p["a"], p))
        .join(texts, N)
        .map(lambda kv: (kv[1][0]["b"], (kv[1][0], kv[1][1])))
        .join(texts, N)
        .map(lambda kv: json.dumps({
            "pair": {k: v for k, v in kv[1][0][0].items() if k != "swap"},
            "swap": kv[1][0][0]["swap"],
            "text_a": kv[1][0][1],
            "text_b": kv[1][1],
        }))
    )

    def run(it):
        args = ["worker"] + topic_args(conf) + [
            "--stage", "verify", "--boilerplate", SparkFiles.get("boilerplate.txt")]
        return pipe(conf, args, it)

    return lines.mapPartitions(run).map(json.loads), len(frequent)


def components(duplicates, M):
    """Connected components of the duplicate graph by label propagation: each document takes
    the smallest id among itself and its neighbours until nothing changes (rounds: about the
    longest chain of duplicates)."""
    edges = duplicates.flatMap(lambda p: [(p["a"], p["b"]), (p["b"], p["a"])]).cache()
    labels = edges.map(lambda e: (e[0], e[0])).distinct(M).cache()
    rounds = 0
    while True:
        rounds += 1
        proposed = edges.join(labels, M).map(lambda kv: (kv[1][0], kv[1][1]))
        new = labels.union(proposed).reduceByKey(min, M).cache()
        changed = new.join(labels, M).filter(lambda kv: kv[1][0] != kv[1][1]).count()
        labels.unpersist()
        labels = new
        if changed == 0:
            return labels, rounds


def keep(conf, duplicates, info):
    """Step 5: the keep rule inside each component, by `collect keep`."""
    # The duplicate graph is a small part of the pairs: a task per million edges, not per
    # partition of the input, or the rounds are all task overhead.
    M = max(2, -(-duplicates.count() // 1_000_000))
    labels, rounds = components(duplicates, M)
    members = labels.join(info, M).map(lambda kv: (kv[1][0], (kv[0],) + tuple(kv[1][1])))
    edges = duplicates.map(lambda p: (p["a"], p["b"])).join(labels, M).map(lambda kv: (kv[1][1], (kv[0], kv[1][0])))

    def line(kv):
        label, (docs, pairs) = kv
        docs = sorted(docs)
        index = {d[0]: i for i, d in enumerate(docs)}
        return json.dumps({
            "component": label,
            "candidates": [
                {"id": d, "words": w, "source_rank": r, "standing": st} for d, w, r, st in docs
            ],
            "duplicates": sorted([index[a], index[b]] for a, b in pairs),
        })

    lines = members.cogroup(edges, M).map(line)
    return lines.mapPartitions(lambda it: pipe(conf, ["keep"], it)), rounds


def main():
    global N
    with open(sys.argv[1]) as f:
        conf = json.load(f)
    N = conf["partitions"]
    spark = SparkSession.builder.appName(f"collect {conf['topic_name']}").getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    out = conf["parts"]
    scratch = conf["scratch"]

    clock = [time.monotonic()]
    seconds = {}

    def lap(name):
        now = time.monotonic()
        seconds[name] = round(now - clock[0], 2)
        clock[0] = now

    # Each step is counted where it ends (its output cached), so the figures time the steps.
    update = conf["mode"] == "update"
    store = conf["store"]
    docs = first_of_each_id(sc, prepare(sc, conf))
    if update:
        # Documents the store holds already are neither stored nor compared again.
        held = spark.read.parquet(store + "/documents").rdd.map(lambda r: (r["id"], True))
        keyed = docs.map(lambda r: (r.get("id"), r))
        docs = (
            keyed.leftOuterJoin(held, N)
            .filter(lambda kv: kv[0] is None or kv[1][1] is None)
            .map(lambda kv: kv[1][0])
        )
    docs = docs.cache()
    documents = docs.filter(lambda r: "id" in r).count()
    # What the later steps read of the compared documents, each kept once: the records with
    # their texts are unpickled again on every pass over them.
    compared = docs.filter(lambda r: r.get("compared"))
    texts = compared.map(lambda r: (r["id"], r["text"])).cache()
    sizes = compared.map(lambda r: (r["id"], r["size"])).cache()
    info = compared.map(lambda r: (r["id"], (r["words"], r["source_rank"], "new"))).cache()
    postings = compared.flatMap(lambda r: [(f, (r["id"], True)) for f in r["sig"]]).cache()
    new_ids = sizes.map(lambda kv: (kv[0], True)).cache()
    n_compared = sizes.count()
    lap("prepare")
    n_postings = postings.count()
    all_texts, all_sizes, all_info, all_postings = texts, sizes, info, postings
    if update:
        stored = spark.read.parquet(store + "/documents").rdd.filter(lambda r: r["compared"])
        fps = postings.map(lambda p: (p[0], None)).distinct(N)
        # Only the stored postings of fingerprints a newcomer holds: new-vs-store.
        partners = (
            spark.read.parquet(store + "/postings").rdd.map(lambda r: (r["fp"], r["id"]))
            .join(fps, N)
            .map(lambda kv: (kv[0], (kv[1][0], False)))
        )
        all_postings = postings.union(partners)
        all_sizes = sizes.union(stored.map(lambda r: (r["id"], {"len": r["len"], "sampled": r["sampled"], "exact": r["exact"]})))
        standing = sc.textFile(conf["standing"]).map(lambda line: tuple(line.split("\t")))
        all_info = info.union(
            stored.map(lambda r: (r["id"], (r["words"], r["source_rank"])))
            .join(standing, N)
            .map(lambda kv: (kv[0], (kv[1][0][0], kv[1][0][1], kv[1][1])))
        )
        all_texts = texts.union(spark.read.parquet(store + "/texts").rdd.map(lambda r: (r["id"], r["text"])))
    shared, heavy = count_shared(conf, all_postings)
    shared = shared.cache()
    candidates = shared.count()
    lap("postings_join")
    judged = judge(conf, shared, all_sizes).cache()
    judged.count()
    lap("judge")
    verified, boilerplate = verify(conf, sc, judged, all_texts, new_ids, scratch)
    verified = verified.cache()
    n_verified = verified.count()
    lap("verify")
    final = judged.filter(lambda p: not p["verify"]).union(verified)
    recorded = final.filter(lambda p: p["recorded"]).cache()
    duplicates = recorded.filter(lambda p: p["verdict"] == "duplicate").cache()
    chosen, rounds = keep(conf, duplicates, all_info)
    chosen = chosen.cache()
    chosen.count()
    lap("keep")

    docs.map(json.dumps).saveAsTextFile(out + "/documents")
    recorded.map(json.dumps).saveAsTextFile(out + "/pairs")
    chosen.saveAsTextFile(out + "/keep")
    # The signatures (and the texts the grey zone reads) beside the collection, as Parquet,
    # for the next update's new-vs-store join.
    how = "append" if update else "overwrite"
    # Every stored document, so that an update knows them all; only compared ones have
    # postings, so only they are ever partners.
    spark.createDataFrame(
        docs.filter(lambda r: "id" in r).map(
            lambda r: (r["id"], r["words"], r["source_rank"], r["size"]["len"], r["size"]["sampled"], r["size"]["exact"], r["compared"])
        ),
        "id string, words long, source_rank int, len long, sampled long, exact boolean, compared boolean",
    ).write.mode(how).parquet(store + "/documents")
    spark.createDataFrame(
        postings.map(lambda p: (p[0], p[1][0])), "fp long, id string"
    ).write.mode(how).parquet(store + "/postings")
    spark.createDataFrame(texts, "id string, text string").write.mode(how).parquet(store + "/texts")
    lap("write")
    figures = {
        "mode": conf["mode"],
        "documents": documents,
        "compared": n_compared,
        "postings": n_postings,
        "heavy_fingerprints": heavy,
        "candidate_pairs": candidates,
        "verified_pairs": n_verified,
        "recorded_pairs": recorded.count(),
        "boilerplate_shingles": boilerplate,
        "label_propagation_rounds": rounds,
        "seconds": seconds,
    }
    with open(os.path.join(scratch, "figures.json"), "w") as f:
        json.dump(figures, f)
    spark.stop()


if __name__ == "__main__":
    main()
