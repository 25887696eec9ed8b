//! Mesh data of a glTF file: primitives concatenated into one vertex list with the
//! attributes drape uses, skin influences and morph targets.
//!
//! * `TRIANGLES`, `TRIANGLE_STRIP` and `TRIANGLE_FAN` primitives are read (strips and fans
//!   become triangles, dropping degenerate joining triangles); points and lines are skipped.
//! * `POSITION`, `TEXCOORD_0` (sewing panels), custom `_PIN` (pin weight), `_DRAPE_INDEX`
//!   (source vertex number) and `_KEY_WEIGHT` (keyframe weight); custom names match any case.
//! * Skin influences from every `JOINTS_n`/`WEIGHTS_n` pair: per vertex the joints with a
//!   positive weight, duplicates summed, sorted by joint, weights divided by their sum
//!   (`w_i / Σ w`, glTF 2.0 §3.7.3.3 requires the sum to be 1).
//! * Refused, naming the mesh: a `_PIN` weight outside [0, 1] or NaN, a negative or
//!   non-finite skin weight, a `TRIANGLES` index count not a multiple of 3, and
//!   `_DRAPE_INDEX` 0 on every vertex (a one-point cache).
//! * Morph targets: `POSITION` deltas per target, named by the mesh's `extras.targetNames`
//!   (Blender's shape key names); primitives without targets get zero deltas.
use super::source::Source;
use crate::error::Result;
use crate::{Vec2, Vec3};
use gltf::mesh::{Mode, Semantic};

/// Skin influences of every vertex, as compressed rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Influences {
    /// Vertex `v`'s influences are entries `start[v]..start[v + 1]`.
    pub start: Vec<usize>,
    /// Joint (index into the skin's `joints`) of each entry.
    pub joint: Vec<usize>,
    /// Normalised weight of each entry.
    pub weight: Vec<f64>,
}

impl Influences {
    /// Entries of vertex `v` as `(joint, weight)`.
    pub fn of(&self, v: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        let r = self.start[v]..self.start[v + 1];
        self.joint[r.clone()]
            .iter()
            .copied()
            .zip(self.weight[r].iter().copied())
    }

    /// Largest joint index used, if any.
    pub fn max_joint(&self) -> Option<usize> {
        self.joint.iter().copied().max()
    }
}

/// One morph target of a mesh.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MorphTarget {
    /// Name from `extras.targetNames`, if given.
    pub name: Option<String>,
    /// `POSITION` delta per vertex (object-local metres).
    pub deltas: Vec<Vec3>,
    /// The frame if the name is `key_<frame>`: a keyframe for `drape control`, not an
    /// animated shape (docs/reference.md, "Inputs").
    pub key_frame: Option<i32>,
}

/// A glTF mesh with its primitives concatenated.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeshData {
    /// Vertex positions (object-local metres).
    pub positions: Vec<Vec3>,
    /// `TEXCOORD_0` per vertex, if every primitive has it.
    pub uvs: Option<Vec<Vec2>>,
    /// `_PIN` per vertex (0 where absent).
    pub pins: Vec<f64>,
    /// `_DRAPE_INDEX` per vertex, if every primitive has it.
    pub source_index: Option<Vec<f64>>,
    /// `_KEY_WEIGHT` per vertex, if any primitive has it (1 where absent).
    pub key_weight: Option<Vec<f64>>,
    /// Triangles over vertices.
    pub triangles: Vec<[usize; 3]>,
    /// Skin influences, if any primitive has `JOINTS_0` (vertices without get none).
    pub influences: Option<Influences>,
    /// Morph targets.
    pub targets: Vec<MorphTarget>,
    /// Default morph weights (mesh `weights`, zeros if absent).
    pub default_weights: Vec<f64>,
}

