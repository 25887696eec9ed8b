//! Parses `.usda` tokens into a [`Layer`]: prims with their metadata, attributes (default
//! values and `timeSamples`) and children, as written in the file (no composition).
//!
//! Read: `def`/`over`/`class` prims with optional type and metadata, attributes with
//! `custom`/`uniform`/`varying`/`config` qualifiers, `.timeSamples`, `.connect` and
//! `.spline` suffixes, relationships, list-op qualifiers (`prepend`, `append`, `add`,
//! `delete`, `reorder`), `variantSet` blocks (parsed, not applied) and dictionaries.
//! Nesting deeper than [`MAX_DEPTH`] is refused (a hostile file cannot overflow the stack).
use super::layer::{Attribute, Layer, Prim, Specifier, Value};
use super::lexer::{lex, Tok, Token};

/// Deepest nesting of prims, lists, tuples and dictionaries accepted.
pub const MAX_DEPTH: usize = 128;

/// A parse failure: line and what was expected.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// Line number (1-based; 0 at the end of the file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "at the end of the file: {}", self.message),
            l => write!(f, "line {l}: {}", self.message),
        }
    }
}

type PResult<T> = Result<T, ParseError>;

/// Parses the text of a `.usda` file. The first line must be the `#usda 1.0` header.
pub fn parse(text: &str) -> PResult<Layer> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text.strip_prefix("#usda ") else {
        return Err(ParseError {
            line: 1,
            message: "missing the '#usda 1.0' header: not a USD text file".into(),
        });
    };
    // Keep the line count: replace the header line by an empty one.
    let body = rest.find('\n').map_or("", |i| &rest[i..]);
    let tokens = lex(body).map_err(|e| ParseError {
        line: e.line,
        message: e.message,
    })?;
    let mut p = Parser {
        toks: tokens,
        pos: 0,
        depth: 0,
    };
    let metadata = if p.is_punct('(') {
        p.metadata()?
    } else {
        Vec::new()
    };
    let mut prims = Vec::new();
    while p.pos < p.toks.len() {
        match p.prim_item()? {
            Some(prim) => prims.push(prim),
            None => return p.top_level_error(),
        }
    }
    Ok(Layer { metadata, prims })
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    depth: usize,
}

