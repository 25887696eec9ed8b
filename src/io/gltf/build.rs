//! From a decoded [`GltfFile`] to drape's [`Scene`]: garments and bodies, welded, with
//! their animation sampled per frame.
//!
//! Time and frames: glTF stores seconds and no frame rate, so `fps` is the caller's
//! (`--fps`) or 24. With animations, the scene's frame range is
//! `round(t_first · fps) ..= round(t_last · fps)` over every keyframe of the file, and
//! animated meshes are sampled at each frame `f` of it at `t = f / fps`. Without
//! animations everything is evaluated at `t = 0`.
//!
//! Budget, checked before anything is allocated per frame: at most [`MAX_FRAMES`] frames
//! and [`MAX_SAMPLED_POSITIONS`] sampled vertex positions (frames × particles of the
//! animated meshes), so a stray key far in time (t = 10⁹ s) is an error naming the range,
//! not gigabytes of samples.
//!
//! * A **garment** gets its particle positions at the first frame in object-local space:
//!   the morphed mesh for an unskinned node; `W⁻¹ · skinned world positions` for a skinned
//!   one, `W` being its node's world matrix at that frame. If it is animated (skin, morph
//!   or node animation) [`Garment::animation`] holds its world-space particle positions per
//!   frame. Morph targets named `key_<frame>` become [`Garment::keyframes`] (mesh-space
//!   positions `p + δ`, Blender's absolute shape key), never animated shapes.
//! * A **body** gets world-space positions per frame when animated, one sample otherwise.
//! * Welding: vertices with bit-identical positions, skin influences and morph deltas.
use super::file::GltfFile;
use super::mesh::MeshData;
use crate::error::{Error, Result};
use crate::io::weld::{animated_key, SplitMesh, Welded};
use crate::scene::{Animation, Body, Garment, Scene, UpAxis};
use crate::{Mat3, Vec3};
use nalgebra::Matrix4;

/// Frame rate used when neither the file nor the caller gives one.
pub const DEFAULT_FPS: f64 = 24.0;

/// Most frames an animation may span: 100,000 (69 minutes at 24 fps).
pub const MAX_FRAMES: i64 = 100_000;

/// Most vertex positions sampled over an animation (frames × animated particles):
/// 100 million, 2.4 GB.
pub const MAX_SAMPLED_POSITIONS: usize = 100_000_000;

/// The frames at which a file is sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Frames {
    /// Frames per second.
    pub fps: f64,
    /// First and last frame of the file's animation, `None` without one.
    pub range: Option<(i32, i32)>,
}

impl Frames {
    /// The frames of `file`'s animation range at `fps`; a range of more than
    /// [`MAX_FRAMES`] frames is an input error.
    pub fn of(file: &GltfFile, fps: f64) -> Result<Frames> {
        let clamp = |x: f64| x.round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
        let Some((t0, t1)) = file.time_range() else {
            return Ok(Frames { fps, range: None });
        };
        let (a, b) = (clamp(t0 * fps), clamp(t1 * fps));
        if i64::from(b) - i64::from(a) + 1 > MAX_FRAMES {
            return Err(Error::input(
                file.path(),
                file.playing_clip(),
                format!(
                    "the animation has keys from t = {t0} s to t = {t1} s: frames {}..{} at \
                     {fps} fps, more than the {MAX_FRAMES} frames drape samples; remove the \
                     stray keys, or choose a shorter clip with --animation NAME",
                    (t0 * fps).round(),
                    (t1 * fps).round()
                ),
            ));
        }
        Ok(Frames {
            fps,
            range: Some((a, b)),
        })
    }

    /// Time (s) of the first frame, 0 without animation.
    pub fn first_time(&self) -> f64 {
        self.range.map_or(0.0, |(a, _)| f64::from(a) / self.fps)
    }

    /// Every frame of the range (just the first time's frame without animation).
    fn list(&self) -> Vec<i32> {
        match self.range {
            Some((a, b)) => (a..=b).collect(),
            None => vec![0],
        }
    }
}

/// What a mesh becomes and what it needs.
struct Built {
    /// Instance index in the file.
    instance: usize,
    /// Welded particles (first vertex of each).
    welded: Welded,
    /// Whether it gets per-frame samples.
    animated: bool,
}

