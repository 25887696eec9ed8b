//! UsdSkel blend shapes: per-point offsets added to a skinned mesh's rest points before
//! skinning, weighted by the `SkelAnimation`'s `blendShapeWeights` (USD "UsdSkel: Schemas
//! In-Depth", "BlendShape" and "Blend Shape Inbetweens").
//!
//! A blend shape `s` with weight `w_s(t)` is a piecewise-linear path through its sub-shapes,
//! sorted by their weight: the rest shape (weight 0, no offset), its inbetweens
//! (`inbetweens:NAME`, weight in the attribute's `weight` metadata) and the primary shape
//! (`offsets`, weight 1). With the two sub-shapes `a`, `b` bounding `w` (the first two
//! below the lowest weight, the last two above the highest: the path extrapolates):
//! ```text
//! α        = (w − w_a) / (w_b − w_a)
//! offset_s = (1 − α) · offsets_a + α · offsets_b
//! p_i(t)   = rest_i + Σ_s offset_s,i          (i in the shape's pointIndices, or every point)
//! ```
//! `p(t)` then goes through linear blend skinning ([`skel`](super::skel)).
//!
//! * Binding: the mesh's `skel:blendShapes` names each shape, `skel:blendShapeTargets` its
//!   `BlendShape` prim (same order).
//! * Animation: the `SkelAnimation`'s `blendShapes` names, matched to the mesh's by name,
//!   and `blendShapeWeights` (one weight per name, interpolated linearly); a shape the
//!   animation does not name has weight 0.
//! * Normal offsets are ignored (drape does not read normals).
use super::layer::{Attribute, Layer, Prim, Value};
use super::skel::{chain, tokens};
use super::xform::{numbers_at, sample_times, Blend};
use crate::Vec3;

/// Largest number of blend shapes on one mesh (a budget against hostile files).
const MAX_SHAPES: usize = 4096;

/// One blend shape: the points it moves and its sub-shapes sorted by weight.
struct Shape {
    /// `pointIndices`, or `None` when the offsets cover every point in order.
    points: Option<Vec<usize>>,
    /// `(weight, offsets)`; the rest shape (weight 0) has no offsets.
    subs: Vec<(f64, Option<Vec<Vec3>>)>,
}

impl Shape {
    /// `(sub-shape, factor)` pairs whose offsets, scaled, make the shape at weight `w`
    /// (the formula of the module docs).
    fn factors(&self, w: f64) -> [(usize, f64); 2] {
        let s = &self.subs;
        let upper = s.partition_point(|(sw, _)| *sw <= w).clamp(1, s.len() - 1);
        let (wa, wb) = (s[upper - 1].0, s[upper].0);
        let alpha = (w - wa) / (wb - wa);
        [(upper - 1, 1.0 - alpha), (upper, alpha)]
    }

    /// Adds this shape's offsets at weight `w` to `points`.
    fn add(&self, w: f64, points: &mut [Vec3]) {
        for (sub, f) in self.factors(w) {
            let Some(offsets) = &self.subs[sub].1 else {
                continue;
            };
            if f == 0.0 {
                continue;
            }
            match &self.points {
                Some(idx) => idx
                    .iter()
                    .zip(offsets)
                    .for_each(|(&i, o)| points[i] += f * o),
                None => points
                    .iter_mut()
                    .zip(offsets)
                    .for_each(|(p, o)| *p += f * o),
            }
        }
    }
}

/// The blend shapes bound to one mesh and the animation that weights them.
pub struct BlendShapes<'a> {
    shapes: Vec<Shape>,
    /// `blendShapeWeights` of the animation, if it has one.
    weights: Option<&'a Attribute>,
    /// For each shape, its index among the animation's `blendShapes`.
    slot: Vec<Option<usize>>,
}

