#!/usr/bin/env python3
"""Writes the web-archive fixtures of tests/fixtures/warc/ from pages the repository bundles.

Needs warcio (`pip install warcio`); the tests read the files it writes and need no Python.
Run from the repository root:  python3 scripts/make_warc_fixtures.py
"""
import gzip
import io
import os

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "tests", "fixtures")
OUT = os.path.join(FIX, "warc")

PAGES = [
    ("https://docs.python.org/3/library/os.path.html", "html-pages/python_docs_os_path.html",
     "text/html; charset=utf-8", "2024-03-01T10:00:00Z"),
    ("https://stackoverflow.com/questions/1/q", "html-pages/stackoverflow_question.html",
     "text/html; charset=utf-8", "2024-03-01T10:00:05Z"),
    ("https://en.wikipedia.org/wiki/Aardvark", "wikitext-articles/enwiki_Aardvark.reference.txt",
     "text/plain; charset=utf-8", "2024-03-02T11:30:00Z"),
    ("https://ru.wikipedia.org/wiki/Litva", "wikitext-articles/ruwiki_Litva.reference.txt",
     "text/plain; charset=utf-8", "2024-03-02T11:31:00Z"),
]


def read(rel):
    with open(os.path.join(FIX, rel), "rb") as f:
        return f.read()


def write_warc(path, gzip_records):
    with open(path, "wb") as out:
        w = WARCWriter(out, gzip=gzip_records)
        w.write_record(w.create_warcinfo_record(os.path.basename(path), {
            "software": "warcio (scripts/make_warc_fixtures.py)",
            "format": "WARC File Format 1.1",
        }))
        for url, rel, ctype, date in PAGES:
            body = read(rel)
            req = w.create_warc_record(
                url, "request",
                payload=io.BytesIO(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                warc_headers_dict={"WARC-Date": date},
            )
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype),
                                               ("Content-Length", str(len(body)))],
                                    protocol="HTTP/1.1")
            resp = w.create_warc_record(url, "response", payload=io.BytesIO(body),
                                        http_headers=http,
                                        warc_headers_dict={"WARC-Date": date})
            w.write_record(req)
            w.write_record(resp)
        # A redirect and a PDF: a response that is no document, and a format another reader reads.
        http = StatusAndHeaders("301 Moved Permanently", [("Location", "https://example.org/")],
                                protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("https://example.org/old", "response",
                                            payload=io.BytesIO(b""), http_headers=http,
                                            warc_headers_dict={"WARC-Date": "2024-03-03T00:00:00Z"}))
        pdf = b"%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n"
        http = StatusAndHeaders("200 OK", [("Content-Type", "application/pdf"),
                                           ("Content-Length", str(len(pdf)))],
                                protocol="HTTP/1.1")
        w.write_record(w.create_warc_record("https://example.org/paper.pdf", "response",
                                            payload=io.BytesIO(pdf), http_headers=http,
                                            warc_headers_dict={"WARC-Date": "2024-03-03T00:00:01Z"}))


def write_wet(path):
    with open(path, "wb") as out:
        w = WARCWriter(out, gzip=True)
        w.write_record(w.create_warcinfo_record(os.path.basename(path), {
            "software": "warcio (scripts/make_warc_fixtures.py)"}))
        for url, rel, _, date in PAGES[2:]:
            text = read(rel)
            w.write_record(w.create_warc_record(
                url, "conversion", payload=io.BytesIO(text),
                warc_content_type="text/plain",
                warc_headers_dict={"WARC-Date": date}))


def members(data):
    """Byte offsets of the gzip members of a file gzipped per record."""
    offs, pos = [], 0
    while pos < len(data):
        offs.append(pos)
        d = __import__("zlib").decompressobj(31)
        d.decompress(data[pos:])
        pos = len(data) - len(d.unused_data)
    return offs


def main():
    os.makedirs(OUT, exist_ok=True)
    warc_gz = os.path.join(OUT, "pages.warc.gz")
    write_warc(warc_gz, True)
    write_warc(os.path.join(OUT, "pages.warc"), False)
    write_wet(os.path.join(OUT, "articles.wet.gz"))
    data = open(warc_gz, "rb").read()
    offs = members(data)
    # Members: 0 warcinfo, then request/response pairs: 1-2 python docs, 3-4 stackoverflow,
    # 5-6 Aardvark, 7-8 Litva, 9 redirect, 10 PDF.
    bad = os.path.join(OUT, "corrupt")
    os.makedirs(bad, exist_ok=True)
    # The stackoverflow response member cut in half: the reader resyncs at the next member.
    cut = data[:offs[4]] + data[offs[4]:offs[5]][: (offs[5] - offs[4]) // 2] + data[offs[5]:]
    open(os.path.join(bad, "truncated-member.warc.gz"), "wb").write(cut)
    # Garbage between the Aardvark request and response members.
    junk = b"this is not gzip \x00\x01\x02 at all\n" * 20
    open(os.path.join(bad, "garbage-between.warc.gz"), "wb").write(
        data[:offs[6]] + junk + data[offs[6]:])
    # The python docs response member recompressed with a Content-Length 100 bytes short.
    rec = gzip.decompress(data[offs[2]:offs[3]])
    head, _, block = rec.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    lines = [b"Content-Length: %d" % (int(l.split(b":")[1]) - 100)
             if l.lower().startswith(b"content-length:") else l for l in lines]
    wrong = gzip.compress(b"\r\n".join(lines) + b"\r\n\r\n" + block, mtime=0)
    open(os.path.join(bad, "wrong-length.warc.gz"), "wb").write(
        data[:offs[2]] + wrong + data[offs[3]:])
    # The uncompressed archive with its first response's header line mangled.
    plain = open(os.path.join(OUT, "pages.warc"), "rb").read()
    i = plain.index(b"WARC-Type: response")
    open(os.path.join(bad, "bad-header.warc"), "wb").write(
        plain[:i] + b"WARC-Type response (no colon)" + plain[i + len(b"WARC-Type: response"):])
    print("members of pages.warc.gz at", offs)


if __name__ == "__main__":
    main()
