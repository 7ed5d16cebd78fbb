#!/usr/bin/env python3
"""Builds the demo web's library (src/demo/library/library.zip) from real texts.

The demo of `collect` serves a web of many hosts on 127.0.0.1. Its pages are real documents
on one theme, software packaging, in English and Russian:

* Debian's own manuals, as Debian ships them (HTML, PDF, EPUB): the New Maintainers' Guide
  (packages maint-guide, maint-guide-ru), the Debian FAQ (debian-faq, debian-faq-ru) and the
  Ubuntu Packaging Guide (ubuntu-packaging-guide-html, -html-ru, -epub-ru). Get them with
  `apt-get download maint-guide maint-guide-ru debian-faq debian-faq-ru
  ubuntu-packaging-guide-html ubuntu-packaging-guide-html-ru ubuntu-packaging-guide-epub-ru`.
* Python Enhancement Proposals on packaging, several historical revisions of some (the PEPs
  are public domain or CC0), and, for the pages off the theme, English Wikipedia articles and
  stubs (CC BY-SA) and SpamAssassin public-corpus mail (PDDL): all from a JSONL file of
  `{"id", "text"}` records whose ids are `pep/NNNN@REV`, `wiki15/ID`, `wiki18/ID`, `spam/ID`.

Usage: scripts/demo_library.py --debs DIR_WITH_DEBS --corpus CORPUS.jsonl [--out ZIP]

The output is deterministic for the same inputs. Each host holds at most PAGES_PER_HOST pages,
so the demo's crawl, paced at the default one request per second per host, ends in seconds:
the web is wide (many hosts), not deep, as the web a topic draws from is.
"""

import argparse
import html
import json
import re
import subprocess
import tempfile
import zipfile
from pathlib import Path

PAGES_PER_HOST = 10

GUIDES = [
    # (host, package, folder inside the package, page files in crawl order)
    ("maint-guide.debian.example", "maint-guide", "usr/share/doc/maint-guide/html",
     ["index.en.html", "start.en.html", "first.en.html", "modify.en.html", "dreq.en.html",
      "dother.en.html", "build.en.html", "checkit.en.html", "upload.en.html", "update.en.html"]),
    ("maint-guide-ru.debian.example", "maint-guide-ru", "usr/share/doc/maint-guide-ru/html",
     ["index.ru.html", "start.ru.html", "first.ru.html", "modify.ru.html", "dreq.ru.html",
      "dother.ru.html", "build.ru.html", "checkit.ru.html", "upload.ru.html", "update.ru.html"]),
    ("faq.debian.example", "debian-faq", "usr/share/doc/debian/FAQ",
     ["index.en.html", "basic-defs.en.html", "getting-debian.en.html", "choosing.en.html",
      "compatibility.en.html", "software.en.html", "pkg-basics.en.html", "pkgtools.en.html",
      "uptodate.en.html", "redistributing.en.html"]),
    ("faq-ru.debian.example", "debian-faq-ru", "usr/share/doc/debian/FAQ/ru",
     ["index.ru.html", "basic-defs.ru.html", "getting-debian.ru.html", "choosing.ru.html",
      "compatibility.ru.html", "software.ru.html", "pkg-basics.ru.html", "pkgtools.ru.html",
      "uptodate.ru.html", "redistributing.ru.html"]),
    ("devref.debian.example", "developers-reference", "usr/share/developers-reference",
     ["index.html", "scope.html", "new-maintainer.html", "developer-duties.html",
      "resources.html", "pkgs.html", "best-pkging-practices.html", "beyond-pkging.html",
      "l10n.html", "tools.html"]),
    ("devref-ru.debian.example", "developers-reference-ru", "usr/share/developers-reference/ru",
     ["index.html", "scope.html", "new-maintainer.html", "developer-duties.html",
      "resources.html", "pkgs.html", "best-pkging-practices.html", "beyond-pkging.html",
      "l10n.html", "tools.html"]),
    ("packaging.ubuntu.example", "ubuntu-packaging-guide-html",
     "usr/share/doc/ubuntu-packaging-guide-html",
     ["index.html", "introduction-to-ubuntu-development.html", "getting-set-up.html",
      "fixing-a-bug.html", "packaging-new-software.html", "patches-to-packages.html",
      "fixing-ftbfs.html", "libraries.html", "debian-dir-overview.html", "chroots.html"]),
    ("packaging-ru.ubuntu.example", "ubuntu-packaging-guide-html-ru",
     "usr/share/doc/ubuntu-packaging-guide-html-ru",
     ["index.html", "introduction-to-ubuntu-development.html", "getting-set-up.html",
      "fixing-a-bug.html", "packaging-new-software.html", "patches-to-packages.html",
      "fixing-ftbfs.html", "libraries.html", "debian-dir-overview.html", "chroots.html"]),
]

# Mirrors republish a guide byte for byte: every page is a duplicate of the original's.
MIRRORS = [
    ("debian-mirror.example", "maint-guide.debian.example"),
    ("mirror.yandex-ru.example", "faq-ru.debian.example"),
]

