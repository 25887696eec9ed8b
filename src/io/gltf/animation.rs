//! Keyframe animation of node transforms and morph weights (glTF 2.0 §3.11, Appendix C).
//!
//! A sampler maps time `t` (seconds) to a value of `width` numbers from keyframe times
//! `t_0 < … < t_{n−1}` and values `v_k`. Before `t_0` it holds `v_0`, after `t_{n−1}` it
//! holds `v_{n−1}`; in between, with `t_k ≤ t < t_{k+1}`, `t_d = t_{k+1} − t_k` and
//! `s = (t − t_k) / t_d`:
//!
//! ```text
//! STEP         v(t) = v_k
//! LINEAR       v(t) = (1 − s) v_k + s v_{k+1}
//!              rotations: slerp(q_k, q_{k+1}, s), shortest path:
//!                a = arccos |q_k · q_{k+1}|,  σ = sign(q_k · q_{k+1})
//!                q(t) = sin(a(1 − s))/sin(a) q_k + σ sin(a s)/sin(a) q_{k+1}
//! CUBICSPLINE  v(t) = (2s³ − 3s² + 1) v_k + t_d (s³ − 2s² + s) b_k
//!                   + (−2s³ + 3s²) v_{k+1} + t_d (s³ − s²) a_{k+1}
//!              with in-tangents a_k and out-tangents b_k stored as [a_k, v_k, b_k]
//!              per keyframe; rotations are normalised afterwards.
//! ```
//!
//! Each glTF animation is a clip (Blender exports one per action). One clip plays, from
//! t = 0: the one the user names, else the file's first, which is the action Blender makes
//! active when it imports the file (the others become muted NLA tracks). Within a clip,
//! where two channels drive the same property, the later one wins.
use super::source::Source;
use crate::error::Result;

/// Interpolation of a sampler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Interpolation {
    /// Hold each keyframe's value until the next.
    Step,
    /// Linear; slerp for rotations.
    Linear,
    /// Cubic Hermite spline with stored tangents.
    CubicSpline,
}

/// Keyframes of one animated property.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sampler {
    /// Keyframe times (s), finite and non-decreasing, at least one.
    pub times: Vec<f64>,
    /// Output values, `width` per keyframe (`3 × width` for cubic splines: a_k, v_k, b_k).
    pub values: Vec<f64>,
    /// Numbers per value (3 for translation and scale, 4 for rotation, targets for weights).
    pub width: usize,
    /// Interpolation.
    pub interpolation: Interpolation,
}

