#!/usr/bin/env python3
"""Russian dev pairs for the morphology option: paraphrases with changed inflection and word order.

Usage: ru_paraphrase.py ARTICLE.txt OUT_DIR [--passages N]
ARTICLE.txt: a Russian plain text (e.g. the article «Литва» of README "Data for the benchmarks").
Writes OUT_DIR/docs/*.txt and OUT_DIR/pairs.tsv (header `a b label relation`), the layout
`collect eval` and `collect dedup` read. Deterministic: the same article gives the same pairs.

From each passage of about 120 words (whole sentences, in article order) `src_NN`:
- `infl_NN`: about one word in three (Cyrillic, 5+ letters) gets another ending of its paradigm
  (adjective, noun or verb endings), as a writer re-inflecting a copied text would;
- `order_NN`: the same re-inflection, plus neighbouring words swapped at every sixth position
  and the sentences rotated by one.
Labels: `inflect` (src_NN, infl_NN), `reorder` (src_NN, order_NN), both derived; `non`
(src_NN, infl_MM of another passage of the same article: same topic, unrelated), unrelated.
"""
import hashlib, os, re, sys

ADJ = ["ыми", "ими", "ого", "его", "ому", "ему", "ый", "ий", "ой", "ая", "яя", "ое", "ее", "ые",
       "ие", "ым", "им", "ую", "юю", "ых", "их"]
NOUN = ["ами", "ями", "ам", "ям", "ах", "ях", "ов", "ев", "ом", "ем", "ой", "ей", "а", "я", "ы",
        "и", "у", "ю", "е"]
VERB = ["ала", "али", "ало", "ет", "ют", "ут", "ит", "ат", "ят", "ал"]
GROUPS = [ADJ, VERB, NOUN]  # longest, most telling endings first


def h(*parts):
    return int(hashlib.sha1("\x1f".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def reinflect(word, pos):
    """Another ending of the same paradigm for about one Cyrillic word of 5+ letters in three."""
    if len(word) < 5 or not re.fullmatch(r"[а-яё]+", word.lower()) or h(word, pos) % 3:
        return word
    for group in GROUPS:
        for end in sorted(group, key=len, reverse=True):
            if word.lower().endswith(end) and len(word) - len(end) >= 3:
                others = [e for e in group if e != end]
                return word[: len(word) - len(end)] + others[h(word, pos, "e") % len(others)]
    return word


def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+", text.replace("\n", " ")) if s.strip()]


def passages(text, size=120):
    out, cur, n = [], [], 0
    for s in sentences(text):
        cur.append(s)
        n += len(s.split())
        if n >= size:
            out.append(cur)
            cur, n = [], 0
    return out


def paraphrase(sents, reorder):
    done = []
    for si, s in enumerate(sents):
        words = [reinflect(w, (si, i)) for i, w in enumerate(s.split())]
        if reorder:
            for i in range(0, len(words) - 1, 6):
                words[i], words[i + 1] = words[i + 1], words[i]
        done.append(" ".join(words))
    if reorder and len(done) > 1:
        done = done[1:] + done[:1]
    return " ".join(done)


def main():
    args = sys.argv[1:]
    limit = 40
    if "--passages" in args:
        i = args.index("--passages")
        limit = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit("usage: ru_paraphrase.py ARTICLE.txt OUT_DIR [--passages N]")
    article, out = args
    text = open(article, encoding="utf-8").read()
    ps = [p for p in passages(text) if sum(len(re.findall(r"[а-яё]", s.lower())) for s in p) > 300]
    ps = ps[:limit]
    os.makedirs(os.path.join(out, "docs"), exist_ok=True)
    rows = []
    for i, p in enumerate(ps):
        docs = {
            f"src_{i:02}": " ".join(p),
            f"infl_{i:02}": paraphrase(p, reorder=False),
            f"order_{i:02}": paraphrase(p, reorder=True),
        }
        for name, body in docs.items():
            with open(os.path.join(out, "docs", name + ".txt"), "w", encoding="utf-8") as f:
                f.write(body + "\n")
        rows.append((f"src_{i:02}.txt", f"infl_{i:02}.txt", "inflect", "derived"))
        rows.append((f"src_{i:02}.txt", f"order_{i:02}.txt", "reorder", "derived"))
        j = (i + 1 + h(i) % (len(ps) - 1)) % len(ps) if len(ps) > 1 else i
        if j != i:
            rows.append((f"src_{i:02}.txt", f"infl_{j:02}.txt", "non", "unrelated"))
    with open(os.path.join(out, "pairs.tsv"), "w", encoding="utf-8") as f:
        f.write("a\tb\tlabel\trelation\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    print(f"{len(ps)} passages, {len(rows)} pairs in {out}")


main()