/// Reads mesh `mesh`; `object` names it in errors. Its triangle primitives
/// ([`read_primitive`]) are concatenated: their vertices one after the other, triangles
/// shifted to the concatenated numbering, an attribute kept where every primitive (or, for
/// `_KEY_WEIGHT` and skins, any primitive) has it.
pub(crate) fn read_mesh(src: &Source, mesh: &gltf::Mesh, object: &str) -> Result<MeshData> {
    let mut m = MeshData::default();
    let mut uvs: Vec<Vec2> = Vec::new();
    let mut index: Vec<f64> = Vec::new();
    let mut key_weight: Vec<f64> = Vec::new();
    let (mut all_uv, mut all_index, mut any_key_weight) = (true, true, false);
    let mut influence_lists: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut any_skin = false;
    let n_targets = mesh
        .primitives()
        .map(|p| p.morph_targets().count())
        .max()
        .unwrap_or(0);
    let mut deltas: Vec<Vec<Vec3>> = vec![Vec::new(); n_targets];
    let mut read_any = false;
    for prim in mesh.primitives() {
        let Some(p) = read_primitive(src, &prim, object, n_targets)? else {
            continue;
        };
        read_any = true;
        let n = p.positions.len();
        let base = m.positions.len();
        match p.uvs {
            Some(t) => uvs.extend(t),
            None => all_uv = false,
        }
        m.pins.extend(p.pins);
        match p.source_index {
            Some(k) => index.extend(k),
            None => all_index = false,
        }
        match p.key_weight {
            Some(k) => {
                any_key_weight = true;
                key_weight.extend(k);
            }
            None => key_weight.extend(std::iter::repeat_n(1.0, n)),
        }
        any_skin |= p.skinned;
        influence_lists.extend(p.influences);
        for (slot, d) in deltas.iter_mut().zip(p.deltas) {
            slot.extend(d);
        }
        m.triangles
            .extend(p.triangles.into_iter().map(|t| t.map(|i| i + base)));
        m.positions.extend(p.positions);
    }
    if read_any && all_uv {
        m.uvs = Some(uvs);
    }
    if read_any && all_index {
        if index.len() > 1 && index.iter().all(|&k| k == 0.0) {
            return Err(src.error(
                object,
                "has _DRAPE_INDEX 0 on every vertex, which would write a one-point cache; \
                 export the attribute again with the source vertex numbers, or remove it",
            ));
        }
        m.source_index = Some(index);
    } else if !index.is_empty() {
        return Err(src.error(
            object,
            "has _DRAPE_INDEX on some primitives only; export the attribute on the whole mesh",
        ));
    }
    if any_key_weight {
        m.key_weight = Some(key_weight);
    }
    if any_skin {
        m.influences = Some(normalise_influences(influence_lists));
    }
    m.targets = morph_targets(src, mesh, object, deltas)?;
    m.default_weights = (0..n_targets)
        .map(|k| {
            mesh.weights()
                .and_then(|w| w.get(k))
                .map_or(0.0, |&w| f64::from(w))
        })
        .collect();
    Ok(m)
}

/// The attributes of one triangle primitive, each checked to have one value per vertex.
struct Primitive {
    /// `POSITION` (object-local metres).
    positions: Vec<Vec3>,
    /// `TEXCOORD_0`, if present.
    uvs: Option<Vec<Vec2>>,
    /// `_PIN` (0 where absent).
    pins: Vec<f64>,
    /// `_DRAPE_INDEX`, if present.
    source_index: Option<Vec<f64>>,
    /// `_KEY_WEIGHT`, if present.
    key_weight: Option<Vec<f64>>,
    /// Whether any `JOINTS_n`/`WEIGHTS_n` pair is present.
    skinned: bool,
    /// Per vertex the `(joint, weight)` pairs of positive finite weight, unnormalised.
    influences: Vec<Vec<(usize, f64)>>,
    /// Per morph target of the mesh, the `POSITION` deltas (zero where the primitive has
    /// fewer targets).
    deltas: Vec<Vec<Vec3>>,
    /// Triangles over the primitive's own vertices.
    triangles: Vec<[usize; 3]>,
}

