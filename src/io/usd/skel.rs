//! UsdSkel: meshes skinned to a `Skeleton` and posed by a `SkelAnimation`, evaluated by
//! linear blend skinning (USD "UsdSkel: Schemas In-Depth", "Skinning") at every time the
//! animation or the skeleton's transforms are sampled.
//!
//! USD writes matrices for row vectors (`p' = p · M`); here they are transposed to column
//! vectors, so with the joint `j`'s parent `parent(j)` (the joint path with its last
//! element dropped, listed before `j`):
//! ```text
//! local_j(t)  = T(translation_j) · R(rotation_j) · S(scale_j)    (SkelAnimation, at t)
//!             = restTransforms[j]                                (joint not animated)
//! skel_j(t)   = skel_parent(j)(t) · local_j(t)                   (skeleton space)
//! skin_j(t)   = skel_j(t) · bindTransforms[j]⁻¹
//! p(t)        = points + blend-shape offsets at t                (blend_shape module)
//! p'(t)       = Σ_k w_k · skin_{j_k}(t) · geomBindTransform · p(t)   (weights normalised)
//! world(t)    = M_skeleton_world(t) · p'(t)
//! ```
//! The skinned points are in the skeleton's space, so the skeleton prim's transform (with
//! its ancestors') places them in the world and the mesh's own transform is not used, as
//! UsdSkel specifies. Without `restTransforms` the rest pose is the bind pose
//! (`local_j = bind_parent(j)⁻¹ · bind_j`).
//!
//! * Binding: `skel:skeleton` on the mesh or its nearest ancestor that has one;
//!   `skel:animationSource` on the skeleton or its nearest ancestor.
//! * Influences: `primvars:skel:jointIndices` and `primvars:skel:jointWeights`, `elementSize`
//!   influences per point (`vertex`), or one set for all points (`constant`). Indices refer
//!   to the mesh's `skel:joints` when it has them (mapped by name to the skeleton's order),
//!   else to the skeleton's `joints`.
//! * Blend shapes ([`blend_shape`](super::blend_shape)) are read on skinned meshes only (a
//!   mesh with `skel:blendShapes` but no joint influences keeps its authored points).
//! * Animation: `joints` mapped by name to the skeleton's; `translations` and `scales`
//!   interpolate linearly, `rotations` (quaternions) by slerp; an unauthored `scales` is 1.
use super::blend_shape::BlendShapes;
use super::layer::{Attribute, Layer, Prim, Value};
use super::xform::{numbers_at, sample_times, Blend};
use crate::Vec3;
use nalgebra::{Matrix4, Quaternion, UnitQuaternion, Vector3};

/// The prim at scene path `path` with its ancestors, root first.
pub fn chain<'a>(layer: &'a Layer, path: &str) -> Option<Vec<&'a Prim>> {
    let mut out = Vec::new();
    let mut level = &layer.prims;
    for name in path.trim_start_matches('/').split('/') {
        let p = level.iter().find(|p| p.name == name)?;
        out.push(p);
        level = &p.children;
    }
    (!out.is_empty()).then_some(out)
}

/// The first target of relationship `name` on `prim`.
fn target(prim: &Prim, name: &str) -> Option<String> {
    match prim.attribute(name)?.default.as_ref()? {
        Value::Path(p) => Some(p.clone()),
        Value::List(v) => v.iter().find_map(|x| match x {
            Value::Path(p) => Some(p.clone()),
            _ => None,
        }),
        _ => None,
    }
}

/// Relationship `name` of the last prim of `prims` that has it.
fn inherited_target(prims: &[&Prim], name: &str) -> Option<String> {
    prims.iter().rev().find_map(|p| target(p, name))
}

