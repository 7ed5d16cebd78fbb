//! Rules that pick contained pairs of the review queue by their figures, for bulk decisions
//! (`review decide --where`) and the topic's standing rules: `cont >= 0.9 and words < 300`,
//! `source == "wiki" or shared < 40`, `not (res > 0.5)`.
//!
//! Its own top-level module, importing nothing, because the topic file (which holds standing
//! rules and refuses a bad one when it loads) and the review (which applies them) both need it.
//!
//! A small grammar of its own rather than a general expression crate: the fields are a closed
//! list with a meaning each, a typo must be refused naming the column it starts at, and `and`,
//! `or`, `not` read as the issue tracker and the topic file write them.

use serde::Serialize;
use std::fmt;

/// The figures of a pair a rule can test; one row of the review queue.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// Containment of the contained text in its container.
    pub cont: f64,
    /// Resemblance of the two texts.
    pub res: f64,
    /// Words of the contained text (what a `drop-contained` decision removes).
    pub words: u64,
    /// Words of the container.
    pub container_words: u64,
    /// Shingles the two texts share (the signature intersection).
    pub shared: u64,
    /// Source of the contained text.
    pub source: &'a str,
    /// Source of the container.
    pub container_source: &'a str,
    /// Whether the scores come from full shingle indexes.
    pub verified: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Cont,
    Res,
    Words,
    ContainerWords,
    Shared,
    Source,
    ContainerSource,
    Verified,
}

/// The field names a rule may use, as the error message and `--help` list them.
pub const FIELDS: &str =
    "cont, res, words, container_words, shared, source, container_source, verified";

impl Field {
    fn parse(name: &str) -> Option<Field> {
        Some(match name {
            "cont" | "containment" => Field::Cont,
            "res" | "resemblance" => Field::Res,
            "words" => Field::Words,
            "container_words" => Field::ContainerWords,
            "shared" => Field::Shared,
            "source" => Field::Source,
            "container_source" => Field::ContainerSource,
            "verified" => Field::Verified,
            _ => return None,
        })
    }

    fn is_text(self) -> bool {
        matches!(self, Field::Source | Field::ContainerSource)
    }

    fn number(self, f: &Facts) -> f64 {
        match self {
            Field::Cont => f.cont,
            Field::Res => f.res,
            Field::Words => f.words as f64,
            Field::ContainerWords => f.container_words as f64,
            Field::Shared => f.shared as f64,
            Field::Verified => f64::from(u8::from(f.verified)),
            Field::Source | Field::ContainerSource => f64::NAN,
        }
    }

    fn text<'a>(self, f: &Facts<'a>) -> &'a str {
        match self {
            Field::ContainerSource => f.container_source,
            _ => f.source,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Number(f64),
    Text(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Compare(Field, Op, Value),
    /// A bare field name: true when the field is non-zero (`verified`).
    Truthy(Field),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    fn eval(&self, f: &Facts) -> bool {
        match self {
            Expr::Truthy(field) => field.number(f) != 0.0,
            Expr::Not(e) => !e.eval(f),
            Expr::And(a, b) => a.eval(f) && b.eval(f),
            Expr::Or(a, b) => a.eval(f) || b.eval(f),
            Expr::Compare(field, op, Value::Text(t)) => {
                let v = field.text(f);
                match op {
                    Op::Eq => v == t,
                    _ => v != t,
                }
            }
            Expr::Compare(field, op, Value::Number(n)) => {
                let v = field.number(f);
                match op {
                    Op::Lt => v < *n,
                    Op::Le => v <= *n,
                    Op::Gt => v > *n,
                    Op::Ge => v >= *n,
                    // Scores are stored rounded nowhere, but a curator types 0.5 for a stored
                    // 0.49999999: equality tolerates what a printed figure hides.
                    Op::Eq => (v - n).abs() < 1e-9,
                    Op::Ne => (v - n).abs() >= 1e-9,
                }
            }
        }
    }
}

/// A parsed rule with the text it was written as.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    text: String,
    #[serde(skip)]
    expr: Expr,
}

/// Why a rule's text is not a rule; `column` counts characters from 1.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleError {
    /// 1-based character column where the problem starts.
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for RuleError {}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Rule, D::Error> {
        let text = String::deserialize(d)?;
        Rule::parse(&text).map_err(|e| serde::de::Error::custom(format!("rule `{text}`: {e}")))
    }
}