/// Builds the garments (`garments`, instance indices) and bodies (`bodies`) of `file`.
pub(crate) fn build_scene(
    file: &GltfFile,
    garments: &[usize],
    bodies: &[usize],
    frames: Frames,
) -> Result<Scene> {
    let pose0 = file.pose(frames.first_time());
    let mut out_garments = Vec::new();
    let mut out_bodies = Vec::new();
    let mut jobs: Vec<(Built, bool)> = Vec::new();
    for &i in garments {
        let (g, welded) = garment(file, i, &pose0)?;
        let animated = file.is_animated(i) && frames.range.is_some();
        jobs.push((
            Built {
                instance: i,
                welded,
                animated,
            },
            true,
        ));
        out_garments.push(g);
    }
    for &i in bodies {
        let inst = &file.instances()[i];
        let split = split_mesh(file, i, file.morphed_positions(i, &pose0), &pose0);
        let (g, welded) = split.into_garment_keyed(|v| weld_key(file.mesh(i), v))?;
        let animated = file.is_animated(i) && frames.range.is_some();
        out_bodies.push(Body {
            name: inst.name.clone(),
            source: file.path().to_path_buf(),
            triangles: g.triangles,
            animation: Animation::fixed(Vec::new()),
            thickness: None,
            friction: None,
        });
        jobs.push((
            Built {
                instance: i,
                welded,
                animated,
            },
            false,
        ));
    }
    // Sample every animated mesh per frame, one pose per frame shared by all.
    let list = frames.list();
    let per_frame: usize = jobs
        .iter()
        .filter(|(b, _)| b.animated)
        .map(|(b, _)| b.welded.first_vertex.len())
        .sum();
    if per_frame.saturating_mul(list.len()) > MAX_SAMPLED_POSITIONS {
        return Err(Error::input(
            file.path(),
            file.playing_clip(),
            format!(
                "sampling {per_frame} animated vertices over {} frames is more than the \
                 {MAX_SAMPLED_POSITIONS} positions drape keeps; shorten the animation or name \
                 fewer bodies with --body",
                list.len()
            ),
        ));
    }
    let mut samples: Vec<Vec<Vec<Vec3>>> = vec![Vec::new(); jobs.len()];
    let any_animated = jobs.iter().any(|(b, _)| b.animated);
    for (k, &f) in list.iter().enumerate() {
        if k > 0 && !any_animated {
            break;
        }
        let pose = if k == 0 {
            pose0.clone()
        } else {
            file.pose(f64::from(f) / frames.fps)
        };
        for (job, out) in jobs.iter().zip(samples.iter_mut()) {
            let (b, _) = job;
            if k > 0 && !b.animated {
                continue;
            }
            let world = file.world_positions(b.instance, &pose);
            out.push(b.welded.first_vertex.iter().map(|&v| world[v]).collect());
        }
    }
    let frame_numbers: Vec<f64> = list.iter().map(|&f| f64::from(f)).collect();
    let (mut gi, mut bi) = (0, 0);
    for ((b, is_garment), positions) in jobs.into_iter().zip(samples) {
        let animation = if b.animated {
            Animation {
                frames: frame_numbers.clone(),
                positions,
            }
        } else {
            let first = positions.into_iter().next().unwrap_or_default();
            Animation {
                frames: vec![frame_numbers[0]],
                positions: vec![first],
            }
        };
        if is_garment {
            if b.animated {
                out_garments[gi].animation = Some(animation);
            }
            gi += 1;
        } else {
            out_bodies[bi].animation = animation;
            bi += 1;
        }
    }
    Ok(Scene {
        garments: out_garments,
        bodies: out_bodies,
        up: UpAxis::Y,
        fps: None,
        frame_range: frames.range,
    })
}

/// Instance `i` as a garment at `pose0` (its first frame), with the welding used.
pub(crate) fn garment(
    file: &GltfFile,
    i: usize,
    pose0: &super::file::Pose,
) -> Result<(Garment, Welded)> {
    let mesh = file.mesh(i);
    let name = &file.instances()[i].name;
    let local = if file.is_skinned(i) {
        let w = file.node_world(i, pose0);
        let inv = w
            .try_inverse()
            .filter(|m| m.iter().all(|x| x.is_finite()))
            .ok_or_else(|| {
                Error::input(
                    file.path(),
                    Some(name),
                    "has a singular world transform (a zero scale); fix the object's scale and \
                 export again",
                )
            })?;
        file.world_positions(i, pose0)
            .iter()
            .map(|p| transform(&inv, p))
            .collect()
    } else {
        file.morphed_positions(i, pose0)
    };
    let split = split_mesh(file, i, local, pose0);
    let (mut g, welded) = split.into_garment_keyed(|v| weld_key(mesh, v))?;
    let mut keys: Vec<(i32, Vec<Vec3>)> = Vec::new();
    for t in mesh.targets.iter() {
        let Some(frame) = t.key_frame else { continue };
        if keys.iter().any(|(f, _)| *f == frame) {
            return Err(Error::input(
                file.path(),
                Some(name),
                format!("has two keyframe shapes named key_{frame}; rename one"),
            ));
        }
        let shape = welded
            .first_vertex
            .iter()
            .map(|&v| mesh.positions[v] + t.deltas[v])
            .collect();
        keys.push((frame, shape));
    }
    keys.sort_by_key(|(f, _)| *f);
    g.keyframes = keys;
    g.key_weight = mesh.key_weight.as_ref().map(|w| welded.max_per_particle(w));
    Ok((g, welded))
}

fn split_mesh(
    file: &GltfFile,
    i: usize,
    positions: Vec<Vec3>,
    pose0: &super::file::Pose,
) -> SplitMesh {
    let mesh = file.mesh(i);
    let w = file.node_world(i, pose0);
    SplitMesh {
        name: file.instances()[i].name.clone(),
        source: file.path().to_path_buf(),
        positions,
        uvs: mesh.uvs.clone().unwrap_or_default(),
        pins: mesh.pins.clone(),
        triangles: mesh.triangles.clone(),
        source_index: mesh.source_index.clone(),
        world_linear: Mat3::from(w.fixed_view::<3, 3>(0, 0)),
        world_translation: Vec3::from(w.fixed_view::<3, 1>(0, 3)),
    }
}

/// Weld key of vertex `v`: position, skin influences and every morph delta.
fn weld_key(mesh: &MeshData, v: usize) -> Vec<u64> {
    let influences = mesh.influences.iter().flat_map(|inf| inf.of(v));
    let deltas = mesh.targets.iter().map(|t| t.deltas[v]);
    animated_key(&mesh.positions[v], influences, deltas)
}

fn transform(m: &Matrix4<f64>, p: &Vec3) -> Vec3 {
    m.fixed_view::<3, 3>(0, 0) * p + m.fixed_view::<3, 1>(0, 3)
}