/// The tokens of the array attribute `name` on `prim` (empty if not written).
pub fn tokens(prim: &Prim, name: &str) -> Vec<String> {
    prim.attribute(name)
        .and_then(|a| a.default.as_ref())
        .and_then(Value::as_list)
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The matrices (USD row-vector form, transposed to column vectors) of `attr` at time 0.
fn matrices(attr: Option<&Attribute>, what: &str) -> Result<Vec<Matrix4<f64>>, String> {
    let Some(attr) = attr else {
        return Ok(Vec::new());
    };
    let v = numbers_at(attr, 0.0, Blend::Linear)?.unwrap_or_default();
    if v.len() % 16 != 0 || v.iter().any(|x| !x.is_finite()) {
        return Err(format!("{what} is not a list of finite 4×4 matrices"));
    }
    Ok(v.chunks_exact(16).map(Matrix4::from_column_slice).collect())
}

/// Is `Some(i)` where `name` is in `names`.
fn index_of(names: &[String], name: &str) -> Option<usize> {
    names.iter().position(|n| n == name)
}

/// A `SkelAnimation` mapped onto a skeleton's joints.
struct Animation<'a> {
    /// For each skeleton joint, its index in the animation, if animated.
    slot: Vec<Option<usize>>,
    translations: Option<&'a Attribute>,
    rotations: Option<&'a Attribute>,
    scales: Option<&'a Attribute>,
}

/// A skinned mesh's skeleton, animation and per-point joint influences.
pub struct Skin<'a> {
    /// The skeleton prim with its ancestors, root first (their transforms place the
    /// skinned points in the world).
    pub skeleton: Vec<&'a Prim>,
    parents: Vec<Option<usize>>,
    bind_inverse: Vec<Matrix4<f64>>,
    rest: Vec<Matrix4<f64>>,
    animation: Option<Animation<'a>>,
    /// `(skeleton joint, weight)` influences of each point (weights sum to 1).
    influences: Vec<Vec<(usize, f64)>>,
    geom_bind: Matrix4<f64>,
    /// Blend shapes added to the rest points before skinning.
    blend_shapes: Option<BlendShapes<'a>>,
}