const LIST_OPS: [&str; 5] = ["prepend", "append", "add", "delete", "reorder"];
const QUALIFIERS: [&str; 4] = ["custom", "uniform", "varying", "config"];

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.kind)
    }

    fn line(&self) -> usize {
        self.toks.get(self.pos).map_or(0, |t| t.line)
    }

    fn err<T>(&self, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            line: self.line(),
            message: message.into(),
        })
    }

    fn next(&mut self) -> PResult<Tok> {
        match self.toks.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok(t.kind.clone())
            }
            None => self.err("the file ends too early (truncated?)"),
        }
    }

    fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(w)) if w == word)
    }

    fn expect(&mut self, c: char) -> PResult<()> {
        if self.is_punct(c) {
            self.pos += 1;
            Ok(())
        } else {
            let found = describe(self.peek());
            self.err(format!("expected '{c}', found {found}"))
        }
    }

    fn ident(&mut self) -> PResult<String> {
        match self.next()? {
            Tok::Ident(s) => Ok(s),
            other => {
                self.pos -= 1;
                self.err(format!("expected a name, found {}", describe(Some(&other))))
            }
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("nesting deeper than {MAX_DEPTH} levels"));
        }
        Ok(())
    }

    /// `( entry* )`: metadata of the layer, a prim or an attribute.
    fn metadata(&mut self) -> PResult<Vec<(String, Value)>> {
        self.expect('(')?;
        self.enter()?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Punct(')')) => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Punct(';' | ',')) => self.pos += 1,
                Some(Tok::Str(s)) => {
                    // A bare string is the `doc` metadata.
                    out.push(("doc".to_string(), Value::Str(s.clone())));
                    self.pos += 1;
                }
                Some(Tok::Ident(_)) => {
                    let mut key = self.ident()?;
                    if LIST_OPS.contains(&key.as_str())
                        && matches!(self.peek(), Some(Tok::Ident(_)))
                    {
                        key = self.ident()?;
                    }
                    self.expect('=')?;
                    let v = self.value()?;
                    out.push((key, v));
                }
                other => {
                    let found = describe(other);
                    return self.err(format!("expected metadata or ')', found {found}"));
                }
            }
        }
        self.depth -= 1;
        Ok(out)
    }

    /// A prim (`def|over|class`), or `None` if the next statement is something else.
    fn prim_item(&mut self) -> PResult<Option<Prim>> {
        let specifier = match self.peek() {
            Some(Tok::Ident(w)) if w == "def" => Specifier::Def,
            Some(Tok::Ident(w)) if w == "over" => Specifier::Over,
            Some(Tok::Ident(w)) if w == "class" => Specifier::Class,
            _ => return Ok(None),
        };
        let line = self.line();
        self.pos += 1;
        let type_name = match self.peek() {
            Some(Tok::Ident(_)) => self.ident()?,
            _ => String::new(),
        };
        let name = match self.next()? {
            Tok::Str(s) => s,
            other => {
                self.pos -= 1;
                return self.err(format!(
                    "expected the prim's quoted name, found {}",
                    describe(Some(&other))
                ));
            }
        };
        let metadata = if self.is_punct('(') {
            self.metadata()?
        } else {
            Vec::new()
        };
        let mut prim = Prim {
            specifier,
            type_name,
            name,
            metadata,
            attributes: Vec::new(),
            children: Vec::new(),
            line,
        };
        self.prim_body(&mut prim)?;
        Ok(Some(prim))
    }

    /// `{ item* }` of a prim.
    fn prim_body(&mut self, prim: &mut Prim) -> PResult<()> {
        self.expect('{')?;
        self.enter()?;
        loop {
            if self.is_punct('}') {
                self.pos += 1;
                break;
            }
            if self.is_punct(';') {
                self.pos += 1;
                continue;
            }
            if let Some(child) = self.prim_item()? {
                prim.children.push(child);
            } else if self.is_ident("variantSet") {
                self.variant_set()?;
            } else {
                self.property(prim)?;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// `variantSet "name" = { "variant" (meta)? { body } ... }`: parsed and dropped.
    fn variant_set(&mut self) -> PResult<()> {
        self.pos += 1;
        if !matches!(self.next()?, Tok::Str(_)) {
            self.pos -= 1;
            return self.err("expected the variant set's quoted name");
        }
        self.expect('=')?;
        self.expect('{')?;
        self.enter()?;
        while !self.is_punct('}') {
            if !matches!(self.next()?, Tok::Str(_)) {
                self.pos -= 1;
                return self.err("expected a quoted variant name");
            }
            let mut scratch = Prim {
                specifier: Specifier::Over,
                type_name: String::new(),
                name: String::new(),
                metadata: Vec::new(),
                attributes: Vec::new(),
                children: Vec::new(),
                line: self.line(),
            };
            if self.is_punct('(') {
                self.metadata()?;
            }
            self.prim_body(&mut scratch)?;
        }
        self.pos += 1;
        self.depth -= 1;
        Ok(())
    }

    /// An attribute or relationship line.
    fn property(&mut self, prim: &mut Prim) -> PResult<()> {
        let line = self.line();
        let mut word = self.ident()?;
        if word == "reorder" {
            // `reorder nameChildren = [...]` / `reorder properties = [...]`
            self.ident()?;
            self.expect('=')?;
            self.value()?;
            return Ok(());
        }
        while LIST_OPS.contains(&word.as_str()) || QUALIFIERS.contains(&word.as_str()) {
            word = self.ident()?;
        }
        let mut type_name = word;
        let is_rel = type_name == "rel";
        if !is_rel && self.is_punct('[') {
            self.pos += 1;
            self.expect(']')?;
            type_name.push_str("[]");
        }
        let name = self.ident()?;
        let mut suffix = None;
        if self.is_punct('.') {
            self.pos += 1;
            suffix = Some(self.ident()?);
        }
        let index = match prim.attributes.iter().position(|a| a.name == name) {
            Some(i) => i,
            None => {
                prim.attributes.push(Attribute {
                    name: name.clone(),
                    type_name: type_name.clone(),
                    ..Attribute::default()
                });
                prim.attributes.len() - 1
            }
        };
        match suffix.as_deref() {
            None => {
                if self.is_punct('=') {
                    self.pos += 1;
                    let v = self.value()?;
                    prim.attributes[index].default = Some(v);
                }
            }
            Some("timeSamples") => {
                self.expect('=')?;
                let samples = self.time_samples()?;
                prim.attributes[index].time_samples = Some(samples);
            }
            Some("connect") | Some("default") => {
                self.expect('=')?;
                self.value()?;
            }
            Some("spline") => {
                self.expect('=')?;
                self.skip_balanced()?;
            }
            Some(other) => {
                return Err(ParseError {
                    line,
                    message: format!("unknown property suffix '.{other}' on '{name}'"),
                })
            }
        }
        if self.is_punct('(') {
            let meta = self.metadata()?;
            prim.attributes[index].metadata.extend(meta);
        }
        Ok(())
    }

    /// `{ time: value, ... }`.
    fn time_samples(&mut self) -> PResult<Vec<(f64, Value)>> {
        self.expect('{')?;
        self.enter()?;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                Tok::Punct('}') => break,
                Tok::Punct(',') => {}
                Tok::Num(t) => {
                    self.expect(':')?;
                    let v = self.value()?;
                    out.push((t, v));
                }
                other => {
                    self.pos -= 1;
                    return self.err(format!(
                        "expected a time code in timeSamples, found {}",
                        describe(Some(&other))
                    ));
                }
            }
        }
        self.depth -= 1;
        Ok(out)
    }

    /// Any value: number, string, word, path, asset, tuple, list or dictionary.
    fn value(&mut self) -> PResult<Value> {
        if let Some(Token {
            kind: Tok::Numbers(x),
            ..
        }) = self.toks.get_mut(self.pos)
        {
            // Moved out, not copied: a large array is held once.
            let x = std::mem::take(x);
            self.pos += 1;
            return Ok(Value::Numbers(x));
        }
        let tok = self.next()?;
        Ok(match tok {
            Tok::Num(x) => Value::Num(x),
            Tok::Str(s) => Value::Str(s),
            Tok::Ident(s) => Value::Ident(s),
            Tok::Path(s) => Value::Path(s),
            Tok::Asset(s) => {
                // `@file.usda@</Prim>` (references, payloads): the prim path is dropped.
                if matches!(self.peek(), Some(Tok::Path(_))) {
                    self.pos += 1;
                }
                Value::Asset(s)
            }
            Tok::Punct('(') => Value::Tuple(self.sequence(')')?),
            Tok::Punct('[') => Value::List(self.sequence(']')?),
            Tok::Punct('{') => self.dictionary()?,
            other => {
                self.pos -= 1;
                return self.err(format!(
                    "expected a value, found {}",
                    describe(Some(&other))
                ));
            }
        })
    }

    /// Comma-separated values up to `close` (already past the opening bracket).
    fn sequence(&mut self, close: char) -> PResult<Vec<Value>> {
        self.enter()?;
        let mut out = Vec::new();
        loop {
            if self.is_punct(close) {
                self.pos += 1;
                break;
            }
            out.push(self.value()?);
            if self.is_punct(',') {
                self.pos += 1;
            } else if !self.is_punct(close) {
                let found = describe(self.peek());
                return self.err(format!("expected ',' or '{close}', found {found}"));
            }
        }
        self.depth -= 1;
        Ok(out)
    }

    /// `{ [type] key = value ... }` (already past `{`).
    fn dictionary(&mut self) -> PResult<Value> {
        self.enter()?;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(Tok::Punct('}')) => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Punct(';' | ',')) => self.pos += 1,
                Some(Tok::Ident(_) | Tok::Str(_)) => {
                    // `type key = value` or `key = value`; keys may be quoted.
                    let first = self.next()?;
                    let key_tok = if self.is_punct('[') {
                        self.pos += 1;
                        self.expect(']')?;
                        self.next()?
                    } else if self.is_punct('=') {
                        first
                    } else {
                        self.next()?
                    };
                    let key = match key_tok {
                        Tok::Ident(s) | Tok::Str(s) => s,
                        other => {
                            self.pos -= 1;
                            return self.err(format!(
                                "expected a dictionary key, found {}",
                                describe(Some(&other))
                            ));
                        }
                    };
                    self.expect('=')?;
                    let v = self.value()?;
                    out.push((key, v));
                }
                other => {
                    let found = describe(other);
                    return self.err(format!(
                        "expected a dictionary entry or '}}', found {found}"
                    ));
                }
            }
        }
        self.depth -= 1;
        Ok(Value::Dict(out))
    }

    /// Skips one bracketed group (used for `.spline` blocks).
    fn skip_balanced(&mut self) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            match self.next()? {
                Tok::Punct('(' | '[' | '{') => depth += 1,
                Tok::Punct(')' | ']' | '}') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ if depth == 0 => return Ok(()),
                _ => {}
            }
        }
    }

    /// The error for a top-level statement that is not a prim.
    fn top_level_error<T>(&self) -> PResult<T> {
        let found = describe(self.peek());
        self.err(format!(
            "expected 'def', 'over' or 'class' at the top level, found {found}"
        ))
    }
}

fn describe(t: Option<&Tok>) -> String {
    match t {
        None => "the end of the file (truncated?)".into(),
        Some(Tok::Ident(s)) => format!("'{s}'"),
        Some(Tok::Str(s)) => format!("the string \"{}\"", s.chars().take(40).collect::<String>()),
        Some(Tok::Num(x)) => format!("the number {x}"),
        Some(Tok::Path(p)) => format!("the path <{p}>"),
        Some(Tok::Asset(a)) => format!("the asset @{a}@"),
        Some(Tok::Punct(c)) => format!("'{c}'"),
        Some(Tok::Numbers(x)) => format!("an array of {} numbers", x.len()),
    }
}
