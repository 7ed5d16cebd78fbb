//! EPUB: the chapters the package's spine lists, in reading order, each XHTML file parsed by
//! `crate::markup::parse_html` (the one guarded HTML parse) and read block by block.

use super::xml::{attr, walk, Step};
use super::{DocumentFailure, Zip};
use crate::markup;
use scraper::{ElementRef, Node};

/// More chapters than any book has: a package listing more is not read past it.
const MAX_CHAPTERS: usize = 10_000;

pub(super) fn paragraphs(zip: &mut Zip<'_>) -> Result<Vec<String>, DocumentFailure> {
    const CONTAINER: &str = "META-INF/container.xml";
    let mut opf_path = None;
    walk(CONTAINER, &zip.text(CONTAINER)?, |step| {
        if let Step::Open {
            name: b"rootfile",
            attrs,
            ..
        } = step
        {
            if opf_path.is_none() {
                opf_path = attr(attrs, b"full-path");
            }
        }
        Ok(())
    })?;
    let opf_path = opf_path.ok_or_else(|| {
        DocumentFailure::Corrupt(format!("{CONTAINER} names no package (rootfile)"))
    })?;
    let chapters = spine(&opf_path, &zip.text(&opf_path)?)?;
    // DRM lists the encrypted files in encryption.xml; font obfuscation lists only fonts, so
    // only a listed chapter makes the book unreadable.
    if zip.has("META-INF/encryption.xml") {
        let enc = zip.text("META-INF/encryption.xml")?;
        if chapters.iter().any(|c| enc.contains(c.as_str())) {
            return Err(DocumentFailure::Encrypted);
        }
    }
    let mut out = Vec::new();
    for chapter in chapters.iter().take(MAX_CHAPTERS) {
        let xhtml = zip.text(chapter)?;
        let doc = markup::parse_html(&xhtml, &markup::Limits::PAGE)
            .map_err(|e| DocumentFailure::TooComplex(format!("chapter {chapter}: {e}")))?;
        let mut cur = String::new();
        blocks(doc.root_element(), &mut cur, &mut out);
        flush(&mut cur, &mut out);
    }
    Ok(out)
}

/// Zip paths of the spine's XHTML items, in reading order.
fn spine(opf_path: &str, opf: &str) -> Result<Vec<String>, DocumentFailure> {
    let mut items: Vec<(String, String, String)> = Vec::new();
    let mut order: Vec<String> = Vec::new();
    walk(opf_path, opf, |step| {
        if let Step::Open { name, attrs, .. } = step {
            match name {
                b"item" => {
                    if let (Some(id), Some(href)) = (attr(attrs, b"id"), attr(attrs, b"href")) {
                        let media = attr(attrs, b"media-type").unwrap_or_default();
                        items.push((id, href, media));
                    }
                }
                b"itemref" => {
                    if let Some(id) = attr(attrs, b"idref") {
                        order.push(id);
                    }
                }
                _ => {}
            }
        }
        Ok(())
    })?;
    let base = opf_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let chapters: Vec<String> = order
        .iter()
        .filter_map(|id| items.iter().find(|(i, _, _)| i == id))
        .filter(|(_, _, media)| media.contains("html") || media.is_empty())
        .map(|(_, href, _)| resolve(base, href))
        .collect();
    if chapters.is_empty() {
        return Err(DocumentFailure::Corrupt(format!(
            "{opf_path}: the spine lists no XHTML chapter"
        )));
    }
    Ok(chapters)
}

/// `href` (relative to the package's folder `base`, percent-encoded, maybe with a fragment)
/// as a zip path.
fn resolve(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or_default();
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for p in href.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    percent_decode(&parts.join("/"))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied(), b.get(i + 2).copied()) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Elements that end a paragraph before and after them.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "li"
            | "blockquote"
            | "pre"
            | "section"
            | "article"
            | "header"
            | "footer"
            | "aside"
            | "table"
            | "tr"
            | "td"
            | "th"
            | "dt"
            | "dd"
            | "figcaption"
            | "body"
    )
}

/// Appends the text under `el` to `cur`, closing a paragraph at each block boundary. The
/// parse's nesting guard bounds the recursion.
fn blocks(el: ElementRef<'_>, cur: &mut String, out: &mut Vec<String>) {
    for child in el.children() {
        match child.value() {
            Node::Text(t) => cur.push_str(t),
            Node::Element(e) => {
                let name = e.name();
                if matches!(name, "head" | "script" | "style" | "nav" | "rt" | "rp") {
                    continue;
                }
                if name == "br" {
                    cur.push(' ');
                    continue;
                }
                let Some(child_el) = ElementRef::wrap(child) else {
                    continue;
                };
                let block = is_block(name);
                if block {
                    flush(cur, out);
                }
                blocks(child_el, cur, out);
                if block {
                    flush(cur, out);
                }
            }
            _ => {}
        }
    }
}

fn flush(cur: &mut String, out: &mut Vec<String>) {
    if !cur.trim().is_empty() {
        out.push(std::mem::take(cur));
    } else {
        cur.clear();
    }
}