impl Rule {
    /// Parses a rule.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let tokens = lex(text)?;
        let mut p = Parser {
            tokens: &tokens,
            at: 0,
            end: text.chars().count() + 1,
        };
        let expr = p.or()?;
        if let Some(t) = p.tokens.get(p.at) {
            return Err(RuleError {
                column: t.column,
                message: format!("unexpected `{}` (expected `and`, `or` or the end)", t.kind),
            });
        }
        Ok(Rule {
            text: text.trim().to_string(),
            expr,
        })
    }

    /// Whether a pair matches.
    pub fn matches(&self, facts: &Facts) -> bool {
        self.expr.eval(facts)
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Word(String),
    Number(f64),
    Text(String),
    Op(Op),
    Open,
    Close,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Word(w) => f.write_str(w),
            Kind::Number(n) => write!(f, "{n}"),
            Kind::Text(t) => write!(f, "\"{t}\""),
            Kind::Op(op) => f.write_str(match op {
                Op::Lt => "<",
                Op::Le => "<=",
                Op::Gt => ">",
                Op::Ge => ">=",
                Op::Eq => "==",
                Op::Ne => "!=",
            }),
            Kind::Open => f.write_str("("),
            Kind::Close => f.write_str(")"),
        }
    }
}

struct Token {
    kind: Kind,
    column: usize,
}

fn lex(text: &str) -> Result<Vec<Token>, RuleError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        let err = |message: String| Err(RuleError { column, message });
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let kind = if c == '(' {
            i += 1;
            Kind::Open
        } else if c == ')' {
            i += 1;
            Kind::Close
        } else if "<>=!".contains(c) {
            let two = chars.get(i + 1) == Some(&'=');
            let op = match (c, two) {
                ('<', false) => Op::Lt,
                ('<', true) => Op::Le,
                ('>', false) => Op::Gt,
                ('>', true) => Op::Ge,
                ('=', _) => Op::Eq,
                ('!', true) => Op::Ne,
                _ => return err("`!` must be followed by `=` (write `not` to negate)".into()),
            };
            i += 1 + usize::from(two);
            Kind::Op(op)
        } else if c == '"' || c == '\'' {
            let Some(len) = chars[i + 1..].iter().position(|&q| q == c) else {
                return err(format!("the text starting here has no closing {c}"));
            };
            let s: String = chars[i + 1..i + 1 + len].iter().collect();
            i += len + 2;
            Kind::Text(s)
        } else if c.is_ascii_digit() || c == '.' || c == '-' {
            let len = chars[i..]
                .iter()
                .position(|&d| !(d.is_ascii_digit() || d == '.' || d == 'e' || d == '-'))
                .unwrap_or(chars.len() - i);
            let s: String = chars[i..i + len].iter().collect();
            let Ok(n) = s.parse::<f64>() else {
                return err(format!("`{s}` is not a number"));
            };
            i += len;
            Kind::Number(n)
        } else if c.is_alphabetic() || c == '_' {
            let len = chars[i..]
                .iter()
                .position(|&d| !(d.is_alphanumeric() || d == '_' || d == '-'))
                .unwrap_or(chars.len() - i);
            let s: String = chars[i..i + len].iter().collect();
            i += len;
            Kind::Word(s)
        } else {
            return err(format!("unexpected character `{c}`"));
        };
        out.push(Token { kind, column });
    }
    Ok(out)
}

struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    /// Column just past the text, where "expected …, found the end" points.
    end: usize,
}

