//! DOCX: the body part `word/document.xml`, one paragraph per `w:p`. Headers, footers and
//! footnotes live in parts of their own and are not read: the page furniture of a word
//! processor is left out by construction.

use super::xml::{walk, Step};
use super::{DocumentFailure, Zip};

pub(super) fn paragraphs(zip: &mut Zip<'_>) -> Result<Vec<String>, DocumentFailure> {
    const BODY: &str = "word/document.xml";
    let xml = zip.text(BODY)?;
    let mut out = Vec::new();
    // A text box holds paragraphs inside a paragraph: each open `w:p` has its own buffer.
    let mut open: Vec<String> = Vec::new();
    let mut in_text = false;
    walk(BODY, &xml, |step| {
        match step {
            Step::Open { name, .. } => match name {
                b"p" => open.push(String::new()),
                b"t" => in_text = true,
                b"tab" | b"br" | b"cr" => push(&mut open, " "),
                b"noBreakHyphen" => push(&mut open, "-"),
                _ => {}
            },
            Step::Close(name) => match name {
                b"p" => {
                    if let Some(p) = open.pop() {
                        out.push(p);
                    }
                }
                b"t" => in_text = false,
                _ => {}
            },
            // Only `w:t` holds the author's text; deleted runs (`w:delText`) and field codes
            // (`w:instrText`) are other elements and stay out.
            Step::Text(t) if in_text => push(&mut open, t),
            Step::Text(_) => {}
        }
        Ok(())
    })?;
    Ok(out)
}

fn push(open: &mut [String], s: &str) {
    if let Some(p) = open.last_mut() {
        p.push_str(s);
    }
}
