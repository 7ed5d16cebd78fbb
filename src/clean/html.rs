//! HTML pages: drop non-content elements on the DOM, then take the text block by block.

use super::{tidy_paragraphs, Cleaner};
use scraper::{ElementRef, Html, Node, Selector};

/// Cleaner for HTML bodies.
pub struct HtmlCleaner;

const SKIP: &[&str] = &[
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "canvas",
    "iframe",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "button",
    "select",
    "figure",
    "figcaption",
    "menu",
];

const BLOCK: &[&str] = &[
    "p",
    "div",
    "section",
    "article",
    "main",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "table",
    "tr",
    "blockquote",
    "pre",
    "br",
    "hr",
    "tbody",
    "thead",
];

impl Cleaner for HtmlCleaner {
    fn clean(&self, body: &str, _url: Option<&str>) -> (Option<String>, String) {
        let doc = Html::parse_document(body);
        let title = Selector::parse("title")
            .ok()
            .and_then(|s| doc.select(&s).next())
            .map(|t| t.text().collect::<String>().trim().to_string())
            .filter(|t| !t.is_empty());
        let root = Selector::parse("body")
            .ok()
            .and_then(|s| doc.select(&s).next())
            .unwrap_or_else(|| doc.root_element());
        let mut out = String::new();
        // Explicit stack: hostile pages nest deeper than the call stack allows.
        let mut stack: Vec<(ego_tree::NodeRef<'_, Node>, bool)> = vec![(*root, false)];
        while let Some((node, closing)) = stack.pop() {
            if let Some(el) = ElementRef::wrap(node) {
                let name = el.value().name();
                let block = BLOCK.contains(&name);
                let cell = name == "td" || name == "th";
                if closing {
                    if block {
                        out.push_str("\n\n");
                    } else if cell {
                        out.push(' ');
                    }
                    continue;
                }
                if SKIP.contains(&name) || el.value().attr("hidden").is_some() {
                    continue;
                }
                if block {
                    out.push_str("\n\n");
                }
                stack.push((node, true));
                let children: Vec<_> = node.children().collect();
                for c in children.into_iter().rev() {
                    stack.push((c, false));
                }
            } else if let Node::Text(t) = node.value() {
                out.push_str(t);
            }
        }
        (title, tidy_paragraphs(&out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_chrome_and_keeps_blocks_apart() {
        let html = "<html><head><title>T</title><style>x{}</style></head><body>\
            <nav>Home | About</nav><h1>Head</h1><p>One <b>two</b></p><ul><li>a</li><li>b</li></ul>\
            <table><tr><td>c</td><td>d</td></tr></table><footer>© me</footer></body></html>";
        let (title, text) = HtmlCleaner.clean(html, None);
        assert_eq!(title.as_deref(), Some("T"));
        assert_eq!(text, "Head\n\nOne two\n\na\n\nb\n\nc d");
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let html = "<div>".repeat(5_000) + "deep" + &"</div>".repeat(5_000);
        let (_, text) = HtmlCleaner.clean(&html, None);
        assert_eq!(text, "deep");
    }
}