impl<'a> Skin<'a> {
    /// The skin of the mesh `prim` at scene path `path` (with `ancestors`, root first) in
    /// `layer`, `None` if it is not skinned (no `primvars:skel:jointIndices`). Errors say
    /// what is missing.
    pub fn of(
        layer: &'a Layer,
        prim: &'a Prim,
        path: &str,
        ancestors: &[&'a Prim],
    ) -> Result<Option<Skin<'a>>, String> {
        let Some(indices_attr) = prim.attribute("primvars:skel:jointIndices") else {
            return Ok(None);
        };
        let mut lineage: Vec<&Prim> = ancestors.to_vec();
        lineage.push(prim);
        let skel_path = inherited_target(&lineage, "skel:skeleton").ok_or(
            "is skinned (primvars:skel:jointIndices) but bound to no Skeleton (skel:skeleton)",
        )?;
        let skeleton = chain(layer, &skel_path)
            .filter(|c| c.last().is_some_and(|s| s.type_name == "Skeleton"))
            .ok_or_else(|| format!("its skel:skeleton <{skel_path}> is not a Skeleton prim"))?;
        let skel = skeleton[skeleton.len() - 1];
        let joints = tokens(skel, "joints");
        let n = joints.len();
        let parents: Vec<Option<usize>> = joints
            .iter()
            .map(|j| j.rsplit_once('/').and_then(|(p, _)| index_of(&joints, p)))
            .collect();
        if let Some(j) = (0..n).find(|&j| parents[j].is_some_and(|p| p >= j)) {
            return Err(format!(
                "skeleton <{skel_path}> lists joint {} before its parent",
                joints[j]
            ));
        }
        let bind = matrices(skel.attribute("bindTransforms"), "bindTransforms")?;
        if bind.len() != n {
            return Err(format!(
                "skeleton <{skel_path}> has {} bindTransforms for {n} joints",
                bind.len()
            ));
        }
        let bind_inverse = bind
            .iter()
            .map(|m| m.try_inverse())
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("skeleton <{skel_path}> has a singular bindTransform"))?;
        let mut rest = matrices(skel.attribute("restTransforms"), "restTransforms")?;
        if rest.len() != n {
            rest = (0..n)
                .map(|j| match parents[j] {
                    Some(p) => bind_inverse[p] * bind[j],
                    None => bind[j],
                })
                .collect();
        }
        let anim_prim = match inherited_target(&skeleton, "skel:animationSource") {
            None => None,
            Some(path) => Some(
                chain(layer, &path)
                    .and_then(|c| c.last().copied())
                    .filter(|a| a.type_name == "SkelAnimation")
                    .ok_or_else(|| {
                        format!("skel:animationSource <{path}> is not a SkelAnimation prim")
                    })?,
            ),
        };
        let animation = anim_prim.map(|anim| {
            let names = tokens(anim, "joints");
            Animation {
                slot: joints.iter().map(|j| index_of(&names, j)).collect(),
                translations: anim.attribute("translations"),
                rotations: anim.attribute("rotations"),
                scales: anim.attribute("scales"),
            }
        });
        let blend_shapes = BlendShapes::of(layer, prim, path, anim_prim)?;
        let mesh_joints = tokens(prim, "skel:joints");
        let to_skeleton: Vec<Option<usize>> = if mesh_joints.is_empty() {
            (0..n).map(Some).collect()
        } else {
            mesh_joints.iter().map(|j| index_of(&joints, j)).collect()
        };
        let influences = influences(prim, indices_attr, &to_skeleton)?;
        let geom_bind = matrices(
            prim.attribute("primvars:skel:geomBindTransform"),
            "primvars:skel:geomBindTransform",
        )?
        .first()
        .copied()
        .unwrap_or_else(Matrix4::identity);
        Ok(Some(Skin {
            skeleton,
            parents,
            bind_inverse,
            rest,
            animation,
            influences,
            geom_bind,
            blend_shapes,
        }))
    }

    /// Times at which the animation is sampled.
    pub fn times(&self) -> Vec<f64> {
        let mut t: Vec<f64> = self
            .animation
            .iter()
            .flat_map(|a| [a.translations, a.rotations, a.scales])
            .flatten()
            .flat_map(sample_times)
            .collect();
        t.extend(self.blend_shapes.iter().flat_map(BlendShapes::times));
        t.sort_by(f64::total_cmp);
        t.dedup();
        t
    }

    /// Each joint's local transform at time `t`.
    fn locals(&self, t: f64) -> Result<Vec<Matrix4<f64>>, String> {
        let Some(a) = &self.animation else {
            return Ok(self.rest.clone());
        };
        let get = |attr: Option<&Attribute>, blend| -> Result<Vec<f64>, String> {
            Ok(match attr {
                Some(attr) => numbers_at(attr, t, blend)?.unwrap_or_default(),
                None => Vec::new(),
            })
        };
        let tr = get(a.translations, Blend::Linear)?;
        let rot = get(a.rotations, Blend::Slerp)?;
        let sc = get(a.scales, Blend::Linear)?;
        let mut out = self.rest.clone();
        for (j, slot) in a.slot.iter().enumerate() {
            let Some(k) = *slot else { continue };
            let (Some(tv), Some(rv)) = (tr.get(3 * k..3 * k + 3), rot.get(4 * k..4 * k + 4)) else {
                continue;
            };
            let s = sc.get(3 * k..3 * k + 3).unwrap_or(&[1.0, 1.0, 1.0]);
            let q = UnitQuaternion::from_quaternion(Quaternion::new(rv[0], rv[1], rv[2], rv[3]));
            let m = Matrix4::new_translation(&Vector3::new(tv[0], tv[1], tv[2]))
                * q.to_homogeneous()
                * Matrix4::new_nonuniform_scaling(&Vector3::new(s[0], s[1], s[2]));
            if m.iter().all(|x| x.is_finite()) {
                out[j] = m;
            } else {
                return Err(format!("the joint animation is not finite at time {t}"));
            }
        }
        Ok(out)
    }

    /// The skinned points (skeleton space, file units) of `points` at time `t`.
    pub fn apply(&self, points: &[Vec3], t: f64) -> Result<Vec<Vec3>, String> {
        let n = self.influences.len();
        if n != 1 && n != points.len() {
            return Err(format!(
                "primvars:skel:jointIndices gives influences for {n} points, the mesh has {}",
                points.len()
            ));
        }
        let mut rest = points.to_vec();
        if let Some(b) = &self.blend_shapes {
            b.apply(&mut rest, t)?;
        }
        let locals = self.locals(t)?;
        let mut skel: Vec<Matrix4<f64>> = Vec::with_capacity(locals.len());
        for (j, local) in locals.iter().enumerate() {
            skel.push(match self.parents[j] {
                Some(p) => skel[p] * local,
                None => *local,
            });
        }
        let skin: Vec<Matrix4<f64>> = skel
            .iter()
            .zip(&self.bind_inverse)
            .map(|(s, b)| s * b)
            .collect();
        Ok(rest
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let bound = self.geom_bind.transform_point(&(*p).into());
                let inf = &self.influences[i.min(n - 1)];
                if inf.is_empty() {
                    return bound.coords;
                }
                inf.iter().fold(Vec3::zeros(), |acc, &(j, w)| {
                    acc + w * skin[j].transform_point(&bound).coords
                })
            })
            .collect())
    }
}

