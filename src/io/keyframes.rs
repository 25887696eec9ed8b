//! Reading the keyframe targets q*_n of the control objective
//! ([`crate::control::keyframes`]; docs/reference.md, "Inputs") from files.
//!
//! [`load`] reads the targets of one garment from a source:
//!
//! * the scene's own file (the same path as `Garment::source`): the importer's
//!   `Garment::keyframes` (glTF morph targets `key_<frame>`, USD prims
//!   `<garment>_key_<frame>`), object-local per particle;
//! * another `.gltf`/`.glb`/`.usd*`/`.geo`/`.json` file: the garment of the same name in it,
//!   read with [`crate::io::select`]; its keyframes go to world space through *that* file's
//!   transform (so its units and placement count), then to this garment's particles
//!   through both garments' output points (source vertex order), so the two files may weld
//!   seams differently as long as they have the same vertices;
//! * a `.mdd` file ([`mdd`]): one sample per keyframe, `frame = time × fps`, points in the
//!   garment's source vertex order, object-local, converted with the garment's transform.
//!
//! World space is `x = world_linear · p + world_translation` (source axes; an `--up`
//! conversion applies to caches only, so keyframe files must use the scene's up axis).
//! Where several source points show one particle (split seam vertices) the target is their
//! mean; copies farther than [`SEAM_TOLERANCE`] from it are an error. A particle no point
//! shows gets weight 0. Every problem of the input is an [`Error::Input`] (exit 2) naming
//! the file and the keyframe, with the fix.
pub mod mdd;

#[cfg(test)]
mod tests;

use crate::control::keyframes::Keyframe;
use crate::error::{Error, Result};
use crate::io::Format;
use crate::scene::Garment;
use crate::{Mat3, Vec3};
use std::path::Path;

/// Largest distance (m) between the copies of one split seam vertex in a keyframe.
pub const SEAM_TOLERANCE: f64 = 1e-3;

/// A target before the checks: positions per particle or per output point, world space.
struct Shape {
    frame: i32,
    name: String,
    points: Points,
}

enum Points {
    /// One world position per particle of the garment.
    Particles(Vec<Vec3>),
    /// One world position per output point (source vertex order) of the garment.
    Output(Vec<Vec3>),
}

/// Keyframes of `garment` from `source` (see the module doc), checked against the frame
/// range `frames = (first, last)` of the run: every keyframe frame must lie in
/// `first + 1 ..= last` because frame `first` is the given start state. Sorted by frame.
pub fn load(
    source: &Path,
    garment: &Garment,
    fps: f64,
    frames: (i32, i32),
) -> Result<Vec<Keyframe>> {
    let is_mdd = source
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("mdd"));
    let (shapes, file_weights) = if is_mdd {
        (mdd_shapes(source, garment, fps)?, None)
    } else if same_file(source, &garment.source) {
        (own_shapes(garment), None)
    } else {
        other_file_shapes(source, garment, fps)?
    };
    if shapes.is_empty() {
        return Err(Error::input(
            source,
            Some(&garment.name),
            format!(
                "holds no keyframes for garment '{}'; add shape keys named key_<frame> (glTF), \
                 mesh prims named {}_key_<frame> (USD), or give an MDD file with one sample \
                 per keyframe",
                garment.name, garment.name
            ),
        ));
    }
    let base = base_weights(source, garment, file_weights, &shapes)?;
    let mut out: Vec<Keyframe> = Vec::with_capacity(shapes.len());
    for shape in shapes {
        let err = |m: String| Error::input(source, Some(&shape.name), m);
        check_frame(shape.frame, frames).map_err(err)?;
        if let Some(k) = out.iter().find(|k| k.frame == shape.frame) {
            return Err(err(format!(
                "targets frame {} like '{}'; keep one keyframe per frame",
                shape.frame, k.name
            )));
        }
        let (positions, shown) = match shape.points {
            Points::Particles(p) => {
                check_count(&p, garment.positions.len(), "particles", garment).map_err(err)?;
                check_finite(&p).map_err(err)?;
                let shown = vec![true; p.len()];
                (p, shown)
            }
            Points::Output(p) => {
                check_count(&p, garment.output_points.len(), "vertices", garment).map_err(err)?;
                check_finite(&p).map_err(err)?;
                average_points(garment, &p).map_err(|e| match e {
                    Fault::Input(m) => err(m),
                    Fault::Internal(m) => Error::Internal(m),
                })?
            }
        };
        let weights = base
            .iter()
            .zip(&shown)
            .map(|(&w, &s)| if s { w } else { 0.0 })
            .collect();
        out.push(Keyframe {
            frame: shape.frame,
            positions,
            weights,
            name: shape.name,
        });
    }
    out.sort_by_key(|k| k.frame);
    Ok(out)
}

