//! Attribute values over time and `UsdGeomXformable` transforms.
//!
//! Value resolution (USD "Attribute value resolution"): an attribute with `timeSamples`
//! takes its value from them — held before the first and after the last sample, linear in
//! between (arrays only if both samples have the same length, else the earlier sample is
//! held; quaternions by slerp) — and otherwise from its default. A `None` sample blocks
//! the value.
//!
//! Transforms: `xformOpOrder` lists ops applied in order, so in column-vector form the local
//! matrix is the product in list order (`["translate", "rotateXYZ", "scale"]` gives
//! `M = T · R · S`):
//!
//! ```text
//! M_local = Op₀ · Op₁ · … · Op_{n−1}        M_world = M_parent_world · M_local
//! rotateABC (degrees a, b, c): R = R_C(c) · R_B(b) · R_A(a)   (A applied first)
//! orient (w, x, y, z): unit quaternion rotation
//! transform: USD's row-major, row-vector matrix ((r0), (r1), (r2), (t, 1)), transposed
//! ```
//! `!invert!op` inverts an op; `!resetXformStack!` drops the parents' transforms.
use super::layer::{Attribute, Prim, Value};
use nalgebra::{Matrix4, Quaternion, Rotation3, UnitQuaternion, Vector3};

/// Appends the numbers of `v` (nested tuples and lists flattened) to `out`; false if `v`
/// holds anything else.
pub fn flatten(v: &Value, out: &mut Vec<f64>) -> bool {
    match v {
        Value::Tuple(items) | Value::List(items) => items.iter().all(|x| flatten(x, out)),
        Value::Numbers(x) => {
            out.extend_from_slice(x);
            true
        }
        other => match other.as_f64() {
            Some(x) => {
                out.push(x);
                true
            }
            None => false,
        },
    }
}

fn is_blocked(v: &Value) -> bool {
    matches!(v, Value::Ident(s) if s == "None")
}

/// Sorted, de-duplicated times of an attribute's (non-blocked) samples.
pub fn sample_times(attr: &Attribute) -> Vec<f64> {
    let mut t: Vec<f64> = attr
        .time_samples
        .iter()
        .flatten()
        .filter(|(t, v)| t.is_finite() && !is_blocked(v))
        .map(|(t, _)| *t)
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t
}

/// How two bracketing samples are blended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Blend {
    /// Component-wise linear.
    Linear,
    /// Quaternion (w, x, y, z) slerp, each quaternion of an array on its own.
    Slerp,
}

/// True if values of type `type_name` are stored as 32-bit floats (`float3`, `point3f[]`,
/// `texCoord2f[]`, `quatf`, `half`...): they are rounded to `f32` on reading, as USD does.
pub fn is_single_precision(type_name: &str) -> bool {
    let base = type_name.trim_end_matches("[]");
    base.starts_with("float")
        || base.starts_with("half")
        || base.ends_with('f')
        || base.ends_with('h')
}

