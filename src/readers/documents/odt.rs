//! ODT: the body part `content.xml`, one paragraph per `text:p` or `text:h`. Page headers and
//! footers live in `styles.xml` and are not read. Notes (`text:note`) are left out: their text
//! would land in the middle of the sentence that cites them.

use super::xml::{attr, walk, Step};
use super::{DocumentFailure, Zip};

pub(super) fn paragraphs(zip: &mut Zip<'_>) -> Result<Vec<String>, DocumentFailure> {
    const BODY: &str = "content.xml";
    if zip.has("META-INF/manifest.xml")
        && zip
            .text("META-INF/manifest.xml")?
            .contains("encryption-data")
    {
        return Err(DocumentFailure::Encrypted);
    }
    let xml = zip.text(BODY)?;
    let mut out = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut in_body = false;
    let mut skip_depth = 0usize;
    walk(BODY, &xml, |step| {
        match step {
            Step::Open { name, attrs, .. } => {
                // `walk` closes empty elements too, so every open is matched by a close.
                if skip_depth > 0 || matches!(name, b"note" | b"tracked-changes") {
                    skip_depth += 1;
                    return Ok(());
                }
                match name {
                    b"body" => in_body = true,
                    b"p" | b"h" if in_body => open.push(String::new()),
                    b"s" => {
                        let n = attr(attrs, b"c")
                            .and_then(|c| c.parse::<usize>().ok())
                            .unwrap_or(1)
                            .min(64);
                        push(&mut open, &" ".repeat(n));
                    }
                    b"tab" | b"line-break" => push(&mut open, " "),
                    _ => {}
                }
            }
            Step::Close(name) => {
                if skip_depth > 0 {
                    skip_depth -= 1;
                    return Ok(());
                }
                match name {
                    b"body" => in_body = false,
                    b"p" | b"h" if in_body => {
                        if let Some(p) = open.pop() {
                            out.push(p);
                        }
                    }
                    _ => {}
                }
            }
            Step::Text(t) if skip_depth == 0 => push(&mut open, t),
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