impl Parser<'_> {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token { kind: Kind::Word(x), .. }) if x.eq_ignore_ascii_case(w))
    }

    fn next(&mut self, expected: &str) -> Result<&Token, RuleError> {
        let t = self.tokens.get(self.at).ok_or_else(|| RuleError {
            column: self.end,
            message: format!("expected {expected}, found the end of the rule"),
        })?;
        self.at += 1;
        Ok(t)
    }

    fn or(&mut self) -> Result<Expr, RuleError> {
        let mut left = self.and()?;
        while self.peek_word("or") {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, RuleError> {
        let mut left = self.not()?;
        while self.peek_word("and") {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, RuleError> {
        if self.peek_word("not") {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.term()
    }

    fn term(&mut self) -> Result<Expr, RuleError> {
        let t = self.next("a field or `(`")?;
        let column = t.column;
        let name = match &t.kind {
            Kind::Open => {
                let e = self.or()?;
                let close = self.next("`)`")?;
                if close.kind != Kind::Close {
                    return Err(RuleError {
                        column: close.column,
                        message: format!("expected `)`, found `{}`", close.kind),
                    });
                }
                return Ok(e);
            }
            Kind::Word(w) => w.clone(),
            other => {
                return Err(RuleError {
                    column,
                    message: format!("expected a field ({FIELDS}), found `{other}`"),
                })
            }
        };
        let field = Field::parse(&name).ok_or_else(|| RuleError {
            column,
            message: format!("unknown field `{name}` (fields: {FIELDS})"),
        })?;
        let op = match self.tokens.get(self.at) {
            Some(Token {
                kind: Kind::Op(op), ..
            }) => *op,
            _ if field.is_text() => {
                return Err(RuleError {
                    column,
                    message: format!("`{name}` is a text: compare it, e.g. `{name} == \"wiki\"`"),
                })
            }
            _ => return Ok(Expr::Truthy(field)),
        };
        self.at += 1;
        let v = self.next("a value")?;
        let value = match (&v.kind, field.is_text()) {
            (Kind::Number(n), false) => Value::Number(*n),
            (Kind::Word(w), false) if w == "true" || w == "false" => {
                Value::Number(f64::from(u8::from(w == "true")))
            }
            (Kind::Text(s) | Kind::Word(s), true) => Value::Text(s.clone()),
            (k, true) => {
                return Err(RuleError {
                    column: v.column,
                    message: format!("`{name}` is a text, `{k}` is not (quote it)"),
                })
            }
            (k, false) => {
                return Err(RuleError {
                    column: v.column,
                    message: format!("`{name}` is a number, `{k}` is not"),
                })
            }
        };
        if field.is_text() && !matches!(op, Op::Eq | Op::Ne) {
            return Err(RuleError {
                column,
                message: format!("`{name}` is a text: only `==` and `!=` compare it"),
            });
        }
        Ok(Expr::Compare(field, op, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> Facts<'static> {
        Facts {
            cont: 0.93,
            res: 0.2,
            words: 120,
            container_words: 900,
            shared: 45,
            source: "wiki",
            container_source: "crawl",
            verified: true,
        }
    }

    fn eval(rule: &str) -> bool {
        Rule::parse(rule).unwrap().matches(&facts())
    }

    #[test]
    fn the_issue_example_and_precedence() {
        assert!(eval("cont >= 0.9 and words < 300"));
        assert!(!eval("cont >= 0.95 and words < 300"));
        // `and` binds tighter than `or`.
        assert!(eval("cont > 0.99 or words < 300 and shared >= 45"));
        assert!(!eval("(cont > 0.99 or words < 300) and shared > 45"));
        assert!(eval("not res > 0.5 and verified"));
        assert!(!eval("not verified"));
        assert!(eval("verified == true and container_words = 900"));
    }

    #[test]
    fn texts_compare_by_equality() {
        assert!(eval("source == \"wiki\""));
        assert!(eval("source == 'wiki' and container_source != wiki"));
        assert!(!eval("container_source == \"wiki\""));
    }

    #[test]
    fn mistakes_name_their_column() {
        let e = Rule::parse("cont >= 0.9 and wrds < 300").unwrap_err();
        assert_eq!(e.column, 17);
        assert!(e.message.contains("unknown field `wrds`"), "{e}");
        let e = Rule::parse("cont >=").unwrap_err();
        assert_eq!(e.column, 8);
        assert!(e.message.contains("end of the rule"), "{e}");
        let e = Rule::parse("source > \"a\"").unwrap_err();
        assert!(e.message.contains("only `==` and `!=`"), "{e}");
        let e = Rule::parse("words < many").unwrap_err();
        assert_eq!(e.column, 9);
        let e = Rule::parse("(cont > 0.5").unwrap_err();
        assert!(e.message.contains("`)`"), "{e}");
        let e = Rule::parse("cont > 0.5 words < 3").unwrap_err();
        assert_eq!(e.column, 12);
        assert!(Rule::parse("source").is_err());
        assert!(Rule::parse("").is_err());
    }
}