/// The array value of `attr` as points, or an error naming it.
fn vectors(attr: &Attribute) -> Result<Vec<Vec3>, String> {
    let v = numbers_at(attr, 0.0, Blend::Linear)?.unwrap_or_default();
    if v.len() % 3 != 0 || v.iter().any(|x| !x.is_finite()) {
        return Err(format!("'{}' is not a list of finite vectors", attr.name));
    }
    Ok(v.chunks_exact(3)
        .map(|c| Vec3::new(c[0], c[1], c[2]))
        .collect())
}

/// All targets of relationship `name` on `prim`, relative paths made absolute against
/// `prim_path`.
fn targets(prim: &Prim, prim_path: &str, name: &str) -> Vec<String> {
    let absolute = |p: &str| {
        if p.starts_with('/') {
            p.to_string()
        } else {
            format!("{prim_path}/{p}")
        }
    };
    match prim.attribute(name).and_then(|a| a.default.as_ref()) {
        Some(Value::Path(p)) => vec![absolute(p)],
        Some(Value::List(v)) => v
            .iter()
            .filter_map(|x| match x {
                Value::Path(p) => Some(absolute(p)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// One `BlendShape` prim read into its sub-shapes.
fn shape(prim: &Prim, path: &str) -> Result<Shape, String> {
    let offsets = prim
        .attribute("offsets")
        .ok_or_else(|| format!("blend shape <{path}> has no offsets"))
        .and_then(vectors)?;
    let points = match prim.attribute("pointIndices") {
        None => None,
        Some(attr) => {
            let v = numbers_at(attr, 0.0, Blend::Linear)?.unwrap_or_default();
            if v.len() != offsets.len() {
                return Err(format!(
                    "blend shape <{path}> has {} pointIndices for {} offsets",
                    v.len(),
                    offsets.len()
                ));
            }
            if v.iter().any(|&i| !(i >= 0.0 && i.fract() == 0.0)) {
                return Err(format!(
                    "blend shape <{path}> has a pointIndex that is not a point"
                ));
            }
            Some(v.iter().map(|&i| i as usize).collect())
        }
    };
    let mut subs = vec![(0.0, None), (1.0, Some(offsets))];
    for attr in &prim.attributes {
        let Some(name) = attr.name.strip_prefix("inbetweens:") else {
            continue;
        };
        if name.contains(':') {
            continue; // inbetweens:NAME:normalOffsets
        }
        let w = attr.meta("weight").and_then(Value::as_f64).ok_or_else(|| {
            format!("blend shape <{path}>: inbetween '{name}' has no weight metadata")
        })?;
        let o = vectors(attr)?;
        if o.len() != subs[1].1.as_ref().map_or(0, Vec::len) {
            return Err(format!(
                "blend shape <{path}>: inbetween '{name}' has {} offsets, the shape has {}",
                o.len(),
                subs[1].1.as_ref().map_or(0, Vec::len)
            ));
        }
        if !w.is_finite() || w == 0.0 || w == 1.0 {
            return Err(format!(
                "blend shape <{path}>: inbetween '{name}' has weight {w} (0 and 1 are the \
                 rest and primary shapes)"
            ));
        }
        subs.push((w, Some(o)));
    }
    subs.sort_by(|a, b| a.0.total_cmp(&b.0));
    if subs.windows(2).any(|p| p[0].0 == p[1].0) {
        return Err(format!(
            "blend shape <{path}> has two inbetweens of one weight"
        ));
    }
    Ok(Shape { points, subs })
}

impl<'a> BlendShapes<'a> {
    /// The blend shapes of the mesh `prim` at scene path `prim_path`, weighted by the
    /// `SkelAnimation` `animation`; `None` if the mesh binds none (`skel:blendShapes`).
    pub fn of(
        layer: &'a Layer,
        prim: &'a Prim,
        prim_path: &str,
        animation: Option<&'a Prim>,
    ) -> Result<Option<BlendShapes<'a>>, String> {
        let names = tokens(prim, "skel:blendShapes");
        if names.is_empty() {
            return Ok(None);
        }
        if names.len() > MAX_SHAPES {
            return Err(format!(
                "binds {} blend shapes (at most {MAX_SHAPES} are read)",
                names.len()
            ));
        }
        let paths = targets(prim, prim_path, "skel:blendShapeTargets");
        if paths.len() != names.len() {
            return Err(format!(
                "skel:blendShapes names {} shapes but skel:blendShapeTargets has {} targets",
                names.len(),
                paths.len()
            ));
        }
        let mut shapes = Vec::with_capacity(paths.len());
        for path in &paths {
            let target = chain(layer, path)
                .and_then(|c| c.last().copied())
                .filter(|p| p.type_name == "BlendShape")
                .ok_or_else(|| format!("skel:blendShapeTargets <{path}> is not a BlendShape"))?;
            shapes.push(shape(target, path)?);
        }
        let anim_names = animation
            .map(|a| tokens(a, "blendShapes"))
            .unwrap_or_default();
        Ok(Some(BlendShapes {
            shapes,
            weights: animation.and_then(|a| a.attribute("blendShapeWeights")),
            slot: names
                .iter()
                .map(|n| anim_names.iter().position(|a| a == n))
                .collect(),
        }))
    }

    /// Times at which the weights are sampled.
    pub fn times(&self) -> Vec<f64> {
        self.weights.map(sample_times).unwrap_or_default()
    }

    /// Adds every shape's offsets at time `t` to the rest `points`.
    pub fn apply(&self, points: &mut [Vec3], t: f64) -> Result<(), String> {
        let n = points.len();
        for s in &self.shapes {
            let count = s.subs[1].1.as_ref().map_or(0, Vec::len);
            let fits = match &s.points {
                Some(idx) => idx.iter().all(|&i| i < n),
                None => count == n,
            };
            if !fits {
                return Err(format!(
                    "a blend shape's offsets ({count}) do not fit the mesh's {n} points"
                ));
            }
        }
        let weights = match self.weights {
            Some(attr) => numbers_at(attr, t, Blend::Linear)?.unwrap_or_default(),
            None => Vec::new(),
        };
        for (s, slot) in self.shapes.iter().zip(&self.slot) {
            let w = slot.and_then(|k| weights.get(k).copied()).unwrap_or(0.0);
            if !w.is_finite() {
                return Err(format!("blendShapeWeights is not finite at time {t}"));
            }
            if w != 0.0 {
                s.add(w, points);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_with(subs: &[(f64, f64)]) -> Shape {
        let mut s: Vec<(f64, Option<Vec<Vec3>>)> = vec![(0.0, None)];
        s.extend(
            subs.iter()
                .map(|&(w, x)| (w, Some(vec![Vec3::new(x, 0.0, 0.0)]))),
        );
        Shape {
            points: None,
            subs: s,
        }
    }

    fn moved(s: &Shape, w: f64) -> f64 {
        let mut p = [Vec3::zeros()];
        s.add(w, &mut p);
        p[0].x
    }

    /// Primary only: the offset scales linearly with the weight, beyond 1 and below 0 too.
    #[test]
    fn primary_shape_is_linear_in_its_weight() {
        let s = shape_with(&[(1.0, 2.0)]);
        for w in [-0.5, 0.0, 0.25, 1.0, 1.5] {
            assert!((moved(&s, w) - 2.0 * w).abs() < 1e-15, "w = {w}");
        }
    }

    /// An inbetween at 0.5 with offset 3 (primary 2): the path 0 → 3 → 2 is piecewise
    /// linear, and extrapolates along its end segments.
    #[test]
    fn inbetween_makes_a_piecewise_linear_path() {
        let s = shape_with(&[(0.5, 3.0), (1.0, 2.0)]);
        let want = |w: f64| {
            if w <= 0.5 {
                6.0 * w
            } else {
                3.0 - 2.0 * (w - 0.5)
            }
        };
        for w in [-0.25, 0.1, 0.5, 0.75, 1.0, 1.25] {
            assert!((moved(&s, w) - want(w)).abs() < 1e-12, "w = {w}");
        }
    }
}