/// True if `a` and `b` name the same file (canonical paths, else the paths as given).
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// How a keyframe at `frame` of `garment` read from a file like `file` is named there.
fn key_name(file: &Path, garment: &str, frame: i32) -> String {
    match Format::of(file) {
        Ok(Format::Usd) | Ok(Format::HoudiniGeo) => format!("{garment}_key_{frame}"),
        _ => format!("key_{frame}"),
    }
}

fn to_world(linear: &Mat3, translation: &Vec3, p: &[Vec3]) -> Vec<Vec3> {
    p.iter().map(|q| linear * q + translation).collect()
}

/// The importer's keyframes of the garment itself (object-local, per particle).
fn own_shapes(g: &Garment) -> Vec<Shape> {
    g.keyframes
        .iter()
        .map(|(frame, p)| Shape {
            frame: *frame,
            name: key_name(&g.source, &g.name, *frame),
            points: Points::Particles(to_world(&g.world_linear, &g.world_translation, p)),
        })
        .collect()
}

/// The keyframes of the garment of the same name in another scene file, per output point,
/// and that garment's `key_weight` per output point if it has one.
fn other_file_shapes(
    source: &Path,
    g: &Garment,
    fps: f64,
) -> Result<(Vec<Shape>, Option<Vec<f64>>)> {
    Format::of(source).map_err(|_| {
        Error::input(
            source,
            Some(&g.name),
            "is not a keyframe source; give a .gltf/.glb or .usda/.usdc/.usd file with the \
             keyframe shapes, or an .mdd point cache",
        )
    })?;
    let mut scene = crate::io::select(source, std::slice::from_ref(&g.name), &[], Some(fps))?.scene;
    let Some(other) = scene.garments.pop() else {
        return Err(Error::input(
            source,
            Some(&g.name),
            "has no such garment; name the keyframe shapes after the garment",
        ));
    };
    let per_point = |values: &[Vec3]| -> Result<Vec<Vec3>> {
        other
            .output_points
            .iter()
            .map(|&i| {
                values.get(i).copied().ok_or_else(|| {
                    Error::Internal(format!("output point of particle {i} out of range"))
                })
            })
            .collect()
    };
    let mut shapes = Vec::with_capacity(other.keyframes.len());
    for (frame, p) in &other.keyframes {
        let world = to_world(&other.world_linear, &other.world_translation, p);
        shapes.push(Shape {
            frame: *frame,
            name: key_name(&other.source, &g.name, *frame),
            points: Points::Output(per_point(&world)?),
        });
    }
    let weights = match &other.key_weight {
        Some(w) => Some(
            other
                .output_points
                .iter()
                .map(|&i| w.get(i).copied().unwrap_or(0.0))
                .collect(),
        ),
        None => None,
    };
    Ok((shapes, weights))
}

/// The samples of an MDD file as keyframes (object-local per output point).
fn mdd_shapes(source: &Path, g: &Garment, fps: f64) -> Result<Vec<Shape>> {
    let file = source
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.display().to_string());
    Ok(mdd::read_mdd(source, &g.name, fps)?
        .into_iter()
        .map(|s| Shape {
            frame: s.frame,
            name: format!("{file} sample {} (frame {})", s.index + 1, s.frame),
            points: Points::Output(to_world(&g.world_linear, &g.world_translation, &s.points)),
        })
        .collect())
}

