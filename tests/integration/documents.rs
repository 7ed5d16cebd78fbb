//! Documents (PDF, DOCX, ODT, EPUB) through the real binary: from a local folder by extension
//! and from a loopback site by content type. The files are the real ones bundled in
//! tests/fixtures/documents (see its SOURCE.md).

use std::collections::HashMap;

use collect::demo::loopback::{Reply, Response};
use serde_json::Value;

use crate::common::*;

fn document(name: &str) -> Vec<u8> {
    std::fs::read(fixture(&format!("documents/{name}"))).unwrap()
}

fn text_of(out: &std::path::Path, row: &Value) -> String {
    let id = row["id"].as_str().unwrap();
    std::fs::read_to_string(out.join("docs").join(format!("{id}.txt"))).unwrap()
}

#[test]
fn a_folder_of_documents_gives_texts_and_every_failure_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let input = root.join("in");
    std::fs::create_dir(&input).unwrap();
    let names = [
        "aardvark.pdf",
        "aardvark.docx",
        "aardvark.odt",
        "aardvark.epub",
        "aardvark-paged.pdf",
        "litva.docx",
        "encrypted.pdf",
        "scanned.pdf",
        "truncated.pdf",
        "truncated.docx",
    ];
    for n in names {
        std::fs::write(input.join(n), document(n)).unwrap();
    }
    write(
        root,
        "topic.yaml",
        "name: documents\nlanguages: [en, ru]\nsources:\n  - {kind: local, name: files, path: in}\n",
    );
    let o = run_ok(root, &["build", "topic.yaml", "--out", "out"]);
    let err = stderr(&o);
    let out = root.join("out");
    let rows = manifest(&out);
    let row = |name: &str| -> Value {
        rows.iter()
            .find(|r| r["locator"] == name)
            .unwrap_or_else(|| panic!("{name} has no row: {rows:#?}"))
            .clone()
    };
    for n in names {
        let ext = n.rsplit('.').next().unwrap();
        assert_eq!(row(n)["format"], ext, "{n}");
    }
    for (n, reason) in [
        ("encrypted.pdf", "encrypted"),
        ("scanned.pdf", "no-text"),
        ("truncated.pdf", "corrupt"),
        ("truncated.docx", "corrupt"),
    ] {
        let r = row(n);
        assert_eq!(
            (r["status"].as_str(), r["reason"].as_str()),
            (Some("filtered"), Some(reason)),
            "{n}"
        );
        // The line on stderr names the file and what broke.
        assert!(err.contains(n), "{n} not named on stderr:\n{err}");
    }
    let litva = row("litva.docx");
    assert_eq!(litva["status"], "kept");
    assert!(text_of(&out, &litva).contains("Лито́вская Респу́блика"));
    // The four office renderings of one article are one text: one kept, the rest duplicates
    // of it; the kept text has the article's paragraphs. (The groff-set paged PDF is not among
    // them: pdf-extract loses words and spaces on its justified lines, README "Documents".)
    let aardvarks: Vec<Value> = names[..4].iter().map(|n| row(n)).collect();
    let kept: Vec<&Value> = aardvarks.iter().filter(|r| r["status"] == "kept").collect();
    assert_eq!(kept.len(), 1, "{aardvarks:#?}");
    for r in &aardvarks {
        assert!(r["status"] == "kept" || r["status"] == "duplicate", "{r}");
    }
    let text = text_of(&out, kept[0]);
    assert!(
        text.contains("The aardvark is sometimes colloquially called \"African ant bear\""),
        "{text}"
    );
    // The export carries the format too.
    let o = run_ok(root, &["export", "out", "--format", "jsonl"]);
    let exported = json_lines(&stdout(&o));
    assert!(
        exported.iter().any(|r| r["format"] == "docx"),
        "{exported:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_serving_a_pdf_and_a_docx_gives_kept_documents() {
    let mut pages: HashMap<&str, Reply> = HashMap::new();
    pages.insert(
        "/robots.txt",
        Response::new(200, "text/plain", "User-agent: *\n").into(),
    );
    pages.insert(
        "/papers/aardvark",
        Response::new(200, "application/pdf", document("aardvark.pdf")).into(),
    );
    pages.insert(
        "/papers/litva",
        Response::new(
            200,
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            document("litva.docx"),
        )
        .into(),
    );
    let site = site_of(pages).await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    write(
        &root,
        "topic.yaml",
        &format!(
            "name: papers\n\
             languages: [en, ru]\n\
             keywords: [aardvark, Литва]\n\
             sources:\n\
             \x20 - {{kind: sites, name: papers, depth: 0, urls: [\"{}\", \"{}\"]}}\n\
             crawl: {{allow_private: true, per_host_rps: 50, max_body_bytes: 1048576}}\n",
            site.url("/papers/aardvark"),
            site.url("/papers/litva")
        ),
    );
    let out = root.join("out");
    let o = tokio::task::spawn_blocking({
        let root = root.clone();
        move || run_ok(&root, &["build", "topic.yaml", "--out", "out", "--quiet"])
    })
    .await
    .unwrap();
    drop(o);
    let rows = manifest(&out);
    for (path, format, needle) in [
        (
            "/papers/aardvark",
            "pdf",
            "The aardvark is sometimes colloquially called",
        ),
        ("/papers/litva", "docx", "Лито́вская Респу́блика"),
    ] {
        let u = site.url(path);
        let r = rows
            .iter()
            .find(|r| r["url"] == u.as_str())
            .unwrap_or_else(|| panic!("{u} has no row: {rows:#?}"));
        assert_eq!(
            (r["status"].as_str(), r["format"].as_str()),
            (Some("kept"), Some(format)),
            "{r}"
        );
        assert!(text_of(&out, r).contains(needle), "{path}");
    }
}
