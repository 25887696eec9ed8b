//! Tokens of the USD text format (`.usda`, the "usda 1.0" grammar of Pixar's `Sdf` text
//! file format, the subset drape reads).
//!
//! Comments run from `#` to the end of the line (the `#usda 1.0` header is checked before
//! lexing). Identifiers may contain `:` (namespaces such as `primvars:st`); a `.` after an
//! identifier is its own token so `points.timeSamples` lexes as `points` `.` `timeSamples`.
//! Strings are `"..."`, `'...'` or triple-quoted, with the usual backslash escapes.
//! `</a/b>` is a path and `@file@` (or `@@@file@@@`) an asset reference.

/// One token with the line it starts on (1-based, for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// What the token is.
    pub kind: Tok,
    /// Line number (1-based).
    pub line: usize,
}

/// Token kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An identifier or keyword (`def`, `point3f`, `primvars:st`, `true`, `inf`, ...).
    Ident(String),
    /// A quoted string, unescaped.
    Str(String),
    /// A number (integers and reals alike; `inf`, `-inf` and `nan` too).
    Num(f64),
    /// A scene path `</a/b.prop>` without the angle brackets.
    Path(String),
    /// An asset path `@a.usda@` without the `@`s.
    Asset(String),
    /// One of `( ) [ ] { } = , : ; .`.
    Punct(char),
    /// A whole array of numbers or of number tuples of one width, `[1, 2]` or
    /// `[(0, 1, 2), (3, 4, 5)]`, its tuples flattened: point and sample arrays, the bulk of
    /// a large file, kept as 8 bytes per number instead of a token per number and bracket.
    Numbers(Vec<f64>),
}

/// A lexing failure: what and where.
#[derive(Debug, Clone, PartialEq)]
pub struct LexError {
    /// Line number (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Splits `text` (without its `#usda` header line) into tokens.
pub fn lex(text: &str) -> Result<Vec<Token>, LexError> {
    Lexer {
        src: text,
        pos: 0,
        line: 1,
    }
    .run()
}

/// The lexer's place in the text: `pos` is a byte offset, always at a character boundary.
struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
}

fn ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == ':'
}