/// Per-particle weights: the garment's `key_weight`, else the source file's (per output
/// point, the largest over a particle's points), else 1; clamped to [0, 1].
fn base_weights(
    source: &Path,
    g: &Garment,
    file_weights: Option<Vec<f64>>,
    shapes: &[Shape],
) -> Result<Vec<f64>> {
    let n = g.positions.len();
    let names: Vec<&str> = shapes.iter().map(|s| s.name.as_str()).collect();
    let err = |m: String| Error::input(source, Some(&g.name), m);
    let raw = match (&g.key_weight, file_weights) {
        (Some(w), _) => {
            if w.len() != n {
                return Err(err(format!(
                    "key_weight has {} values for {n} particles; give one weight per vertex",
                    w.len()
                )));
            }
            w.clone()
        }
        (None, Some(w)) if w.len() == g.output_points.len() => {
            let mut out = vec![0.0f64; n];
            for (&i, &x) in g.output_points.iter().zip(&w) {
                if let Some(slot) = out.get_mut(i) {
                    *slot = if x.is_nan() { x } else { slot.max(x) };
                }
            }
            out
        }
        _ => vec![1.0; n],
    };
    if let Some(i) = raw.iter().position(|w| !w.is_finite()) {
        return Err(err(format!(
            "key_weight of particle {i} is not a finite number; paint weights in [0, 1] \
             (keyframes {})",
            names.join(", ")
        )));
    }
    let w: Vec<f64> = raw.iter().map(|w| w.clamp(0.0, 1.0)).collect();
    if w.iter().all(|&x| x == 0.0) {
        return Err(err(format!(
            "key_weight is 0 on every vertex, so keyframes {} constrain nothing; paint a \
             weight above 0 where the cloth must match (or remove key_weight)",
            names.join(", ")
        )));
    }
    Ok(w)
}

pub(crate) fn check_frame(
    frame: i32,
    (first, last): (i32, i32),
) -> std::result::Result<(), String> {
    if frame > first && frame <= last {
        return Ok(());
    }
    let range = if first < last {
        format!("{}..={last}", i64::from(first) + 1)
    } else {
        "empty".to_string()
    };
    Err(format!(
        "targets frame {frame}, outside the controllable frames {range} of the run \
         {first}..={last} (the first frame {first} is the given start state and cannot be \
         controlled); move the keyframe or change --frames"
    ))
}

fn check_count(
    p: &[Vec3],
    want: usize,
    what: &str,
    g: &Garment,
) -> std::result::Result<(), String> {
    if p.len() == want {
        return Ok(());
    }
    Err(format!(
        "has {} points but garment '{}' has {want} {what}; a keyframe must be a copy of the \
         garment with the same vertices in the same order",
        p.len(),
        g.name
    ))
}

fn check_finite(p: &[Vec3]) -> std::result::Result<(), String> {
    match p.iter().position(|q| !q.iter().all(|x| x.is_finite())) {
        None => Ok(()),
        Some(i) => Err(format!(
            "point {i} is not a finite number (NaN or infinity); fix the shape and export again"
        )),
    }
}

enum Fault {
    Input(String),
    Internal(String),
}

/// Particle targets from output-point targets: the mean of each particle's points (and
/// whether any point shows the particle). Points farther than [`SEAM_TOLERANCE`] from their
/// particle's mean are an input error.
fn average_points(g: &Garment, p: &[Vec3]) -> std::result::Result<(Vec<Vec3>, Vec<bool>), Fault> {
    let n = g.positions.len();
    let mut sum = vec![Vec3::zeros(); n];
    let mut count = vec![0usize; n];
    for (q, &i) in p.iter().zip(&g.output_points) {
        let (Some(s), Some(c)) = (sum.get_mut(i), count.get_mut(i)) else {
            return Err(Fault::Internal(format!(
                "garment '{}' maps an output point to particle {i} of {n}",
                g.name
            )));
        };
        *s += q;
        *c += 1;
    }
    let rest = g.world_positions();
    let mean: Vec<Vec3> = (0..n)
        .map(|i| match count[i] {
            0 => rest[i],
            c => sum[i] / c as f64,
        })
        .collect();
    for (k, (q, &i)) in p.iter().zip(&g.output_points).enumerate() {
        let d = (q - mean[i]).norm();
        if d > SEAM_TOLERANCE {
            return Err(Fault::Input(format!(
                "point {k} lies {:.1} mm from the other copies of its seam vertex (particle \
                 {i}); split copies of one vertex must coincide: move them together in the \
                 keyframe shape",
                d * 1e3
            )));
        }
    }
    Ok((mean, count.iter().map(|&c| c > 0).collect()))
}
