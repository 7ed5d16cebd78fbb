//! The flat pre-order arena every later pass loops over, so that deeply
//! nested input cannot overflow the stack, and the page metadata collected
//! while it is built.

use super::hints::{class_hint, element_hint, names_hint, HINT_HARD};
use super::jsonld::json_strings_for_key;
use super::whitespace::{count_chars, lowercase_words};
use scraper::{Html, Node};

/// How an element affects text layout and scoring.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    Text,
    Inline,
    Link,
    Br,
    Block,
    Para,
    Heading(u8),
    ListItem,
    List,
    Cell,
    Row,
    Table,
    Pre,
}

pub(super) struct ANode<'a> {
    pub(super) parent: u32,
    /// Exclusive end of this node's subtree in pre-order.
    pub(super) end: u32,
    pub(super) kind: Kind,
    pub(super) text: &'a str,
    pub(super) el: Option<&'a scraper::node::Element>,
    pub(super) in_link: bool,
    /// Tag/role hint: negative for boilerplate, positive for content.
    pub(super) hint: i8,
    /// Class/id hint, same scale.
    pub(super) class_hint: i8,
    pub(super) removed: bool,
    /// Non-whitespace characters of text below, before removal.
    pub(super) raw_chars: u32,
    /// The same, outside links only.
    pub(super) raw_text_chars: u32,
    pub(super) chars: u32,
    pub(super) link_chars: u32,
    links: u32,
}

pub(super) struct Page<'a> {
    pub(super) nodes: Vec<ANode<'a>>,
    pub(super) body: u32,
    pub(super) title_tag: Option<String>,
    pub(super) og_title: Option<String>,
    pub(super) site_name: Option<String>,
    /// Longest `articleBody` found in JSON-LD, as decoded text.
    pub(super) ld_body: Option<String>,
    /// `og:description` or `description` meta tag.
    pub(super) description: Option<String>,
    /// Whether class names and weak tags were trusted by the last
    /// `mark_boilerplate`.
    pub(super) use_class: bool,
    /// The arena element holding each field that asks for an e-mail address or phone number.
    pub(super) contact_fields: Vec<u32>,
}

fn tag_kind(name: &str) -> Option<Kind> {
    Some(match name {
        "script" | "style" | "template" | "svg" | "math" | "iframe" | "object" | "embed"
        | "canvas" | "video" | "audio" | "select" | "option" | "button" | "input" | "textarea"
        | "link" | "meta" | "img" | "picture" | "source" | "map" | "datalist" | "dialog"
        | "title" | "base" | "track" | "param" => return None,
        "a" => Kind::Link,
        "br" | "wbr" => Kind::Br,
        "p" => Kind::Para,
        "h1" => Kind::Heading(1),
        "h2" => Kind::Heading(2),
        "h3" => Kind::Heading(3),
        "h4" => Kind::Heading(4),
        "h5" => Kind::Heading(5),
        "h6" => Kind::Heading(6),
        "li" | "dt" | "dd" => Kind::ListItem,
        "ul" | "ol" | "dl" | "menu" => Kind::List,
        "td" | "th" => Kind::Cell,
        "tr" => Kind::Row,
        "table" => Kind::Table,
        "pre" | "listing" | "xmp" | "plaintext" => Kind::Pre,
        "span" | "b" | "i" | "em" | "strong" | "u" | "s" | "strike" | "small" | "big" | "sub"
        | "sup" | "code" | "kbd" | "samp" | "var" | "tt" | "mark" | "abbr" | "acronym" | "cite"
        | "dfn" | "q" | "time" | "label" | "font" | "bdi" | "bdo" | "ins" | "del" | "data"
        | "output" | "meter" | "progress" | "ruby" | "rt" | "rp" | "nobr" | "blink" | "slot" => {
            Kind::Inline
        }
        _ => Kind::Block,
    })
}

