//! What the zip formats share: walking an XML part with quick-xml, entity references resolved.

use super::DocumentFailure;
use quick_xml::events::Event;

/// One step through an XML part, reduced to what text extraction needs.
pub(super) enum Step<'a> {
    /// An opening tag, by local name, with its attributes (`<x/>` is an open and a close).
    Open {
        name: &'a [u8],
        attrs: &'a quick_xml::events::BytesStart<'a>,
    },
    /// A closing tag, by local name.
    Close(&'a [u8]),
    /// Character data, references resolved.
    Text(&'a str),
}

/// Calls `f` for each step of `xml`; a malformed part is `corrupt`, naming `part` and the
/// byte offset.
pub(super) fn walk(
    part: &str,
    xml: &str,
    mut f: impl FnMut(Step<'_>) -> Result<(), DocumentFailure>,
) -> Result<(), DocumentFailure> {
    let mut r = quick_xml::Reader::from_str(xml);
    let corrupt = |pos: u64, e: &dyn std::fmt::Display| {
        DocumentFailure::Corrupt(format!("{part}: malformed XML at byte {pos}: {e}"))
    };
    loop {
        let ev = r
            .read_event()
            .map_err(|e| corrupt(r.error_position(), &e))?;
        match ev {
            Event::Start(e) => f(Step::Open {
                name: e.local_name().into_inner(),
                attrs: &e,
            })?,
            Event::Empty(e) => {
                f(Step::Open {
                    name: e.local_name().into_inner(),
                    attrs: &e,
                })?;
                f(Step::Close(e.local_name().into_inner()))?;
            }
            Event::End(e) => f(Step::Close(e.local_name().into_inner()))?,
            Event::Text(t) => {
                let s = t.decode().map_err(|e| corrupt(r.buffer_position(), &e))?;
                f(Step::Text(&s))?
            }
            Event::CData(t) => f(Step::Text(&String::from_utf8_lossy(&t)))?,
            Event::GeneralRef(g) => {
                let resolved = match g.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => g.decode().ok().and_then(|n| {
                        quick_xml::escape::resolve_predefined_entity(&n).map(str::to_string)
                    }),
                };
                if let Some(s) = resolved {
                    f(Step::Text(&s))?
                }
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

/// The value of attribute `name` (local name, any prefix), unescaped.
pub(super) fn attr(e: &quick_xml::events::BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}