/// The numbers of `attr` at time `t` (see the module doc); `Ok(None)` if it has no value.
/// Values of single-precision types are rounded to `f32` first. Errors name what is not
/// numeric.
pub fn numbers_at(attr: &Attribute, t: f64, blend: Blend) -> Result<Option<Vec<f64>>, String> {
    let single = is_single_precision(&attr.type_name);
    let numbers = |v: &Value| {
        let mut out = Vec::new();
        if flatten(v, &mut out) {
            if single {
                out.iter_mut().for_each(|x| *x = f64::from(*x as f32));
            }
            Ok(out)
        } else {
            Err(format!("'{}' holds a value that is not numeric", attr.name))
        }
    };
    let mut samples: Vec<(f64, &Value)> = attr
        .time_samples
        .iter()
        .flatten()
        .filter(|(t, v)| t.is_finite() && !is_blocked(v))
        .map(|(t, v)| (*t, v))
        .collect();
    if samples.is_empty() {
        return match &attr.default {
            Some(v) if !is_blocked(v) => numbers(v).map(Some),
            _ => Ok(None),
        };
    }
    samples.sort_by(|a, b| a.0.total_cmp(&b.0));
    let k = samples.partition_point(|(s, _)| *s <= t);
    if k == 0 {
        return numbers(samples[0].1).map(Some);
    }
    let (t0, v0) = samples[k - 1];
    if k == samples.len() || t0 == t {
        return numbers(v0).map(Some);
    }
    let (t1, v1) = samples[k];
    let (a, b) = (numbers(v0)?, numbers(v1)?);
    if a.len() != b.len() {
        return Ok(Some(a));
    }
    let s = (t - t0) / (t1 - t0);
    if blend == Blend::Slerp && a.len() % 4 == 0 {
        let q =
            |v: &[f64]| UnitQuaternion::from_quaternion(Quaternion::new(v[0], v[1], v[2], v[3]));
        let mut out = Vec::with_capacity(a.len());
        for (qa, qb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            let r = q(qa).slerp(&q(qb), s);
            out.extend([r.w, r.i, r.j, r.k]);
        }
        return Ok(Some(out));
    }
    Ok(Some(
        a.iter().zip(&b).map(|(x, y)| x + (y - x) * s).collect(),
    ))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum OpKind {
    Translate,
    Scale,
    /// Single-axis rotation about axis 0, 1 or 2.
    RotateAxis(usize),
    /// Three-angle rotation; the axes in the order they apply.
    Rotate3([usize; 3]),
    Orient,
    Transform,
}

#[derive(Debug, Clone)]
struct Op<'a> {
    kind: OpKind,
    attr: &'a Attribute,
    invert: bool,
}

/// The transform ops of one prim, ready to evaluate at any time.
#[derive(Debug, Clone, Default)]
pub struct XformOps<'a> {
    ops: Vec<Op<'a>>,
    /// True if `!resetXformStack!` leads the order: the parents' transforms are ignored.
    pub resets: bool,
}

fn op_kind(name: &str) -> Option<OpKind> {
    let ty = name.strip_prefix("xformOp:")?;
    let ty = ty.split(':').next()?;
    let axis = |c: u8| match c {
        b'X' => Some(0),
        b'Y' => Some(1),
        b'Z' => Some(2),
        _ => None,
    };
    Some(match ty {
        "translate" => OpKind::Translate,
        "scale" => OpKind::Scale,
        "orient" => OpKind::Orient,
        "transform" => OpKind::Transform,
        t if t.len() == 7 && t.starts_with("rotate") => OpKind::RotateAxis(axis(t.as_bytes()[6])?),
        t if t.len() == 9 && t.starts_with("rotate") => {
            let b = &t.as_bytes()[6..9];
            let order = [axis(b[0])?, axis(b[1])?, axis(b[2])?];
            if order[0] == order[1] || order[1] == order[2] || order[0] == order[2] {
                return None;
            }
            OpKind::Rotate3(order)
        }
        _ => return None,
    })
}

/// The ops of `prim`'s `xformOpOrder` (none if it has no order).
pub fn xform_ops(prim: &Prim) -> Result<XformOps<'_>, String> {
    let Some(order) = prim.attribute("xformOpOrder") else {
        return Ok(XformOps::default());
    };
    let Some(list) = order.default.as_ref().and_then(Value::as_list) else {
        return Ok(XformOps::default());
    };
    let mut out = XformOps::default();
    for (i, entry) in list.iter().enumerate() {
        let Some(name) = entry.as_str() else {
            return Err(format!("xformOpOrder[{i}] is not a token"));
        };
        if name == "!resetXformStack!" {
            if i == 0 {
                out.resets = true;
            }
            continue;
        }
        let (invert, name) = match name.strip_prefix("!invert!") {
            Some(n) => (true, n),
            None => (false, name),
        };
        let kind = op_kind(name).ok_or_else(|| {
            format!("xformOpOrder names '{name}', which is not a transform op drape knows")
        })?;
        let attr = prim.attribute(name).ok_or_else(|| {
            format!("xformOpOrder names '{name}', but the prim has no such attribute")
        })?;
        out.ops.push(Op { kind, attr, invert });
    }
    Ok(out)
}