/// A visible field for an e-mail address or a phone number: what a newsletter or text-message
/// sign-up, a login or a comment form asks for, and an article never does. A phone field is
/// known by its name or label, not its type, which also serves ZIP codes a keypad.
fn is_contact_field(el: &scraper::node::Element) -> bool {
    let kind = el.attr("type").map(str::trim);
    if kind.is_some_and(|t| t.eq_ignore_ascii_case("email")) {
        return true;
    }
    let typed =
        kind.is_none_or(|t| t.eq_ignore_ascii_case("text") || t.eq_ignore_ascii_case("tel"));
    typed
        && ["name", "id", "placeholder", "aria-label", "autocomplete"]
            .iter()
            .any(|a| {
                el.attr(a).is_some_and(|v| {
                    let v = v.to_ascii_lowercase();
                    v.contains("email") || v.contains("e-mail") || v.contains("phone")
                })
            })
}

/// A button that opens a panel of the page (`aria-controls`, `aria-expanded`) with a question
/// on it: an FAQ's question, whose answer is the panel. Other buttons ("Menu", "Share", "Load
/// more") say what they do, and the titles of tabs and of a feature list's panels
/// ("Agents work smarter, not harder") are labels of the page's layout.
fn is_disclosure_question(button: scraper::ElementRef<'_>) -> bool {
    let el = button.value();
    if el.attr("aria-controls").is_none() && el.attr("aria-expanded").is_none() {
        return false;
    }
    let text: String = button.text().collect();
    text.trim_end().ends_with(['?', '？'])
}

/// Only markup that is hidden for good counts: content behind `display:none`
/// is usually a collapsed tab, accordion or "read more" that the reader opens.
fn is_hidden(el: &scraper::node::Element) -> bool {
    // React streaming rendering parks the real content in `<div hidden
    // id="S:0">` until a script moves it into place.
    // A closed tab panel is content the reader opens with one click.
    if el.attr("hidden").is_some()
        && !el.id().is_some_and(|id| id.starts_with("S:"))
        && el.attr("role") != Some("tabpanel")
    {
        return true;
    }
    el.attr("class").is_some_and(|class| {
        class.split_ascii_whitespace().any(|c| {
            matches!(
                c,
                "sr-only"
                    | "u-srOnly"
                    | "visually-hidden"
                    | "visuallyhidden"
                    | "screen-reader-text"
            )
        })
    })
}