/// Reads primitive `prim` (`None` for points and lines, which are skipped); `n_targets` is
/// the mesh's morph target count, `object` names the mesh in errors.
fn read_primitive(
    src: &Source,
    prim: &gltf::Primitive,
    object: &str,
    n_targets: usize,
) -> Result<Option<Primitive>> {
    let mode = prim.mode();
    if !matches!(
        mode,
        Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
    ) {
        return Ok(None);
    }
    let p = prim.index();
    let what = |attr: &str| format!("primitive {p} {attr}");
    let attr =
        |want: &dyn Fn(&Semantic) -> bool| prim.attributes().find(|(s, _)| want(s)).map(|(_, a)| a);
    let Some(pos_acc) = attr(&|s| *s == Semantic::Positions) else {
        return Err(src.error(
            object,
            format!("primitive {p} has no POSITION attribute; export the mesh again"),
        ));
    };
    let pos = read_vectors::<3>(src, &pos_acc, object, &what("POSITION"))?;
    let n = pos.len();
    let check = |len: usize, name: &str| {
        if len == n {
            Ok(())
        } else {
            Err(src.error(
                object,
                format!(
                    "primitive {p}: {name} has {len} values for {n} vertices; export the \
                     mesh again"
                ),
            ))
        }
    };
    let uvs = match attr(&|s| *s == Semantic::TexCoords(0)) {
        Some(a) => {
            let t = read_vectors::<2>(src, &a, object, &what("TEXCOORD_0"))?;
            check(t.len(), "TEXCOORD_0")?;
            Some(t.iter().map(|t| Vec2::new(t[0], t[1])).collect())
        }
        None => None,
    };
    let custom =
        |name: &str| attr(&|s| matches!(s, Semantic::Extras(e) if e.eq_ignore_ascii_case(name)));
    let pins = match custom("PIN") {
        Some(a) => {
            let w = read_scalars(src, &a, object, &what("_PIN"))?;
            check(w.len(), "_PIN")?;
            if let Some((v, w)) = w
                .iter()
                .enumerate()
                .find(|(_, w)| !(0.0..=1.0).contains(*w))
            {
                return Err(src.error(
                    object,
                    format!(
                        "primitive {p}: vertex {v} has pin weight (_PIN) {w}; pin weights \
                         are 0 (free) to 1 (pinned), repaint them and export again"
                    ),
                ));
            }
            w
        }
        None => vec![0.0; n],
    };
    let source_index = match custom("DRAPE_INDEX") {
        Some(a) => {
            let k = read_scalars(src, &a, object, &what("_DRAPE_INDEX"))?;
            check(k.len(), "_DRAPE_INDEX")?;
            Some(k)
        }
        None => None,
    };
    let key_weight = match custom("KEY_WEIGHT") {
        Some(a) => {
            let k = read_scalars(src, &a, object, &what("_KEY_WEIGHT"))?;
            check(k.len(), "_KEY_WEIGHT")?;
            Some(k)
        }
        None => None,
    };
    let mut influences: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    let mut skinned = false;
    for set in 0.. {
        let (Some(j), Some(w)) = (
            attr(&|s| *s == Semantic::Joints(set)),
            attr(&|s| *s == Semantic::Weights(set)),
        ) else {
            break;
        };
        skinned = true;
        let joints = read_vectors::<4>(src, &j, object, &what(&format!("JOINTS_{set}")))?;
        let weights = read_vectors::<4>(src, &w, object, &what(&format!("WEIGHTS_{set}")))?;
        check(joints.len(), &format!("JOINTS_{set}"))?;
        check(weights.len(), &format!("WEIGHTS_{set}"))?;
        for (v, (j, w)) in joints.iter().zip(&weights).enumerate() {
            for c in 0..4 {
                if !(w[c].is_finite() && w[c] >= 0.0) {
                    return Err(src.error(
                        object,
                        format!(
                            "primitive {p}: vertex {v} has skin weight {} in WEIGHTS_{set}; \
                             skin weights must be finite and not negative, normalise them \
                             (Blender: Weights > Normalize All) and export again",
                            w[c]
                        ),
                    ));
                }
                if w[c] > 0.0 {
                    influences[v].push((j[c] as usize, w[c]));
                }
            }
        }
    }
    let prim_targets: Vec<_> = prim.morph_targets().collect();
    let mut deltas = Vec::with_capacity(n_targets);
    for k in 0..n_targets {
        deltas.push(match prim_targets.get(k).and_then(|t| t.positions()) {
            Some(a) => {
                let d = read_vectors::<3>(src, &a, object, &what(&format!("target {k}")))?;
                check(d.len(), &format!("morph target {k} POSITION"))?;
                d.iter().map(|d| Vec3::new(d[0], d[1], d[2])).collect()
            }
            None => vec![Vec3::zeros(); n],
        });
    }
    let idx: Vec<usize> = match prim.indices() {
        Some(a) => read_scalars(src, &a, object, &what("indices"))?
            .into_iter()
            .map(|i| i as usize)
            .collect(),
        None => (0..n).collect(),
    };
    if mode == Mode::Triangles && !idx.len().is_multiple_of(3) {
        return Err(src.error(
            object,
            format!(
                "primitive {p} has {} indices, not a multiple of 3 (three per triangle); \
                 export the mesh again",
                idx.len()
            ),
        ));
    }
    if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
        return Err(src.error(
            object,
            format!("primitive {p}: index {bad} is beyond its {n} vertices; export the mesh again"),
        ));
    }
    Ok(Some(Primitive {
        positions: pos.iter().map(|q| Vec3::new(q[0], q[1], q[2])).collect(),
        uvs,
        pins,
        source_index,
        key_weight,
        skinned,
        influences,
        deltas,
        triangles: assemble_triangles(mode, &idx),
    }))
}

