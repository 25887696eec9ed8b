//! The data model of a parsed `.usda` layer: prims, attributes, metadata and values as
//! written in the file (no composition). Produced by [`parser`](super::parser).

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number.
    Num(f64),
    /// A quoted string.
    Str(String),
    /// A bare word: `true`, `false`, `None`, or a token.
    Ident(String),
    /// A scene path.
    Path(String),
    /// An asset path.
    Asset(String),
    /// `( ... )`: a vector, quaternion or matrix row.
    Tuple(Vec<Value>),
    /// `[ ... ]`: an array.
    List(Vec<Value>),
    /// `[ ... ]` of numbers or of number tuples of one width, the tuples flattened
    /// (points, normals, UVs, indices: compact, 8 bytes a number).
    Numbers(Vec<f64>),
    /// `{ type key = value ... }`: a dictionary (types dropped).
    Dict(Vec<(String, Value)>),
}

impl Value {
    /// The number, if this is one (booleans `true`/`false` count as 1/0).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Num(x) => Some(*x),
            Value::Ident(s) if s == "true" => Some(1.0),
            Value::Ident(s) if s == "false" => Some(0.0),
            _ => None,
        }
    }

    /// The text of a string or bare token.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) | Value::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// The elements of an array.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) => Some(v),
            _ => None,
        }
    }

    /// The entry `key` of a dictionary; `a:b` also finds the nested `{a = {b = ...}}`.
    pub fn dict_get(&self, key: &str) -> Option<&Value> {
        let Value::Dict(entries) = self else {
            return None;
        };
        if let Some((_, v)) = entries.iter().find(|(k, _)| k == key) {
            return Some(v);
        }
        let (head, rest) = key.split_once(':')?;
        entries
            .iter()
            .find(|(k, _)| k == head)
            .and_then(|(_, v)| v.dict_get(rest))
    }
}

/// An attribute (or relationship) as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attribute {
    /// Full name, e.g. `primvars:st`.
    pub name: String,
    /// Type name, `[]` included (`point3f[]`); `rel` for relationships.
    pub type_name: String,
    /// The default value (`= value`), if any.
    pub default: Option<Value>,
    /// `(time, value)` pairs of `.timeSamples`, in file order.
    pub time_samples: Option<Vec<(f64, Value)>>,
    /// Metadata in parentheses after the value (`interpolation`, ...).
    pub metadata: Vec<(String, Value)>,
}

impl Attribute {
    /// A metadata entry.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// How a prim is introduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Specifier {
    /// `def`: a concrete prim.
    Def,
    /// `over`: an override of a prim defined elsewhere.
    Over,
    /// `class`: an abstract prim.
    Class,
}

/// A prim as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Prim {
    /// `def`, `over` or `class`.
    pub specifier: Specifier,
    /// Schema type (`Xform`, `Mesh`, ...), empty if none.
    pub type_name: String,
    /// Prim name.
    pub name: String,
    /// Metadata in parentheses after the name.
    pub metadata: Vec<(String, Value)>,
    /// Attributes and relationships (a `.timeSamples` line merges into its attribute).
    pub attributes: Vec<Attribute>,
    /// Child prims.
    pub children: Vec<Prim>,
    /// Line of the prim's header (for messages).
    pub line: usize,
}

impl Prim {
    /// The attribute `name`, if written.
    pub fn attribute(&self, name: &str) -> Option<&Attribute> {
        self.attributes.iter().find(|a| a.name == name)
    }

    /// A metadata entry.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// A whole `.usda` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Layer metadata (`upAxis`, `metersPerUnit`, `timeCodesPerSecond`, ...).
    pub metadata: Vec<(String, Value)>,
    /// Root prims.
    pub prims: Vec<Prim>,
}

impl Layer {
    /// A layer metadata entry.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}
