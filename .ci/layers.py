#!/usr/bin/env python3
"""Checks the layering invariants ARCHITECTURE.md states; exits 1 naming each one broken.

Run by .ci/run; also `python3 .ci/layers.py` by hand. Reads src/ only: what a module imports
is what its `crate::NAME` paths name (comments excluded).
"""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
failures = []


def code_lines(path):
    """Lines of a Rust file without `//` comments (doc comments included)."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.split("//", 1)[0] if "//" in line and '"' not in line else line
        if line.lstrip().startswith("//"):
            continue
        yield n, stripped


def files(*parts):
    base = SRC.joinpath(*parts)
    if base.is_file():
        return [base]
    if base.with_suffix(".rs").is_file():
        return [base.with_suffix(".rs")]
    return sorted(base.rglob("*.rs"))


def forbid(where, pattern, why):
    rx = re.compile(pattern)
    for f in files(where) if isinstance(where, str) else where:
        for n, line in code_lines(f):
            if rx.search(line):
                failures.append(f"{f.relative_to(SRC.parent)}:{n}: {why}: {line.strip()}")


# Top-level modules: src/NAME.rs or src/NAME/.
modules = sorted(
    {p.stem for p in SRC.glob("*.rs") if p.stem not in ("lib", "main")}
    | {p.name for p in SRC.iterdir() if p.is_dir() and p.name != "bin"}
)


def imports(module):
    names = set()
    for f in files(module):
        for _, line in code_lines(f):
            names.update(re.findall(r"\bcrate::([a-z_]+)", line))
    return {m for m in names if m in modules and m != module}


graph = {m: imports(m) for m in modules}

# 1. No import circles between the top-level modules.
state = {}


def visit(m, stack):
    state[m] = "open"
    for d in sorted(graph[m]):
        if state.get(d) == "open":
            cycle = stack[stack.index(d):] + [d]
            failures.append("import circle: " + " -> ".join(cycle))
        elif d not in state:
            visit(d, stack + [d])
    state[m] = "done"


for m in modules:
    if m not in state:
        visit(m, [m])

# 2. Stated layers (ARCHITECTURE.md, "Invariants").
allowed = {
    "acquire": {"markup"},
    "canon": set(),
    "markup": set(),
    "clean": {"acquire", "markup"},
    "sign": {"canon"},
    "relevance": {"canon"},
    "dedup": {"sign", "canon", "readers", "error"},
    "store": {"acquire", "sign", "error"},
    "testhooks": set(),
    "error": set(),
}
for m, ok in allowed.items():
    extra = graph.get(m, set()) - ok
    if extra:
        failures.append(f"src/{m}: imports {sorted(extra)}; its layer allows only {sorted(ok)}")
# Nothing but the command line imports cli/; nothing in the pipeline imports the workbench or
# the demo.
for m in modules:
    if m != "cli" and "cli" in graph[m]:
        failures.append(f"src/{m}: imports cli/, which only main.rs may use")
    if m not in ("cli", "workbench", "demo") and ({"workbench", "demo"} & graph[m]):
        failures.append(f"src/{m}: imports the workbench or the demo")

# 3. clean/, sign/ and markup do no IO.
io = r"\bstd::(fs|net|process)\b|\bFile::|\brusqlite\b|\breqwest\b|\btokio\b"
forbid("clean", io, "clean/ does no IO")
forbid("sign", io, "sign/ does no IO")
forbid("relevance", io, "relevance/ does no IO")
forbid("markup", io, "markup does no IO")

# 3b. Every HTML parse goes through markup::parse_html (size cut, nesting guard, time budget).
for f in SRC.rglob("*.rs"):
    if f != SRC / "markup.rs":
        forbid([f], r"\bparse_document\b|\bHtml::parse_|\bparse_fragment\b",
               "HTML is parsed only by markup::parse_html")

# 4. Only store/ speaks SQL.
for f in SRC.rglob("*.rs"):
    if "store" not in f.relative_to(SRC).parts[:1]:
        forbid([f], r"\brusqlite\b|\bconn\.(execute|prepare|query_row)", "only store/ speaks SQL")

# 5. cli/ holds no engine code: it parses flags and prints.
forbid("cli", r"\brayon::prelude|par_iter|\bCanonicalizer\b|\.sign(_doc)?\(|\bPostings\b|\bfind_pairs\b",
       "cli/ holds no engine code")

# 6. Stages receive narrow settings: no function needs a long argument list.
for f in SRC.rglob("*.rs"):
    forbid([f], r"clippy::too_many_arguments", "a context struct instead of many arguments")

# 7. The collection layout is named once.
for f in SRC.rglob("*.rs"):
    if f != SRC / "collection" / "mod.rs":
        forbid([f], r'"collection\.sqlite', "the store's file name lives in collection/mod.rs")

# 7b. A review decision is written in one place: the review log derives a pair's decision and
# the texts review drops (store/review_log.rs); salvage restores them as found (health.rs).
for f in SRC.rglob("*.rs"):
    if f not in (SRC / "store" / "review_log.rs", SRC / "store" / "health.rs"):
        forbid([f], r"SET decision\b|INSERT INTO decisions", "review decisions are written by store/review_log.rs")

# 7d. A stored text is packed and unpacked in one place (store/text.rs): zstd is used nowhere
# else in the product, and a store module that reads the texts table reads through StoredText.
for f in SRC.rglob("*.rs"):
    if f != SRC / "store" / "text.rs":
        forbid([f], r"\bzstd\b", "texts are packed and unpacked by store/text.rs")
for f in files("store"):
    body = f.read_text(encoding="utf-8")
    reads = re.search(r"\bt\.text\b|(?<!DELETE )FROM texts\b", body)
    if reads and not re.search(r"\bStoredText\b|\bStoredFrame\b|\bTextRow\b", body):
        failures.append(f"{f.relative_to(SRC.parent)}: reads the texts table without StoredText")

# 4b. Every SQLite error leaves the store through store_error (`.at(path)`), which names the
# store file and turns damage into StoreCorrupt (exit 2): a statement of a store module that
# calls SQLite and propagates with `?` maps the error on the way. health.rs is exempt: it
# examines a damaged store and reports what it meets as problems.
SQLITE_CALL = re.compile(r"\.(prepare|prepare_cached|execute|execute_batch|query_row|query_map|query|"
                         r"transaction|unchecked_transaction|commit|pragma_update|next)\(")
for f in files("store"):
    if f.name == "health.rs":
        continue
    text = f.read_text(encoding="utf-8").split("#[cfg(test)]")[0]
    keep_lines = lambda m: "\n" * m.group(0).count("\n")
    text = re.sub(r'"(\\.|[^"\\])*"', lambda m: '""' + keep_lines(m), text)
    text = re.sub(r"//[^\n]*", "", text)
    depth, start = 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c in ";{}":
            stmt = " ".join(text[start:i].split())
            if "?" in stmt and SQLITE_CALL.search(stmt) and not re.search(r"\.at\(|store_error", stmt):
                first = i - len(text[start:i].lstrip())
                line = text[:first].count("\n") + 1
                failures.append(f"{f.relative_to(SRC.parent)}:{line}: a SQLite error leaves without .at(path): {stmt[:100]}")
            start = i + 1

# 7f. One copy of each text (store/kept.rs): a kept text lives only in docs/, so the commands
# read a document's text through kept::TextRow, which knows both homes. Only health.rs (which
# examines both homes itself) and the tests-only reader in store/mod.rs read texts otherwise.
for f in files("store"):
    if f.name in ("kept.rs", "health.rs", "text.rs", "mod.rs"):
        continue
    if re.search(r"\bt\.text\b", f.read_text(encoding="utf-8")) and "TextRow" not in f.read_text(encoding="utf-8"):
        failures.append(f"{f.relative_to(SRC.parent)}: reads a text without kept::TextRow, which knows docs/")

# 7e. The fingerprint index has one home (store/fp_index.rs): only it reads or writes the
# buckets, since a lookup that does not state the split misses a part; and a signature value has
# one format (store/signature.rs): only it packs or unpacks one (the migrations of store/mod.rs
# are history and name the older tables).
for f in SRC.rglob("*.rs"):
    if f != SRC / "store" / "fp_index.rs":
        if f != SRC / "store" / "mod.rs":
            forbid([f], r"fp_buckets|fp_filter|postings_fp", "the fingerprint index is store/fp_index.rs's")
    text = f.read_text(encoding="utf-8")
    if re.search(r"(INTO|FROM|JOIN)\s+signatures\b", text) and not re.search(
        r"signature::(pack|unpack_into|StoredSignature)|\bStoredSignature\b|\bunpack_into\b", text
    ):
        failures.append(f"{f.relative_to(SRC.parent)}: touches the signatures table without store/signature.rs's format")

# 7g. The manifest has one home (collection/manifest.rs): only it makes a line, so a line
# merged into the file and a file written whole are the same bytes; and only store/changes.rs
# (with the migrations that made the table) reads or clears what changed since the last sync.
for f in SRC.rglob("*.rs"):
    if f != SRC / "collection" / "manifest.rs":
        forbid([f], r"struct ManifestRow\b", "manifest lines are made by collection/manifest.rs")
    if f not in (SRC / "store" / "changes.rs", SRC / "store" / "mod.rs"):
        forbid([f], r"manifest_changes\b(?!\()", "the changes since the last sync are store/changes.rs's")

# 7h. The report's figures have one home (store/figures.rs): only it reads, fills or makes the
# triggers of the table that keeps them, so a figure read from it and one counted over the
# documents cannot disagree by a query written elsewhere (the migrations made the table).
for f in SRC.rglob("*.rs"):
    if f not in (SRC / "store" / "figures.rs", SRC / "store" / "mod.rs"):
        forbid([f], r"(INTO|FROM|JOIN|UPDATE)\s+figures\b|figures_(insert|update|delete)\b", "the report's figures are store/figures.rs's")

# 7c. The Spark driver decides nothing: scores, thresholds and the keep rule's order are the
# binary's (collect worker / collect keep). It may read a verdict's name, never a score.
job = SRC.parent / "spark" / "collect_job.py"
for n, line in enumerate(job.read_text(encoding="utf-8").splitlines(), 1):
    code = line.split("#", 1)[0]
    if re.search(r"resemblance|cont_[ab]_in|containment|threshold|passage|min_words|preference", code):
        failures.append(f"spark/collect_job.py:{n}: the driver reads a score or a threshold; decisions are the binary's: {line.strip()}")

# 8. The repository stands alone: product files never point at ../shared.
for p in [SRC.parent / "README.md", SRC.parent / "ARCHITECTURE.md", *SRC.parent.glob("docs/*.md")]:
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if "../shared" in line or "METHOD.md" in line:
            failures.append(f"{p.relative_to(SRC.parent)}:{n}: points outside the repository")
REPO = SRC.parent
for f in [*SRC.rglob("*.rs"), *REPO.glob("tests/**/*.rs"), *REPO.glob("examples/*.rs"),
          *REPO.glob("benches/*.rs"), *REPO.glob("scripts/*"), *REPO.glob("spark/*"), *REPO.glob("fuzz/fuzz_targets/*.rs")]:
    if f.is_file():
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if "../shared" in line or "METHOD.md" in line:
                failures.append(f"{f.relative_to(REPO)}:{n}: points outside the repository")

if failures:
    print("layering invariants broken (ARCHITECTURE.md, Invariants):")
    for f in failures:
        print("  " + f)
    sys.exit(1)
print(f"layering invariants hold ({len(modules)} modules, no circles)")