impl Lexer<'_> {
    /// The `k`-th character from the current one.
    fn peek(&self, k: usize) -> Option<char> {
        self.src[self.pos..].chars().nth(k)
    }

    /// Moves past the current character.
    fn bump(&mut self) {
        if let Some(c) = self.peek(0) {
            self.pos += c.len_utf8();
        }
    }

    fn err(&self, message: impl Into<String>) -> LexError {
        LexError {
            line: self.line,
            message: message.into(),
        }
    }

    fn run(mut self) -> Result<Vec<Token>, LexError> {
        let mut out = Vec::new();
        while let Some(c) = self.peek(0) {
            let line = self.line;
            let kind = match c {
                '\n' => {
                    self.line += 1;
                    self.bump();
                    continue;
                }
                c if c.is_whitespace() => {
                    self.bump();
                    continue;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                    continue;
                }
                '"' | '\'' => Tok::Str(self.string(c)?),
                '<' => Tok::Path(self.delimited('>', "scene path")?),
                '@' => Tok::Asset(self.asset()?),
                '[' if let Some((values, end, lines)) = self.numbers() => {
                    self.pos = end;
                    self.line += lines;
                    Tok::Numbers(values)
                }
                '(' | ')' | '[' | ']' | '{' | '}' | '=' | ',' | ':' | ';' | '.' => {
                    // A '.' followed by a digit is a number (".5").
                    if c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
                        Tok::Num(self.number()?)
                    } else {
                        self.bump();
                        Tok::Punct(c)
                    }
                }
                '-' | '+' => Tok::Num(self.number()?),
                c if c.is_ascii_digit() => Tok::Num(self.number()?),
                c if ident_start(c) => {
                    let start = self.pos;
                    while self.peek(0).is_some_and(ident_char) {
                        self.bump();
                    }
                    match &self.src[start..self.pos] {
                        "inf" => Tok::Num(f64::INFINITY),
                        "nan" => Tok::Num(f64::NAN),
                        word => Tok::Ident(word.to_string()),
                    }
                }
                other => return Err(self.err(format!("unexpected character {other:?}"))),
            };
            out.push(Token { kind, line });
        }
        Ok(out)
    }

    /// At a `[`: if the array holds only numbers, or only tuples of numbers all of one
    /// width (no nesting, comments, words or empty tuples), its numbers in order, the byte
    /// offset past its `]` and the newlines it spans; `None` for anything else (the
    /// array is then lexed token by token) and for an empty array.
    fn numbers(&self) -> Option<(Vec<f64>, usize, usize)> {
        let bytes = self.src.as_bytes();
        let mut i = self.pos + 1;
        let (mut values, mut lines) = (Vec::new(), 0);
        let mut width: Option<usize> = None;
        // The width of the tuples, 0 for plain numbers, until the first element.
        let mut after_element = false;
        loop {
            skip_space(bytes, &mut i, &mut lines);
            match (*bytes.get(i)?, after_element) {
                (b']', _) if !values.is_empty() => return Some((values, i + 1, lines)),
                (b',', true) => {
                    after_element = false;
                    i += 1;
                }
                (b'(', false) => {
                    let mut n = 0;
                    i += 1;
                    loop {
                        skip_space(bytes, &mut i, &mut lines);
                        let (x, end) = number_at(self.src, i).ok()?;
                        values.push(x);
                        n += 1;
                        i = end;
                        skip_space(bytes, &mut i, &mut lines);
                        match *bytes.get(i)? {
                            b',' => i += 1,
                            b')' => {
                                i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                    if *width.get_or_insert(n) != n {
                        return None;
                    }
                    after_element = true;
                }
                (_, false) => {
                    if *width.get_or_insert(0) != 0 {
                        return None;
                    }
                    let (x, end) = number_at(self.src, i).ok()?;
                    values.push(x);
                    i = end;
                    after_element = true;
                }
                _ => return None,
            }
        }
    }

    fn number(&mut self) -> Result<f64, LexError> {
        match number_at(self.src, self.pos) {
            Ok((x, end)) => {
                self.pos = end;
                Ok(x)
            }
            Err(end) => {
                let text = &self.src[self.pos..end];
                Err(self.err(format!("'{text}' is not a number")))
            }
        }
    }

    fn string(&mut self, quote: char) -> Result<String, LexError> {
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut s = String::new();
        loop {
            let Some(c) = self.peek(0) else {
                return Err(self.err("unterminated string"));
            };
            if c == quote
                && (!triple || (self.peek(1) == Some(quote) && self.peek(2) == Some(quote)))
            {
                self.pos += if triple { 3 } else { 1 };
                return Ok(s);
            }
            if c == '\n' {
                if !triple {
                    return Err(self.err("string runs past the end of the line"));
                }
                self.line += 1;
            }
            self.bump();
            if c == '\\' {
                let Some(e) = self.peek(0) else {
                    return Err(self.err("unterminated string"));
                };
                self.bump();
                s.push(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                });
            } else {
                s.push(c);
            }
        }
    }

    fn delimited(&mut self, close: char, what: &str) -> Result<String, LexError> {
        self.pos += 1;
        let start = self.pos;
        while let Some(c) = self.peek(0) {
            if c == close {
                let s = self.src[start..self.pos].to_string();
                self.pos += 1;
                return Ok(s);
            }
            if c == '\n' {
                break;
            }
            self.bump();
        }
        Err(self.err(format!("unterminated {what}")))
    }

    fn asset(&mut self) -> Result<String, LexError> {
        if self.peek(1) == Some('@') && self.peek(2) == Some('@') {
            self.pos += 3;
            let start = self.pos;
            while self.pos < self.src.len() {
                if self.peek(0) == Some('@')
                    && self.peek(1) == Some('@')
                    && self.peek(2) == Some('@')
                {
                    let s = self.src[start..self.pos].to_string();
                    self.pos += 3;
                    return Ok(s);
                }
                if self.peek(0) == Some('\n') {
                    self.line += 1;
                }
                self.bump();
            }
            return Err(self.err("unterminated asset path"));
        }
        self.delimited('@', "asset path")
    }
}

/// Moves `i` past ASCII white space, counting the newlines into `lines`.
fn skip_space(bytes: &[u8], i: &mut usize, lines: &mut usize) {
    while let Some(&b) = bytes.get(*i).filter(|b| b.is_ascii_whitespace()) {
        *lines += usize::from(b == b'\n');
        *i += 1;
    }
}

/// The number that starts at byte `start` of `src` and the offset past it: an optional
/// sign, then `inf`, or digits, `.`, and an exponent (`e`, `E`, with its own sign); if
/// what is there is not a valid number, `Err` with the offset past it.
fn number_at(src: &str, start: usize) -> Result<(f64, usize), usize> {
    let bytes = src.as_bytes();
    let mut i = start;
    if matches!(bytes.get(i), Some(b'-' | b'+')) {
        i += 1;
        if bytes.get(i..i + 3) == Some(b"inf".as_slice()) {
            let x = if bytes[start] == b'-' {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
            return Ok((x, i + 3));
        }
    }
    while let Some(&b) = bytes.get(i) {
        let exp_sign = matches!(b, b'-' | b'+') && i > start && matches!(bytes[i - 1], b'e' | b'E');
        if b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E') || exp_sign {
            i += 1;
        } else {
            break;
        }
    }
    src[start..i].parse::<f64>().map(|x| (x, i)).map_err(|_| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn lexes_namespaced_names_numbers_paths_and_comments() {
        let t = kinds(
            "point3f[] points.timeSamples = { 1: [(-1.5e-1, .5, -inf)] } # c\n</a/b> @x.usd@",
        );
        assert_eq!(t[0], Tok::Ident("point3f".into()));
        assert_eq!(t[3], Tok::Ident("points".into()));
        assert_eq!(t[4], Tok::Punct('.'));
        assert_eq!(t[5], Tok::Ident("timeSamples".into()));
        assert_eq!(t[8], Tok::Num(1.0));
        assert_eq!(t[10], Tok::Numbers(vec![-0.15, 0.5, f64::NEG_INFINITY]));
        assert_eq!(t[t.len() - 2], Tok::Path("/a/b".into()));
        assert_eq!(t[t.len() - 1], Tok::Asset("x.usd".into()));
        let tuple = kinds("(-1.5e-1, .5, -inf)");
        assert_eq!(tuple[1], Tok::Num(-0.15));
        assert_eq!(tuple[3], Tok::Num(0.5));
        assert_eq!(tuple[5], Tok::Num(f64::NEG_INFINITY));
    }

    #[test]
    fn strings_unescape_and_count_lines() {
        let toks = lex("'a\\'b' \"\"\"x\ny\"\"\"\nz").unwrap();
        assert_eq!(toks[0].kind, Tok::Str("a'b".into()));
        assert_eq!(toks[1].kind, Tok::Str("x\ny".into()));
        assert_eq!(toks[2].line, 3);
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        for s in ["\"open", "</a", "@x", "1e", "$", "--", "'''x"] {
            assert!(lex(s).is_err(), "{s}");
        }
    }

    #[test]
    fn numeric_arrays_are_one_token_and_anything_else_is_lexed_as_before() {
        let toks =
            lex("[(1, 2, 3),\n (4, -5e-1, .5)] x\n[1,2,\n3] [(1,2),(3)] [1,(2)] [] [inf] [a]")
                .unwrap();
        assert_eq!(
            toks[0].kind,
            Tok::Numbers(vec![1.0, 2.0, 3.0, 4.0, -0.5, 0.5])
        );
        assert_eq!(
            (toks[1].kind.clone(), toks[1].line),
            (Tok::Ident("x".into()), 2)
        );
        assert_eq!(toks[2].kind, Tok::Numbers(vec![1.0, 2.0, 3.0]));
        assert_eq!(toks[2].line, 3);
        // Tuples of two widths, a number beside a tuple, an empty array, a word: token by
        // token, as the parser's general path expects.
        let rest: Vec<Tok> = toks[3..].iter().map(|t| t.kind.clone()).collect();
        assert!(
            !rest.iter().any(|t| matches!(t, Tok::Numbers(_))),
            "{rest:?}"
        );
        assert_eq!(toks.last().unwrap().line, 4);
        assert_eq!(kinds("'é' ünï")[1], Tok::Ident("ünï".into()));
        assert_eq!(kinds("'é' ünï")[0], Tok::Str("é".into()));
    }
}
