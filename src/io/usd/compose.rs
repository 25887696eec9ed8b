//! Composed USD stages: a file with composition arcs (sublayers, references, payloads,
//! inherits, specializes, variant sets) or a `.usdz` archive is opened as a stage with the
//! [`openusd`] crate, which composes it (LIVRPS strength order, list ops, layer offsets,
//! instancing), and the composed stage is flattened into our own [`Layer`] so every rule of
//! the [parent module](super) applies to it unchanged:
//! ```text
//! stage metadata (root layer, else the strongest sublayer) -> Layer::metadata
//! composed prim (def, active)                               -> Prim (customData, kind)
//! composed attribute: type, default, timeSamples            -> Attribute (interpolation,
//!                                                              elementSize kept)
//! composed relationship targets                             -> Attribute of type "rel"
//! ```
//! Payloads are loaded. Variant selections are the authored ones, except for the sets named
//! in [`Options::variants`] (`--variant SET=NAME`), whose selection is authored anew on
//! every prim that has the set before its children are read. Instanceable prims are read
//! through their instance proxies, so each instance is a mesh of its own.
//!
//! Composition problems (a referenced or payload file that is missing or unreadable, a
//! cycle) do not stop the reading: each becomes a warning naming the file and the prim,
//! and the prims that did compose are read.
use super::layer::{Attribute, Layer, Prim, Specifier, Value};
use super::usdc::convert;
use openusd::sdf;
use openusd::usd::{Prim as StagePrim, Stage};
use std::collections::HashMap;
use std::path::Path;

/// How a composed stage is read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// `(set, variant)` pairs that override the authored variant selections
    /// (`--variant SET=NAME`, repeatable). Default: none, every selection as authored.
    pub variants: Vec<(String, String)>,
}

impl Options {
    /// Parses `SET=NAME` arguments; an entry without `=` or with an empty side is an error
    /// message naming it.
    pub fn from_args(args: &[String]) -> Result<Options, String> {
        let mut variants = Vec::new();
        for a in args {
            match a.split_once('=') {
                Some((set, name)) if !set.trim().is_empty() && !name.trim().is_empty() => {
                    variants.push((set.trim().to_string(), name.trim().to_string()))
                }
                _ => {
                    return Err(format!(
                        "--variant {a:?} is not SET=NAME (a variant set and one of its \
                         variants, e.g. --variant modelVariant=Fancy)"
                    ))
                }
            }
        }
        Ok(Options { variants })
    }
}

/// Stage metadata copied into [`Layer::metadata`].
const STAGE_KEYS: &[&str] = &[
    "upAxis",
    "metersPerUnit",
    "timeCodesPerSecond",
    "framesPerSecond",
    "startTimeCode",
    "endTimeCode",
];

/// Deepest prim nesting read (a hostile file cannot exhaust the stack).
const MAX_DEPTH: usize = 256;

/// A flattened stage: the layer and what could not be composed.
pub struct Composed {
    /// The composed stage as one layer.
    pub layer: Layer,
    /// One message per composition problem (missing files, cycles, unknown variants).
    pub warnings: Vec<String>,
}

/// True if the layer has any composition arc (a sublayer, or a prim with references,
/// payloads, inherits, specializes or variant sets): such a file is read through
/// [`compose`].
pub fn has_arcs(layer: &Layer) -> bool {
    fn prim_has(p: &Prim) -> bool {
        const ARCS: &[&str] = &[
            "references",
            "payload",
            "inherits",
            "specializes",
            "variantSets",
        ];
        p.metadata.iter().any(|(k, _)| ARCS.contains(&k.as_str()))
            || p.children.iter().any(prim_has)
    }
    layer.meta("subLayers").is_some() || layer.prims.iter().any(prim_has)
}

/// Opens `path` as a stage, composes it and flattens it; errors say why the root file
/// cannot be opened.
pub fn compose(path: &Path, options: &Options) -> Result<Composed, String> {
    let text = path.to_str().ok_or("the path is not valid UTF-8")?;
    crate::io::foreign::catch(|| compose_unguarded(text, options))
        .unwrap_or_else(|| Err("malformed USD data".to_string()))
}

fn compose_unguarded(path: &str, options: &Options) -> Result<Composed, String> {
    let stage = Stage::open(path).map_err(|e| format!("{e:#}"))?;
    let mut metadata = Vec::new();
    for key in STAGE_KEYS {
        let value = stage.stage_metadata(key).ok().flatten().or_else(|| {
            stage.layer_stack().iter().skip(1).find_map(|id| {
                let layer = stage.layer(id)?;
                let root = sdf::Path::abs_root();
                layer
                    .data()
                    .try_field(&root, key)
                    .ok()
                    .flatten()
                    .map(|v| v.into_owned())
            })
        });
        if let Some(v) = value.as_ref().and_then(convert) {
            metadata.push((key.to_string(), v));
        }
    }
    let mut flat = Flattener {
        stage: &stage,
        options,
        used: vec![false; options.variants.len()],
    };
    let mut prims = Vec::new();
    for child in children(&stage.prim(sdf::Path::abs_root()))? {
        if let Some(p) = flat.prim(&child, 0)? {
            prims.push(p);
        }
    }
    let mut warnings: Vec<String> = stage
        .composition_errors()
        .iter()
        .map(|e| format!("{e}; the prims it brings in are left out"))
        .collect();
    warnings.dedup();
    for ((set, name), used) in options.variants.iter().zip(&flat.used) {
        if !used {
            warnings.push(format!(
                "--variant {set}={name}: no prim has a variant set named {set}"
            ));
        }
    }
    Ok(Composed {
        layer: Layer { metadata, prims },
        warnings,
    })
}