/// Per-point `(skeleton joint, weight)` influences, normalised (one entry for a `constant`
/// primvar).
fn influences(
    prim: &Prim,
    indices_attr: &Attribute,
    to_skeleton: &[Option<usize>],
) -> Result<Vec<Vec<(usize, f64)>>, String> {
    let weights_attr = prim
        .attribute("primvars:skel:jointWeights")
        .ok_or("has primvars:skel:jointIndices but no primvars:skel:jointWeights")?;
    let idx = numbers_at(indices_attr, 0.0, Blend::Linear)?.unwrap_or_default();
    let w = numbers_at(weights_attr, 0.0, Blend::Linear)?.unwrap_or_default();
    let size = indices_attr
        .meta("elementSize")
        .and_then(Value::as_f64)
        .unwrap_or(1.0);
    if !(1.0..=1024.0).contains(&size) || size.fract() != 0.0 {
        return Err(format!("primvars:skel:jointIndices has elementSize {size}"));
    }
    let size = size as usize;
    if idx.len() != w.len() || idx.len() % size != 0 {
        return Err(format!(
            "primvars:skel:jointIndices and jointWeights have {} and {} values; the same \
             number, a multiple of the elementSize {size}, is expected",
            idx.len(),
            w.len()
        ));
    }
    let mut out = Vec::with_capacity(idx.len() / size);
    for (ids, ws) in idx.chunks_exact(size).zip(w.chunks_exact(size)) {
        let mut inf = Vec::with_capacity(size);
        for (&j, &wt) in ids.iter().zip(ws) {
            if wt == 0.0 {
                continue;
            }
            let joint = (j >= 0.0 && j.fract() == 0.0)
                .then(|| to_skeleton.get(j as usize).copied().flatten())
                .flatten()
                .ok_or_else(|| {
                    format!("primvars:skel:jointIndices holds {j}, which names no skeleton joint")
                })?;
            if !wt.is_finite() {
                return Err("primvars:skel:jointWeights holds a value that is not finite".into());
            }
            inf.push((joint, wt));
        }
        let sum: f64 = inf.iter().map(|(_, w)| w).sum();
        if sum.abs() > 1e-12 {
            inf.iter_mut().for_each(|(_, w)| *w /= sum);
        } else {
            inf.clear();
        }
        out.push(inf);
    }
    Ok(out)
}
