use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/documents")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The reference text the fixtures were made from, as paragraphs on one line each.
fn reference_paragraphs() -> Vec<String> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/wikitext-articles/enwiki_Aardvark.reference.txt");
    let t = std::fs::read_to_string(p).unwrap();
    t.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect()
}

fn text_of(name: &str) -> String {
    let f = DocFormat::from_name(name).unwrap();
    document_text(f, &fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn office_formats_keep_every_paragraph_as_written() {
    let want = reference_paragraphs();
    for name in ["aardvark.docx", "aardvark.odt", "aardvark.epub"] {
        let text = text_of(name);
        let got: Vec<&str> = text.split("\n\n").collect();
        for p in &want {
            assert!(got.contains(&p.as_str()), "{name}: paragraph missing: {p}");
        }
        // EPUB adds the title page pandoc writes; nothing else.
        assert!(
            got.len() <= want.len() + 2,
            "{name}: {} paragraphs",
            got.len()
        );
    }
}

#[test]
fn cyrillic_docx_reads() {
    let text = text_of("litva.docx");
    assert!(
        text.contains("\n\nЛитва́ (Lietuva), официальное название — Лито́вская Респу́блика"),
        "{}",
        &text[..300]
    );
}

#[test]
fn office_pdf_keeps_paragraphs() {
    let text = text_of("aardvark.pdf");
    let paras: Vec<&str> = text.split("\n\n").collect();
    let want = reference_paragraphs();
    let first = paras
        .iter()
        .find(|p| p.starts_with("The aardvark ("))
        .unwrap();
    assert_eq!(*first, want[0]);
    assert!(paras.len() >= 20, "{} paragraphs", paras.len());
}

#[test]
fn paged_pdf_loses_its_furniture_and_joins_hyphenated_words() {
    let text = text_of("aardvark-paged.pdf");
    for furniture in ["Encyclopaedia of Mammals", "Page 1", "Page 3"] {
        assert!(!text.contains(furniture), "furniture left: {furniture}");
    }
    // groff broke these words at line ends: "Un-/like", "mam-/malian".
    assert!(text.contains("known. Unlike"), "{}", &text[..600]);
    assert!(text.contains("mammalian order"));
    assert!(!text.contains("Un- like") && !text.contains("Un-like"));
    assert!(text.starts_with("The aardvark ( ARD-vark; Orycteropus afer) is a medium"));
    // A paragraph cut by a page break and a running header goes on after them.
    assert!(text.contains("throughout Europe and the Near East."));
    // Ligatures are letters again.
    assert!(text.contains("superficial") && !text.contains('\u{FB01}'));
}

#[test]
fn furniture_is_told_from_text_by_repetition_at_the_page_edges() {
    let words = ["cats", "dogs", "owls", "bats"];
    let pages: Vec<String> = (1..=4)
        .map(|n| {
            let w = words[n - 1];
            format!("Journal of Tests, vol. 3\n\nOn {w}: a para-\ngraph on {w}.\n\n{n}\n")
        })
        .collect();
    let paras = pdf::paragraphs_of_pages(&pages);
    let want: Vec<String> = words
        .iter()
        .map(|w| format!("On {w}: a paragraph on {w}."))
        .collect();
    assert_eq!(paras, want);
    // A single page keeps its first line: nothing recurs.
    let one = pdf::paragraphs_of_pages(&pages[..1]);
    assert_eq!(one[0], "Journal of Tests, vol. 3");
}

#[test]
fn failures_have_their_reasons() {
    let cases = [
        ("encrypted.pdf", "encrypted"),
        ("scanned.pdf", "no-text"),
        ("truncated.pdf", "corrupt"),
        ("truncated.docx", "corrupt"),
    ];
    for (name, reason) in cases {
        let f = DocFormat::from_name(name).unwrap();
        let e = document_text(f, &fixture(name)).unwrap_err();
        assert_eq!(e.reason(), reason, "{name}: {e}");
    }
    // Bytes of one format named as another, and nothing at all.
    let e = document_text(DocFormat::Epub, &fixture("aardvark.docx")).unwrap_err();
    assert_eq!(e.reason(), "corrupt", "{e}");
    assert!(e.to_string().contains("META-INF/container.xml"), "{e}");
    for f in DocFormat::ALL {
        assert_eq!(document_text(f, b"").unwrap_err().reason(), "corrupt");
    }
}

#[test]
fn a_panicking_parser_is_corrupt_and_a_slow_one_too_complex() {
    let e = guarded(Duration::from_secs(5), vec![1], |_| panic!("hostile input")).unwrap_err();
    assert_eq!(e.reason(), "corrupt");
    assert!(e.to_string().contains("hostile input"), "{e}");
    let started = std::time::Instant::now();
    let e = guarded(Duration::from_millis(200), vec![1], |_| {
        std::thread::sleep(Duration::from_secs(3));
        Ok(String::new())
    })
    .unwrap_err();
    assert_eq!(e.reason(), "too-complex");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn hostile_pdfs_never_panic_the_caller() {
    // Real bytes cut and scrambled at many places: whatever the parser does, the caller gets
    // text or a reason.
    let pdf = fixture("aardvark.pdf");
    let mut seed = 11u32;
    for cut in (0..pdf.len()).step_by(pdf.len() / 12) {
        let mut b = pdf[..cut].to_vec();
        b.extend_from_slice(&pdf[cut..(cut + 4000).min(pdf.len())]);
        for x in b.iter_mut().skip(cut).take(200) {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            *x ^= (seed >> 16) as u8;
        }
        let _ = document_text(DocFormat::Pdf, &b);
    }
}

#[test]
fn a_zip_bomb_is_too_complex() {
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut w = zip::ZipWriter::new(&mut buf);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file("word/document.xml", opts).unwrap();
        std::io::Write::write_all(&mut w, &vec![b' '; 4 << 20]).unwrap();
        w.finish().unwrap();
    }
    let limits = DocLimits {
        max_unpacked: 1 << 20,
        ..DocLimits::DEFAULT
    };
    let e = document_text_within(DocFormat::Docx, buf.get_ref(), &limits).unwrap_err();
    assert_eq!(e.reason(), "too-complex", "{e}");
}

#[test]
fn formats_are_found_by_content_type_name_and_bytes() {
    for ct in crate::acquire::DOCUMENT_TYPES {
        assert!(DocFormat::from_content_type(ct).is_some(), "{ct}");
    }
    assert_eq!(
        DocFormat::from_content_type("Application/PDF; charset=binary"),
        Some(DocFormat::Pdf)
    );
    assert_eq!(DocFormat::from_name("a/B.EPUB"), Some(DocFormat::Epub));
    assert_eq!(DocFormat::from_name("a.txt"), None);
    for name in [
        "aardvark.pdf",
        "aardvark.docx",
        "aardvark.odt",
        "aardvark.epub",
    ] {
        assert_eq!(
            DocFormat::sniff(&fixture(name)),
            DocFormat::from_name(name),
            "{name}"
        );
    }
    assert_eq!(DocFormat::sniff(b"<html>"), None);
}