fn rotation(axis: usize, degrees: f64) -> Matrix4<f64> {
    let a = degrees.to_radians();
    let v = match axis {
        0 => Vector3::x_axis(),
        1 => Vector3::y_axis(),
        _ => Vector3::z_axis(),
    };
    Rotation3::from_axis_angle(&v, a).to_homogeneous()
}

impl XformOps<'_> {
    /// Times at which any op is sampled.
    pub fn times(&self) -> Vec<f64> {
        self.ops.iter().flat_map(|o| sample_times(o.attr)).collect()
    }

    /// The local matrix (column-vector convention) at time `t`.
    pub fn matrix_at(&self, t: f64) -> Result<Matrix4<f64>, String> {
        let mut m = Matrix4::identity();
        for op in &self.ops {
            let blend = match op.kind {
                OpKind::Orient => Blend::Slerp,
                _ => Blend::Linear,
            };
            let name = &op.attr.name;
            let v = numbers_at(op.attr, t, blend)?
                .ok_or_else(|| format!("transform op '{name}' has no value"))?;
            let want = match op.kind {
                OpKind::Translate | OpKind::Scale | OpKind::Rotate3(_) => 3,
                OpKind::RotateAxis(_) => 1,
                OpKind::Orient => 4,
                OpKind::Transform => 16,
            };
            if v.len() != want || !v.iter().all(|x| x.is_finite()) {
                return Err(format!(
                    "transform op '{name}' needs {want} finite numbers, has {}",
                    v.len()
                ));
            }
            let mut op_m = match op.kind {
                OpKind::Translate => Matrix4::new_translation(&Vector3::new(v[0], v[1], v[2])),
                OpKind::Scale => Matrix4::new_nonuniform_scaling(&Vector3::new(v[0], v[1], v[2])),
                OpKind::RotateAxis(a) => rotation(a, v[0]),
                OpKind::Rotate3(order) => {
                    // v holds the angles per letter of the op name, in that order.
                    rotation(order[2], v[2]) * rotation(order[1], v[1]) * rotation(order[0], v[0])
                }
                OpKind::Orient => {
                    UnitQuaternion::from_quaternion(Quaternion::new(v[0], v[1], v[2], v[3]))
                        .to_homogeneous()
                }
                OpKind::Transform => Matrix4::from_column_slice(&v),
            };
            if op.invert {
                op_m = op_m
                    .try_inverse()
                    .ok_or_else(|| format!("transform op '{name}' is inverted but singular"))?;
            }
            m *= op_m;
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse;
    use super::*;
    use nalgebra::Vector4;

    fn prim(body: &str) -> Prim {
        let text = format!("#usda 1.0\ndef Xform \"X\" {{\n{body}\n}}\n");
        parse(&text).unwrap().prims.remove(0)
    }

    fn apply(m: &Matrix4<f64>, p: [f64; 3]) -> Vector4<f64> {
        m * Vector4::new(p[0], p[1], p[2], 1.0)
    }

    #[test]
    fn trs_order_scales_then_rotates_then_translates() {
        let p = prim(
            "double3 xformOp:translate = (1, 2, 3)\n\
             float3 xformOp:rotateXYZ = (0, 0, 90)\n\
             float3 xformOp:scale = (2, 2, 2)\n\
             uniform token[] xformOpOrder = [\"xformOp:translate\", \"xformOp:rotateXYZ\", \"xformOp:scale\"]",
        );
        let m = xform_ops(&p).unwrap().matrix_at(0.0).unwrap();
        // (1,0,0) → scale (2,0,0) → rotate 90° about Z (0,2,0) → translate (1,4,3).
        let q = apply(&m, [1.0, 0.0, 0.0]);
        assert!((q - Vector4::new(1.0, 4.0, 3.0, 1.0)).norm() < 1e-12, "{q}");
    }

    #[test]
    fn rotate_xyz_applies_x_first() {
        let p = prim(
            "float3 xformOp:rotateXYZ = (90, 90, 0)\n\
             uniform token[] xformOpOrder = [\"xformOp:rotateXYZ\"]",
        );
        let m = xform_ops(&p).unwrap().matrix_at(0.0).unwrap();
        // y → (X 90°) z → (Y 90°) x.
        let q = apply(&m, [0.0, 1.0, 0.0]);
        assert!((q - Vector4::new(1.0, 0.0, 0.0, 1.0)).norm() < 1e-12, "{q}");
    }

    #[test]
    fn matrix_is_row_major_with_translation_in_the_last_row_and_invert_works() {
        let p = prim(
            "matrix4d xformOp:transform = ( (0, 1, 0, 0), (-1, 0, 0, 0), (0, 0, 1, 0), (5, 6, 7, 1) )\n\
             uniform token[] xformOpOrder = [\"xformOp:transform\"]",
        );
        let m = xform_ops(&p).unwrap().matrix_at(0.0).unwrap();
        // Row-vector: (1,0,0)·M = first row (0,1,0), plus translation.
        let q = apply(&m, [1.0, 0.0, 0.0]);
        assert!((q - Vector4::new(5.0, 7.0, 7.0, 1.0)).norm() < 1e-12, "{q}");
        let p = prim(
            "double3 xformOp:translate = (1, 2, 3)\n\
             uniform token[] xformOpOrder = [\"!invert!xformOp:translate\"]",
        );
        let m = xform_ops(&p).unwrap().matrix_at(0.0).unwrap();
        assert_eq!(apply(&m, [0.0; 3]), Vector4::new(-1.0, -2.0, -3.0, 1.0));
    }

    #[test]
    fn time_samples_are_held_outside_and_linear_inside() {
        let p = prim(
            "double3 xformOp:translate.timeSamples = { 10: (0, 0, 0), 20: (10, 0, 0), 30: None }\n\
             uniform token[] xformOpOrder = [\"xformOp:translate\"]",
        );
        let ops = xform_ops(&p).unwrap();
        assert_eq!(ops.times(), vec![10.0, 20.0]);
        let x = |t| ops.matrix_at(t).unwrap()[(0, 3)];
        assert_eq!((x(0.0), x(15.0), x(25.0), x(40.0)), (0.0, 5.0, 10.0, 10.0));
    }

    #[test]
    fn orient_quaternions_slerp() {
        let p = prim(
            "quatf xformOp:orient.timeSamples = { 0: (1, 0, 0, 0), 1: (0, 0, 0, 1) }\n\
             uniform token[] xformOpOrder = [\"xformOp:orient\"]",
        );
        let m = xform_ops(&p).unwrap().matrix_at(0.5).unwrap();
        // Halfway to 180° about Z is 90° about Z: x → y.
        let q = apply(&m, [1.0, 0.0, 0.0]);
        assert!((q - Vector4::new(0.0, 1.0, 0.0, 1.0)).norm() < 1e-12, "{q}");
    }

    #[test]
    fn missing_or_malformed_ops_are_errors() {
        let missing = prim("uniform token[] xformOpOrder = [\"xformOp:translate\"]");
        assert!(xform_ops(&missing).is_err());
        let unknown =
            prim("float xformOp:shear = 1\nuniform token[] xformOpOrder = [\"xformOp:shear\"]");
        assert!(xform_ops(&unknown).is_err());
        let short = prim(
            "double3 xformOp:translate = (1, 2)\nuniform token[] xformOpOrder = [\"xformOp:translate\"]",
        );
        assert!(xform_ops(&short).unwrap().matrix_at(0.0).is_err());
    }
}