impl Sampler {
    /// Checks the shape of the keyframes; the error says what is wrong.
    pub fn new(
        times: Vec<f64>,
        values: Vec<f64>,
        width: usize,
        interpolation: Interpolation,
    ) -> std::result::Result<Sampler, String> {
        if times.is_empty() {
            return Err("has no keyframes".into());
        }
        if let Some(k) = times.iter().position(|t| !t.is_finite()) {
            return Err(format!("has a non-finite time at keyframe {k}"));
        }
        if let Some(k) = times.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!("has decreasing times at keyframe {}", k + 1));
        }
        let per_key = match interpolation {
            Interpolation::CubicSpline => 3 * width,
            _ => width,
        };
        if width == 0 || values.len() != per_key * times.len() {
            return Err(format!(
                "has {} output numbers for {} keyframes of {width} numbers{}",
                values.len(),
                times.len(),
                if interpolation == Interpolation::CubicSpline {
                    " with in- and out-tangents"
                } else {
                    ""
                }
            ));
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err("has non-finite output values".into());
        }
        Ok(Sampler {
            times,
            values,
            width,
            interpolation,
        })
    }

    /// Keyframe `k`'s value (the middle element for cubic splines).
    fn value(&self, k: usize) -> &[f64] {
        let w = self.width;
        match self.interpolation {
            Interpolation::CubicSpline => &self.values[(3 * k + 1) * w..(3 * k + 2) * w],
            _ => &self.values[k * w..(k + 1) * w],
        }
    }

    /// Writes the value at time `t` into `out` (`width` numbers); `rotation` selects
    /// slerp for linear keys and normalisation after cubic ones.
    pub fn sample(&self, t: f64, rotation: bool, out: &mut [f64]) {
        let n = self.times.len();
        let w = self.width;
        if n == 1 || t <= self.times[0] {
            out.copy_from_slice(self.value(0));
            return;
        }
        if t >= self.times[n - 1] {
            out.copy_from_slice(self.value(n - 1));
            return;
        }
        // t_0 < t < t_{n−1}: k is the last keyframe with t_k ≤ t, so k + 1 < n.
        let k = self.times.partition_point(|&tk| tk <= t) - 1;
        let td = self.times[k + 1] - self.times[k];
        let s = if td > 0.0 {
            (t - self.times[k]) / td
        } else {
            1.0
        };
        match self.interpolation {
            Interpolation::Step => out.copy_from_slice(self.value(k)),
            Interpolation::Linear if rotation && w == 4 => {
                let q = |k: usize| {
                    let v = self.value(k);
                    [v[0], v[1], v[2], v[3]]
                };
                out.copy_from_slice(&slerp(q(k), q(k + 1), s));
            }
            Interpolation::Linear => {
                let (a, b) = (self.value(k), self.value(k + 1));
                for i in 0..w {
                    out[i] = (1.0 - s) * a[i] + s * b[i];
                }
            }
            Interpolation::CubicSpline => {
                let at = |k: usize, part: usize| &self.values[(3 * k + part) * w..];
                let (v0, b0, v1, a1) = (at(k, 1), at(k, 2), at(k + 1, 1), at(k + 1, 0));
                let (s2, s3) = (s * s, s * s * s);
                let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
                let h10 = td * (s3 - 2.0 * s2 + s);
                let h01 = -2.0 * s3 + 3.0 * s2;
                let h11 = td * (s3 - s2);
                for i in 0..w {
                    out[i] = h00 * v0[i] + h10 * b0[i] + h01 * v1[i] + h11 * a1[i];
                }
                if rotation && w == 4 {
                    normalize4(out);
                }
            }
        }
    }
}

/// Spherical linear interpolation of unit quaternions `(x, y, z, w)` along the shorter
/// arc (glTF 2.0 Appendix C); nearly equal quaternions are interpolated linearly and
/// normalised, which is the limit of the formula.
pub(crate) fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let d: f64 = (0..4).map(|i| a[i] * b[i]).sum();
    let sign = if d < 0.0 { -1.0 } else { 1.0 };
    let cos = d.abs().min(1.0);
    let angle = cos.acos();
    let (ka, kb) = if angle < 1e-6 {
        (1.0 - s, s * sign)
    } else {
        let sin = angle.sin();
        (
            (angle * (1.0 - s)).sin() / sin,
            sign * (angle * s).sin() / sin,
        )
    };
    let mut q = [0.0; 4];
    for i in 0..4 {
        q[i] = ka * a[i] + kb * b[i];
    }
    if angle < 1e-6 {
        normalize4(&mut q);
    }
    q
}

/// Normalises a quaternion in place; a zero quaternion becomes the identity.
pub(crate) fn normalize4(q: &mut [f64]) {
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 && n.is_finite() {
        q.iter_mut().for_each(|x| *x /= n);
    } else {
        q.copy_from_slice(&[0.0, 0.0, 0.0, 1.0]);
    }
}

/// What a channel drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Property {
    /// Node translation (3 numbers).
    Translation,
    /// Node rotation quaternion `(x, y, z, w)`.
    Rotation,
    /// Node scale (3 numbers).
    Scale,
    /// Morph target weights of the node's mesh (one per target).
    Weights,
}

/// One animated property of one node.
#[derive(Debug, Clone)]
pub(crate) struct Channel {
    /// The clip (animation index in the file) it belongs to.
    pub clip: usize,
    /// Target node index.
    pub node: usize,
    /// Target property.
    pub property: Property,
    /// Its keyframes.
    pub sampler: Sampler,
}

/// The channels of the animations of a file, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Animations {
    /// Channels; later ones override earlier ones on the same property.
    pub channels: Vec<Channel>,
    /// Clip names, one per animation of the file (`animation_<index>` for unnamed ones).
    pub clips: Vec<String>,
}