/// The mesh's morph targets from their concatenated deltas, named by `extras.targetNames`
/// (`key_<frame>` names marking keyframes). Non-finite deltas are an error; non-finite
/// rest positions are reported by the cloth model with the vertex number.
fn morph_targets(
    src: &Source,
    mesh: &gltf::Mesh,
    object: &str,
    deltas: Vec<Vec<Vec3>>,
) -> Result<Vec<MorphTarget>> {
    let names = target_names(mesh);
    let targets: Vec<MorphTarget> = deltas
        .into_iter()
        .enumerate()
        .map(|(k, deltas)| {
            let name = names.get(k).cloned();
            let key_frame = name.as_deref().and_then(key_frame_of);
            MorphTarget {
                name,
                deltas,
                key_frame,
            }
        })
        .collect();
    if targets
        .iter()
        .any(|t| t.deltas.iter().any(|d| !d.iter().all(|c| c.is_finite())))
    {
        return Err(src.error(
            object,
            "has a non-finite morph target delta; export the mesh again",
        ));
    }
    Ok(targets)
}

/// Sums duplicate joints, sorts by joint and divides by the total weight.
fn normalise_influences(lists: Vec<Vec<(usize, f64)>>) -> Influences {
    let mut inf = Influences {
        start: Vec::with_capacity(lists.len() + 1),
        ..Influences::default()
    };
    inf.start.push(0);
    for mut list in lists {
        list.sort_by_key(|&(j, _)| j);
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(list.len());
        for (j, w) in list {
            match merged.last_mut() {
                Some((lj, lw)) if *lj == j => *lw += w,
                _ => merged.push((j, w)),
            }
        }
        let total: f64 = merged.iter().map(|&(_, w)| w).sum();
        if total > 0.0 && total.is_finite() {
            for (j, w) in merged {
                inf.joint.push(j);
                inf.weight.push(w / total);
            }
        }
        inf.start.push(inf.joint.len());
    }
    inf
}

/// `extras.targetNames` of a mesh (Blender's shape key names), empty if absent.
fn target_names(mesh: &gltf::Mesh) -> Vec<String> {
    let Some(raw) = mesh.extras().as_ref() else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
        return Vec::new();
    };
    value
        .get("targetNames")
        .and_then(|n| n.as_array())
        .map(|names| {
            names
                .iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The frame of a keyframe target name `key_<frame>` (docs/reference.md, "Inputs").
pub(crate) fn key_frame_of(name: &str) -> Option<i32> {
    name.strip_prefix("key_")?.parse().ok()
}

/// An accessor as `N`-vectors; fails if it does not have `N` components.
fn read_vectors<const N: usize>(
    src: &Source,
    acc: &gltf::Accessor,
    object: &str,
    what: &str,
) -> Result<Vec<[f64; N]>> {
    let comps = acc.dimensions().multiplicity();
    if comps != N {
        return Err(src.error(
            object,
            format!(
                "{what} has {comps} components per element, expected {N}; export the mesh again"
            ),
        ));
    }
    let flat = src.read(acc, object, what)?;
    Ok(flat
        .chunks_exact(N)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect())
}

/// A scalar accessor; fails if it is not scalar.
fn read_scalars(src: &Source, acc: &gltf::Accessor, object: &str, what: &str) -> Result<Vec<f64>> {
    if acc.dimensions().multiplicity() != 1 {
        return Err(src.error(
            object,
            format!("{what} must be a scalar attribute (one number per vertex); export it as a float attribute"),
        ));
    }
    src.read(acc, object, what)
}

/// Triangles of a primitive from its index list (glTF 2.0 §3.7.2.1 topology types).
pub(crate) fn assemble_triangles(mode: Mode, idx: &[usize]) -> Vec<[usize; 3]> {
    match mode {
        Mode::Triangles => idx.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        Mode::TriangleStrip => (0..idx.len().saturating_sub(2))
            .map(|i| {
                let o = i % 2;
                [idx[i], idx[i + 1 + o], idx[i + 2 - o]]
            })
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        Mode::TriangleFan => (1..idx.len().saturating_sub(1))
            .map(|i| [idx[i], idx[i + 1], idx[0]])
            .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
            .collect(),
        _ => Vec::new(),
    }
}