impl<'a> Page<'a> {
    pub(super) fn build(doc: &'a Html) -> Page<'a> {
        let mut page = Page {
            nodes: Vec::new(),
            body: 0,
            title_tag: None,
            og_title: None,
            site_name: None,
            ld_body: None,
            description: None,
            use_class: true,
            contact_fields: Vec::new(),
        };
        let root = doc.tree.root();
        page.nodes.push(ANode {
            parent: 0,
            end: 0,
            kind: Kind::Block,
            text: "",
            el: None,
            in_link: false,
            hint: 0,
            class_hint: 0,
            removed: false,
            raw_chars: 0,
            raw_text_chars: 0,
            chars: 0,
            link_chars: 0,
            links: 0,
        });
        // Arena index of each open DOM ancestor, so `end` can be set on close.
        let mut stack: Vec<u32> = vec![0];
        let mut link_depth = 0u32;
        let mut body_found = false;
        let mut disclosures = Vec::new();
        let mut cur = root.first_child();
        while let Some(node) = cur {
            let mut descend = false;
            match node.value() {
                Node::Text(t) => {
                    let parent = *stack.last().unwrap_or(&0);
                    page.nodes.push(ANode {
                        parent,
                        end: page.nodes.len() as u32 + 1,
                        kind: Kind::Text,
                        text: t,
                        el: None,
                        in_link: link_depth > 0,
                        hint: 0,
                        class_hint: 0,
                        removed: false,
                        raw_chars: 0,
                        raw_text_chars: 0,
                        chars: 0,
                        link_chars: 0,
                        links: 0,
                    });
                }
                Node::Element(el) => {
                    let name = el.name();
                    match name {
                        "title" if page.title_tag.is_none() => {
                            let t: String = node
                                .children()
                                .filter_map(|c| c.value().as_text().map(|t| &**t))
                                .collect();
                            page.title_tag = Some(t);
                        }
                        "meta" => {
                            let key = el.attr("property").or_else(|| el.attr("name"));
                            match key.map(|k| k.to_ascii_lowercase()).as_deref() {
                                Some("og:title") if page.og_title.is_none() => {
                                    page.og_title = el.attr("content").map(str::to_string);
                                }
                                Some("og:site_name") if page.site_name.is_none() => {
                                    page.site_name = el.attr("content").map(str::to_string);
                                }
                                // Sites cut some of these short: keep the longest.
                                Some("og:description" | "description" | "twitter:description") => {
                                    if let Some(c) = el.attr("content") {
                                        if page
                                            .description
                                            .as_ref()
                                            .is_none_or(|d| d.len() < c.len())
                                        {
                                            page.description = Some(c.to_string());
                                        }
                                    }
                                }
                                _ => {}
                            }
                        }
                        "script"
                            if el.attr("type").is_some_and(|t| {
                                t.trim().eq_ignore_ascii_case("application/ld+json")
                            }) =>
                        {
                            for c in node.children() {
                                if let Some(t) = c.value().as_text() {
                                    for body in json_strings_for_key(t, "\"articleBody\"") {
                                        let longer = page
                                            .ld_body
                                            .as_ref()
                                            .is_none_or(|b| b.len() < body.len());
                                        if longer {
                                            page.ld_body = Some(body);
                                        }
                                    }
                                }
                            }
                        }
                        "input" if is_contact_field(el) => {
                            page.contact_fields.push(*stack.last().unwrap_or(&0));
                        }
                        _ => {}
                    }
                    let kind = match name {
                        "button"
                            if scraper::ElementRef::wrap(node)
                                .is_some_and(is_disclosure_question) =>
                        {
                            disclosures.push(page.nodes.len() as u32);
                            Some(Kind::Block)
                        }
                        _ => tag_kind(name),
                    };
                    if let Some(kind) = kind {
                        if !is_hidden(el) {
                            let idx = page.nodes.len() as u32;
                            let parent = *stack.last().unwrap_or(&0);
                            if name == "body" && !body_found {
                                body_found = true;
                                page.body = idx;
                            }
                            page.nodes.push(ANode {
                                parent,
                                end: idx + 1,
                                kind,
                                text: "",
                                el: Some(el),
                                in_link: false,
                                hint: element_hint(name, el),
                                class_hint: class_hint(name, el),
                                removed: false,
                                raw_chars: 0,
                                raw_text_chars: 0,
                                chars: 0,
                                link_chars: 0,
                                links: 0,
                            });
                            if node.has_children() {
                                stack.push(idx);
                                if kind == Kind::Link {
                                    link_depth += 1;
                                }
                                descend = true;
                            }
                        }
                    }
                }
                Node::Document | Node::Fragment => descend = node.has_children(),
                _ => {}
            }
            if descend {
                if matches!(node.value(), Node::Document | Node::Fragment) {
                    stack.push(*stack.last().unwrap_or(&0));
                }
                cur = node.first_child();
                continue;
            }
            // Climb until a next sibling exists, closing the elements left behind.
            let mut n = node;
            loop {
                if let Some(s) = n.next_sibling() {
                    cur = Some(s);
                    break;
                }
                match n.parent() {
                    Some(p) if p.id() != root.id() => {
                        if let Some(idx) = stack.pop() {
                            let end = page.nodes.len() as u32;
                            page.nodes[idx as usize].end = end;
                            if page.nodes[idx as usize].kind == Kind::Link {
                                link_depth = link_depth.saturating_sub(1);
                            }
                        }
                        n = p;
                    }
                    _ => {
                        cur = None;
                        break;
                    }
                }
            }
        }
        let len = page.nodes.len() as u32;
        page.nodes[0].end = len;
        for idx in stack {
            let n = &mut page.nodes[idx as usize];
            n.end = n.end.max(len);
        }
        page.unname_section_anchors();
        page.drop_disclosures_without_panel(&disclosures);
        page
    }

    /// A disclosure question whose panel is not on the page (hidden, or loaded by a script
    /// when opened) has no answer: marked for removal like boilerplate.
    fn drop_disclosures_without_panel(&mut self, buttons: &[u32]) {
        if buttons.is_empty() {
            return;
        }
        let panels: std::collections::HashSet<&str> = self
            .nodes
            .iter()
            .filter_map(|n| n.el.and_then(|el| el.id()))
            .collect();
        for &b in buttons {
            let n = &self.nodes[b as usize];
            let answered = match n.el.and_then(|el| el.attr("aria-controls")) {
                Some(ids) => ids.split_ascii_whitespace().any(|id| panels.contains(id)),
                None => self.text_follows(b),
            };
            if !answered {
                self.nodes[b as usize].hint = HINT_HARD;
            }
        }
    }

    /// Whether the element after node `i` (or after the heading `i` is the text of) is text:
    /// where a disclosure's panel sits when no `aria-controls` names it.
    fn text_follows(&self, i: u32) -> bool {
        let mut at = i as usize;
        let p = self.nodes[at].parent as usize;
        // A heading by its tag, or by its role where a page builder makes one of a `<p>`.
        let role = |el: &scraper::node::Element| el.attr("role") == Some("heading");
        if p != 0
            && (matches!(self.nodes[p].kind, Kind::Heading(_))
                || self.nodes[p].el.is_some_and(role))
        {
            at = p;
        }
        let has_text = |n: &ANode| n.kind == Kind::Text && !n.text.trim().is_empty();
        let mut next = self.nodes[at].end as usize;
        while let Some(sibling) = self.nodes.get(next) {
            if sibling.parent != self.nodes[at].parent {
                return false;
            }
            if sibling.kind != Kind::Text {
                return self.nodes[next..sibling.end as usize].iter().any(has_text);
            }
            if has_text(sibling) {
                return true;
            }
            next += 1;
        }
        false
    }

    /// A section's id made from its heading's words ("client-side-certificates" on the section
    /// headed "Client Side Certificates") is an anchor for a table of contents, as a heading's
    /// own id is, not a name for a part of the page.
    fn unname_section_anchors(&mut self) {
        /// How far into a section its heading may start (the heading and its anchor link).
        const HEADING_WITHIN: usize = 4;
        for i in 1..self.nodes.len() {
            let n = &self.nodes[i];
            let Some(el) = n.el else { continue };
            if n.class_hint >= 0 {
                continue;
            }
            let Some(id) = el.attr("id") else { continue };
            let end = (n.end as usize).min(i + 1 + HEADING_WITHIN);
            let Some(h) = (i + 1..end).find(|&j| matches!(self.nodes[j].kind, Kind::Heading(_)))
            else {
                continue;
            };
            let heading: String = (h..self.nodes[h].end as usize)
                .map(|j| self.nodes[j].text)
                .collect();
            if same_words(id, &heading) {
                self.nodes[i].class_hint = names_hint(el, false);
            }
        }
    }

    /// Sums text sizes bottom-up; removed subtrees count as empty.
    pub(super) fn compute_sizes(&mut self) {
        for n in self.nodes.iter_mut() {
            n.chars = 0;
            n.link_chars = 0;
            n.links = 0;
        }
        for i in (1..self.nodes.len()).rev() {
            let (chars, link_chars, links, removed, parent) = {
                let n = &mut self.nodes[i];
                if n.kind == Kind::Text && !n.removed {
                    n.chars = count_chars(n.text);
                    if n.in_link {
                        n.link_chars = n.chars;
                    }
                }
                if n.kind == Kind::Link && !n.removed {
                    n.links += 1;
                }
                (n.chars, n.link_chars, n.links, n.removed, n.parent)
            };
            if removed {
                continue;
            }
            let p = &mut self.nodes[parent as usize];
            p.chars += chars;
            p.link_chars += link_chars;
            p.links += links;
        }
    }
}

/// Whether two strings hold the same words, ignoring case and everything between words.
fn same_words(a: &str, b: &str) -> bool {
    let a = lowercase_words(a);
    !a.is_empty() && a == lowercase_words(b)
}