impl Animations {
    /// Reads every animation. `targets(node)` is the number of morph targets of the mesh
    /// of `node` (0 if none), the width of its weight channels.
    pub fn read(src: &Source, targets: impl Fn(usize) -> usize) -> Result<Animations> {
        // Read from the JSON: the `gltf` crate does not validate channel targets, and its
        // accessors for them panic on a bad node index or an unknown path.
        use gltf::animation::{Interpolation as I, Property as P};
        use gltf::json::validation::Checked;
        let json = src.doc.as_json();
        let nodes = json.nodes.len();
        let mut channels = Vec::new();
        let mut clips = Vec::new();
        for (a, anim) in json.animations.iter().enumerate() {
            clips.push(
                anim.name
                    .clone()
                    .unwrap_or_else(|| format!("animation_{a}")),
            );
            let anim_name = match &anim.name {
                Some(n) => format!("animation '{n}'"),
                None => format!("animation {a}"),
            };
            for (c, channel) in anim.channels.iter().enumerate() {
                let object = format!("{anim_name} channel {c}");
                let fail =
                    |why: String| src.error(&object, format!("{why}; export the file again"));
                let node = channel.target.node.value();
                if node >= nodes {
                    return Err(fail(format!("targets node {node}, but there are {nodes}")));
                }
                let (property, width) = match channel.target.path {
                    Checked::Valid(P::Translation) => (Property::Translation, 3),
                    Checked::Valid(P::Rotation) => (Property::Rotation, 4),
                    Checked::Valid(P::Scale) => (Property::Scale, 3),
                    Checked::Valid(P::MorphTargetWeights) => (Property::Weights, targets(node)),
                    // A path defined by an extension drape does not know: not a motion.
                    Checked::Invalid => continue,
                };
                if property == Property::Weights && width == 0 {
                    return Err(fail(format!(
                        "animates morph weights of node {node}, whose mesh has no morph targets"
                    )));
                }
                let sampler = anim.samplers.get(channel.sampler.value()).ok_or_else(|| {
                    fail(format!("uses missing sampler {}", channel.sampler.value()))
                })?;
                let interpolation = match sampler.interpolation {
                    Checked::Valid(I::Step) => Interpolation::Step,
                    Checked::Valid(I::Linear) => Interpolation::Linear,
                    Checked::Valid(I::CubicSpline) => Interpolation::CubicSpline,
                    Checked::Invalid => return Err(fail("has an unknown interpolation".into())),
                };
                let accessor = |index: usize| {
                    src.doc
                        .accessors()
                        .nth(index)
                        .ok_or_else(|| fail(format!("uses missing accessor {index}")))
                };
                let input = accessor(sampler.input.value())?;
                if input.dimensions() != gltf::accessor::Dimensions::Scalar {
                    return Err(fail(format!(
                        "input (times) (accessor {}) must be a scalar accessor",
                        input.index()
                    )));
                }
                let times = src.read(&input, &object, "input (times)")?;
                let output = accessor(sampler.output.value())?;
                let values = src.read(&output, &object, "output (values)")?;
                let sampler = Sampler::new(times, values, width, interpolation).map_err(fail)?;
                channels.push(Channel {
                    clip: a,
                    node,
                    property,
                    sampler,
                });
            }
        }
        Ok(Animations { channels, clips })
    }

    /// First and last keyframe time over the channels of clip `clip`, or of every channel
    /// for `None` (s), if there are any.
    pub fn time_range(&self, clip: Option<usize>) -> Option<(f64, f64)> {
        let of_clip = |c: &&Channel| clip.is_none_or(|k| c.clip == k);
        let first = self
            .channels
            .iter()
            .filter(of_clip)
            .map(|c| c.sampler.times[0]);
        let last = self
            .channels
            .iter()
            .filter(of_clip)
            .filter_map(|c| c.sampler.times.last());
        let lo = first.reduce(f64::min)?;
        let hi = last.copied().reduce(f64::max)?;
        Some((lo, hi))
    }

    /// Keeps the channels of clip `clip` only.
    pub fn keep_clip(&mut self, clip: usize) {
        self.channels.retain(|c| c.clip == clip);
    }
}