# Whole-guide documents beside the HTML: each chapter page is contained in them.
DOCUMENTS = [
    ("maint-guide.debian.example", "maint-guide", "usr/share/doc/maint-guide/maint-guide.en.pdf",
     "maint-guide.en.pdf"),
    ("packaging-ru.ubuntu.example", "ubuntu-packaging-guide-epub-ru",
     "usr/share/doc/ubuntu-packaging-guide-epub-ru/ubuntu-packaging-guide.epub",
     "ubuntu-packaging-guide.epub"),
]

PEP_HOSTS = ["peps.python.example", "packaging.python.example", "docs.pypa.example",
             "wiki.python.example", "pep-index.example", "pyfound.example",
             "pythonhosted.example", "pypi-blog.example", "pep-archive.example",
             "python-ideas.example", "planet-python.example", "pycon-blog.example"]
# Older revisions of the same PEPs: rewrites, some near-duplicates of the current text.
PEP_HISTORY_HOSTS = ["legacy.python.example", "hg.python.example", "svn.python.example",
                     "cvs.python.example", "web-archive.example"]
PEP_WORDS_MAX = 4000
# PEPs that say "package" this often are about packaging, most of them.
PEP_MENTIONS_MIN = 5

OFF_TOPIC_HOST = "encyclopedia.example"
STUB_HOST = "stubs.example"
MAIL_HOST = "lists.example"
OFF_TOPIC_WORDS_MAX = 900

PAGE = """<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title></head>
<body><header><nav><a href="index.html">{site}</a></nav></header>
<main><article><h1>{title}</h1>
{body}
</article></main>
<footer><p>{site}. Texts are reproduced under their original licences. Cookies help us run this site.</p></footer>
</body></html>
"""


HREF = re.compile(rb'(<a\b[^>]*?)\s+href="([^"]*)"', re.IGNORECASE)


def without_dead_links(page: bytes, served) -> bytes:
    """The page with links to pages the bundle leaves out unlinked (their text stays): each
    host serves part of a guide, and a crawler's request for a missing page costs a second of
    the host's pace."""
    def keep(m):
        target = m.group(2).decode("utf-8", "replace")
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith(("#", "/")):
            return m.group(0)
        path = target.split("#", 1)[0].split("?", 1)[0]
        if path.startswith("./"):
            path = path[2:]
        return m.group(0) if path == "" or path in served else m.group(1)
    return HREF.sub(keep, page)


def deb_root(debs: Path, package: str, tmp: Path) -> Path:
    """The unpacked tree of a package (a .deb in `debs`, or an already unpacked folder)."""
    unpacked = debs / package
    if unpacked.is_dir():
        return unpacked
    found = sorted(debs.glob(f"{package}_*.deb"))
    if not found:
        raise SystemExit(f"{debs}: no {package}_*.deb (apt-get download {package})")
    out = tmp / package
    subprocess.run(["dpkg-deb", "-x", str(found[0]), str(out)], check=True)
    return out


def paragraphs(text: str) -> str:
    # PEPs separate paragraphs by blank lines; the encyclopedia's plain text by line breaks.
    split = r"\n\s*\n" if re.search(r"\n\s*\n", text) else r"\n"
    blocks = [b.strip() for b in re.split(split, text) if b.strip()]
    return "\n".join(f"<p>{html.escape(b)}</p>" for b in blocks)


def rendered(site: str, title: str, text: str, lang: str = "en") -> bytes:
    return PAGE.format(lang=lang, site=site, title=html.escape(title),
                       body=paragraphs(text)).encode()


def index_page(site: str, title: str, links) -> bytes:
    items = "\n".join(f'<li><a href="{href}">{html.escape(t)}</a></li>' for href, t in links)
    return PAGE.format(lang="en", site=site, title=html.escape(title),
                       body=f"<ul>\n{items}\n</ul>").encode()


def first_words(text: str, limit: int) -> str:
    """The text cut after the paragraph that reaches `limit` words."""
    out, words = [], 0
    for line in text.split("\n"):
        out.append(line)
        words += len(line.split())
        if words >= limit:
            break
    return "\n".join(out).strip()