/// Turns an `openusd` error at prim `at` into a message naming the prim.
fn failed_at<E: std::fmt::Display>(at: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("{at}: {e:#}")
}

fn children(prim: &StagePrim) -> Result<Vec<StagePrim>, String> {
    prim.children()
        .map_err(|e| format!("{}: {e:#}", prim.path().as_str()))
}

struct Flattener<'a> {
    stage: &'a Stage,
    options: &'a Options,
    /// Which `--variant` entries matched a prim's variant set.
    used: Vec<bool>,
}

impl Flattener<'_> {
    /// Authors the `--variant` selections for the sets this prim has.
    fn select_variants(&mut self, prim: &StagePrim) -> Result<(), String> {
        if self.options.variants.is_empty() {
            return Ok(());
        }
        let current = prim
            .variant_sets()
            .get_all_variant_selections()
            .unwrap_or_default();
        let mut change = HashMap::new();
        for (k, (set, name)) in self.options.variants.iter().enumerate() {
            if let Some((_, sel)) = current.iter().find(|(s, _)| s == set) {
                self.used[k] = true;
                if sel != name {
                    change.insert(set.clone(), name.clone());
                }
            }
        }
        if change.is_empty() {
            return Ok(());
        }
        let at = prim.path().as_str().to_string();
        let handle = self.stage.prim(prim.path().clone());
        handle
            .update_metadata("variantSelection", move |old| {
                let mut map = match old {
                    Some(sdf::Value::VariantSelectionMap(m)) => m,
                    _ => HashMap::new(),
                };
                map.extend(change);
                sdf::Value::VariantSelectionMap(map)
            })
            .map(|_| ())
            .map_err(|e| format!("{at}: cannot select the variant: {e}"))
    }

    fn prim(&mut self, prim: &StagePrim, depth: usize) -> Result<Option<Prim>, String> {
        let at = prim.path().as_str().to_string();
        if depth > MAX_DEPTH {
            return Err(format!("prims nested deeper than {MAX_DEPTH} at {at}"));
        }
        if !prim.is_active().map_err(failed_at(&at))? {
            return Ok(None);
        }
        self.select_variants(prim)?;
        let specifier = match prim.specifier().map_err(failed_at(&at))? {
            Some(sdf::Specifier::Def) => Specifier::Def,
            Some(sdf::Specifier::Class) => Specifier::Class,
            _ => Specifier::Over,
        };
        let type_name = prim
            .type_name()
            .map_err(failed_at(&at))?
            .map(|t| t.as_str().to_string())
            .unwrap_or_default();
        let mut metadata = Vec::new();
        if let Some(v) = prim
            .custom_data()
            .map_err(failed_at(&at))?
            .as_ref()
            .and_then(convert)
        {
            metadata.push(("customData".to_string(), v));
        }
        if let Some(k) = prim.kind().map_err(failed_at(&at))? {
            metadata.push(("kind".to_string(), Value::Str(k.as_str().to_string())));
        }
        let mut attributes = Vec::new();
        for a in prim.attributes().map_err(failed_at(&at))? {
            let Some(name) = a.path().split_property().map(|(_, n)| n.to_string()) else {
                continue;
            };
            let type_name = a
                .type_name()
                .map_err(failed_at(&at))?
                .map(|t| t.as_str().to_string())
                .unwrap_or_default();
            let default = a
                .get::<sdf::Value>()
                .ok()
                .flatten()
                .as_ref()
                .and_then(convert);
            let time_samples = a.time_samples().ok().flatten().map(|s| {
                s.iter()
                    .filter_map(|(t, v)| convert(v).map(|v| (*t, v)))
                    .collect::<Vec<_>>()
            });
            let mut meta = Vec::new();
            for key in ["interpolation", "elementSize"] {
                if let Some(v) = a
                    .get_metadata::<sdf::Value>(key)
                    .ok()
                    .flatten()
                    .as_ref()
                    .and_then(convert)
                {
                    meta.push((key.to_string(), v));
                }
            }
            attributes.push(Attribute {
                name,
                type_name,
                default,
                time_samples: time_samples.filter(|s| !s.is_empty()),
                metadata: meta,
            });
        }
        for r in prim.relationships().map_err(failed_at(&at))? {
            let Some(name) = r.path().split_property().map(|(_, n)| n.to_string()) else {
                continue;
            };
            let targets: Vec<Value> = r
                .targets()
                .map_err(failed_at(&at))?
                .iter()
                .map(|p| Value::Path(p.as_str().to_string()))
                .collect();
            let default = match targets.len() {
                0 => None,
                1 => targets.into_iter().next(),
                _ => Some(Value::List(targets)),
            };
            attributes.push(Attribute {
                name,
                type_name: "rel".to_string(),
                default,
                ..Attribute::default()
            });
        }
        let mut kids = Vec::new();
        for c in children(prim)? {
            if let Some(p) = self.prim(&c, depth + 1)? {
                kids.push(p);
            }
        }
        Ok(Some(Prim {
            specifier,
            type_name,
            name: prim.path().name().unwrap_or_default().to_string(),
            metadata,
            attributes,
            children: kids,
            line: 0,
        }))
    }
}
