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
        chars: text.char_indices().collect(),
        src: text,
        pos: 0,
        line: 1,
    }
    .run()
}

struct Lexer<'a> {
    chars: Vec<(usize, char)>,
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
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).map(|&(_, c)| c)
    }

    fn err(&self, message: impl Into<String>) -> LexError {
        LexError {
            line: self.line,
            message: message.into(),
        }
    }

    fn byte_at(&self, pos: usize) -> usize {
        self.chars.get(pos).map_or(self.src.len(), |&(b, _)| b)
    }

    fn run(mut self) -> Result<Vec<Token>, LexError> {
        let mut out = Vec::new();
        while let Some(c) = self.peek(0) {
            let line = self.line;
            let kind = match c {
                '\n' => {
                    self.line += 1;
                    self.pos += 1;
                    continue;
                }
                c if c.is_whitespace() => {
                    self.pos += 1;
                    continue;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                    continue;
                }
                '"' | '\'' => Tok::Str(self.string(c)?),
                '<' => Tok::Path(self.delimited('>', "scene path")?),
                '@' => Tok::Asset(self.asset()?),
                '(' | ')' | '[' | ']' | '{' | '}' | '=' | ',' | ':' | ';' | '.' => {
                    // A '.' followed by a digit is a number (".5").
                    if c == '.' && self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
                        Tok::Num(self.number()?)
                    } else {
                        self.pos += 1;
                        Tok::Punct(c)
                    }
                }
                '-' | '+' => Tok::Num(self.number()?),
                c if c.is_ascii_digit() => Tok::Num(self.number()?),
                c if ident_start(c) => {
                    let start = self.pos;
                    while self.peek(0).is_some_and(ident_char) {
                        self.pos += 1;
                    }
                    let word = &self.src[self.byte_at(start)..self.byte_at(self.pos)];
                    match word {
                        "inf" => Tok::Num(f64::INFINITY),
                        "nan" => Tok::Num(f64::NAN),
                        _ => Tok::Ident(word.to_string()),
                    }
                }
                other => return Err(self.err(format!("unexpected character {other:?}"))),
            };
            out.push(Token { kind, line });
        }
        Ok(out)
    }

    fn number(&mut self) -> Result<f64, LexError> {
        let start = self.pos;
        if matches!(self.peek(0), Some('-' | '+')) {
            self.pos += 1;
            // "-inf"
            if self.peek(0) == Some('i') {
                let word: String = (0..3).filter_map(|k| self.peek(k)).collect();
                if word == "inf" {
                    self.pos += 3;
                    let neg = self.chars.get(start).map(|&(_, c)| c) == Some('-');
                    return Ok(if neg {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    });
                }
            }
        }
        while let Some(c) = self.peek(0) {
            let exp_sign = matches!(c, '-' | '+')
                && self.pos > start
                && matches!(self.chars.get(self.pos - 1), Some(&(_, 'e' | 'E')));
            if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || exp_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
        let text = &self.src[self.byte_at(start)..self.byte_at(self.pos)];
        text.parse::<f64>()
            .map_err(|_| self.err(format!("'{text}' is not a number")))
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
            self.pos += 1;
            if c == '\\' {
                let Some(e) = self.peek(0) else {
                    return Err(self.err("unterminated string"));
                };
                self.pos += 1;
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
                let s = self.src[self.byte_at(start)..self.byte_at(self.pos)].to_string();
                self.pos += 1;
                return Ok(s);
            }
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
        Err(self.err(format!("unterminated {what}")))
    }

    fn asset(&mut self) -> Result<String, LexError> {
        if self.peek(1) == Some('@') && self.peek(2) == Some('@') {
            self.pos += 3;
            let start = self.pos;
            while self.pos < self.chars.len() {
                if self.peek(0) == Some('@')
                    && self.peek(1) == Some('@')
                    && self.peek(2) == Some('@')
                {
                    let s = self.src[self.byte_at(start)..self.byte_at(self.pos)].to_string();
                    self.pos += 3;
                    return Ok(s);
                }
                if self.peek(0) == Some('\n') {
                    self.line += 1;
                }
                self.pos += 1;
            }
            return Err(self.err("unterminated asset path"));
        }
        self.delimited('@', "asset path")
    }
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
        assert_eq!(t[12], Tok::Num(-0.15));
        assert_eq!(t[14], Tok::Num(0.5));
        assert_eq!(t[16], Tok::Num(f64::NEG_INFINITY));
        assert_eq!(t[t.len() - 2], Tok::Path("/a/b".into()));
        assert_eq!(t[t.len() - 1], Tok::Asset("x.usd".into()));
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
}