def pep_title(text: str) -> str:
    m = re.search(r"PEP:\s*(\d+)\s+Title:\s*(.+?)\s+(?:Version|Author|Last-Modified):", text)
    return f"PEP {int(m.group(1))} – {m.group(2)}" if m else text.split("\n", 1)[0][:80]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--debs", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("src/demo/library/library.zip"))
    args = ap.parse_args()

    files = {}  # "host/path" -> bytes
    starts = {}  # host -> start path

    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for host, package, folder, pages in GUIDES:
            root = deb_root(args.debs, package, tmp) / folder
            for name in pages:
                files[f"{host}/{name}"] = without_dead_links((root / name).read_bytes(), set(pages))
            starts[host] = "/" + pages[0]
            # Sphinx's search page and sources are not for robots.
            files[f"{host}/robots.txt"] = (
                "User-agent: *\nDisallow: /search.html\nDisallow: /_sources/\n").encode()
        for host, package, path, name in DOCUMENTS:
            files[f"{host}/{name}"] = (deb_root(args.debs, package, tmp) / path).read_bytes()
            # The documents are listed in the site's sitemap, as sites list downloads.
            # `{base}` is the host's address, filled in by the server that serves the file.
            files[f"{host}/robots.txt"] += b"Sitemap: {base}/sitemap.xml\n"
            files[f"{host}/sitemap.xml"] = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                f"<url><loc>{{base}}/{name}</loc></url></urlset>\n").encode()
        for mirror, original in MIRRORS:
            for key in [k for k in files if k.startswith(original + "/")]:
                rest = key[len(original) + 1:]
                if rest.endswith(".html"):
                    files[f"{mirror}/{rest}"] = files[key]
            starts[mirror] = starts[original]
            # A mirror that keeps robots out of its archive of old releases.
            files[f"{mirror}/robots.txt"] = b"User-agent: *\nDisallow: /archive/\n"

    records = [json.loads(line) for line in args.corpus.open(encoding="utf-8")]

    def packaging_mentions(text: str) -> int:
        return len(re.findall(r"\b[Pp]ackag(?:e|es|ing)\b", text))

    peps = [r for r in records if r["id"].startswith("pep/")
            and packaging_mentions(r["text"]) >= PEP_MENTIONS_MIN and len(r["text"].split()) < PEP_WORDS_MAX]
    by_number = {}
    for r in peps:
        by_number.setdefault(r["id"].split("@")[0], []).append(r)
    current, history = [], []
    for number in sorted(by_number):
        revs = by_number[number]
        current.append(revs[0])
        history.extend(revs[1:])
    capacity = PAGES_PER_HOST - 1  # the index page takes one slot
    if len(current) > capacity * len(PEP_HOSTS) or len(history) > capacity * len(PEP_HISTORY_HOSTS):
        raise SystemExit("more PEPs than the PEP hosts hold: add hosts")

    def publish(hosts, docs, site_title, revision_in_path):
        for i, host in enumerate(hosts):
            share = docs[i::len(hosts)]
            if not share:
                continue
            links = []
            for r in share:
                number, revision = r["id"].split("/")[1].split("@")
                path = f"pep-{number}-{revision}.html" if revision_in_path else f"pep-{number}.html"
                title = pep_title(r["text"])
                files[f"{host}/{path}"] = rendered(host, title, r["text"])
                links.append((path, title))
            files[f"{host}/index.html"] = index_page(host, site_title, links)
            starts[host] = "/index.html"

    current.sort(key=lambda r: r["id"])
    publish(PEP_HOSTS, current, "Python Enhancement Proposals on packaging", False)
    publish(PEP_HISTORY_HOSTS, history, "Earlier revisions of packaging PEPs", True)

    def pick(prefix, keep, count):
        chosen = [r for r in records if r["id"].startswith(prefix) and keep(r["text"])]
        chosen.sort(key=lambda r: r["id"])
        return chosen[:count]

    animals = re.compile(r"\b(animals?|species|mammals?|birds?)\b")
    off_topic = pick("wiki15/", lambda t: len(animals.findall(t)) >= 8 and packaging_mentions(t) == 0,
                     capacity)
    stubs = pick("wiki18/", lambda t: 8 <= len(t.split()) < 25, capacity)
    mail = pick("spam/", lambda t: 40 <= len(t.split()) < 400 and packaging_mentions(t) == 0, capacity)
    for host, docs, title in [(OFF_TOPIC_HOST, off_topic, "Encyclopedia"),
                              (STUB_HOST, stubs, "Article stubs"),
                              (MAIL_HOST, mail, "Mailing-list archive")]:
        links = []
        for n, r in enumerate(docs):
            text = first_words(r["text"], OFF_TOPIC_WORDS_MAX)
            path = f"page-{n + 1}.html"
            title = text.split("\n", 1)[0][:80]
            files[f"{host}/{path}"] = rendered(host, title, text)
            links.append((path, title))
        files[f"{host}/index.html"] = index_page(host, title, links)
        starts[host] = "/index.html"

    for key in files:
        host = key.split("/", 1)[0]
        pages = [k for k in files if k.startswith(host + "/") and not k.endswith((".txt", ".xml"))]
        if len(pages) > PAGES_PER_HOST + len(DOCUMENTS):
            raise SystemExit(f"{host}: {len(pages)} pages, more than {PAGES_PER_HOST}")

    manifest = {"starts": dict(sorted(starts.items()))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(args.out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        z.writestr(zipfile.ZipInfo("manifest.json", (2024, 1, 1, 0, 0, 0)),
                   json.dumps(manifest, indent=1, ensure_ascii=False), zipfile.ZIP_DEFLATED)
        for key in sorted(files):
            info = zipfile.ZipInfo(key, (2024, 1, 1, 0, 0, 0))
            z.writestr(info, files[key], zipfile.ZIP_DEFLATED)
    print(f"{args.out}: {len(files)} files on {len(starts)} hosts, "
          f"{args.out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
