//! Meshes as the USD and Houdini readers deliver them, and the choice of which become
//! garments and which bodies (docs/reference.md, "Options of `simulate` and `control`" `--garment`, `--body`).
//!
//! These formats keep one point per mesh vertex (no split vertices), so an
//! [`ImportedMesh`] is already welded: particles are the file's points, in file order, and
//! each triangle corner carries its own UV (a point with several UVs sits on a seam).
use crate::error::{Error, Result};
use crate::scene::{Animation, Body, Garment, OutputFaces, Scene, UpAxis};
use crate::{Mat3, Vec2, Vec3};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Role value marking a garment.
pub const GARMENT_ROLE: &str = "garment";

/// One mesh of a file, at the first frame, with its animation if it has one.
#[derive(Debug, Clone)]
pub struct ImportedMesh {
    /// Name the user refers to (`--garment NAME`): object / prim / file stem.
    pub name: String,
    /// Other names that select it too (the mesh prim's own name, its path).
    pub aliases: Vec<String>,
    /// The file it came from.
    pub source: PathBuf,
    /// `"garment"`, `"body"` or another role from the file, if marked.
    pub role: Option<String>,
    /// Point positions in object-local space, in file units, at the first frame.
    pub positions: Vec<Vec3>,
    /// Triangles over points, counter-clockwise seen from the front.
    pub triangles: Vec<[usize; 3]>,
    /// UV of each triangle corner; empty if the mesh has no UVs.
    pub corner_uvs: Vec<[Vec2; 3]>,
    /// Why the file's UVs could not be read, if they could not (then `corner_uvs` is
    /// empty): only a garment needs UVs, so this is an error only for a garment.
    pub uv_problem: Option<String>,
    /// Pin weight per point (empty: all 0).
    pub pin: Vec<f64>,
    /// Keyframe weight per point (`key_weight`), if the file has one.
    pub key_weight: Option<Vec<f64>>,
    /// The source polygons over points, counter-clockwise, with per-corner UVs.
    pub faces: OutputFaces,
    /// Object-to-world linear part at the first frame, file units to metres included
    /// (USD `metersPerUnit`): world (m) = `world_linear · p + world_translation`.
    pub world_linear: Mat3,
    /// Object-to-world translation (m) at the first frame.
    pub world_translation: Vec3,
    /// World-space positions (m) over time, if the points or transforms are animated.
    pub animation: Option<Animation>,
}

impl ImportedMesh {
    /// True if `name` selects this mesh (its name or one of its aliases).
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.aliases.iter().any(|a| a == name)
    }

    /// World-space positions (m) at the first frame.
    pub fn world_positions(&self) -> Vec<Vec3> {
        self.positions
            .iter()
            .map(|p| self.world_linear * p + self.world_translation)
            .collect()
    }

    /// The mesh as a garment: one particle per point, output points in point order.
    /// A mesh without UVs on all its faces is an input error naming the fix.
    pub fn into_garment(self) -> Result<Garment> {
        if let Some(problem) = &self.uv_problem {
            return Err(Error::input(
                &self.source,
                Some(&self.name),
                format!("its UVs cannot be read: {problem}; export the garment again"),
            ));
        }
        if self.corner_uvs.len() != self.triangles.len() || self.triangles.is_empty() {
            return Err(Error::input(
                &self.source,
                Some(&self.name),
                "has no UVs on all its faces (USD primvars:st, Houdini vertex uv); unwrap the \
                 garment into its sewing panels and export again",
            ));
        }
        let n = self.positions.len();
        let mut pin = self.pin;
        pin.resize(n, 0.0);
        for w in &mut pin {
            *w = if w.is_finite() {
                w.clamp(0.0, 1.0)
            } else {
                0.0
            };
        }
        Ok(Garment {
            name: self.name,
            source: self.source,
            positions: self.positions,
            triangles: self.triangles,
            corner_uvs: self.corner_uvs,
            pin,
            output_points: (0..n).collect(),
            world_linear: self.world_linear,
            world_translation: self.world_translation,
            animation: self.animation,
            keyframes: Vec::new(),
            key_weight: self.key_weight,
            output_faces: self.faces,
        })
    }

    /// The mesh as a collision body (world space, static if it has no animation).
    pub fn into_body(mut self) -> Body {
        let animation = match self.animation.take() {
            Some(a) => a,
            None => Animation::fixed(self.world_positions()),
        };
        Body {
            name: self.name,
            source: self.source,
            triangles: self.triangles,
            animation,
            thickness: None,
            friction: None,
        }
    }
}

/// Everything one USD or Houdini file holds.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The file read.
    pub source: PathBuf,
    /// Its meshes in file order.
    pub meshes: Vec<ImportedMesh>,
    /// Up axis of the file.
    pub up: UpAxis,
    /// Frames per second stored in the file.
    pub fps: Option<f64>,
    /// Frame range stored in the file.
    pub frame_range: Option<(i32, i32)>,
    /// What the reader skipped or could not resolve (USD: missing referenced files,
    /// unknown variants), one message each; printed as warnings.
    pub warnings: Vec<String>,
}

/// True if `name` is `<garment>_key_<frame>`, a keyframe target of one of `garments`
/// (docs/reference.md, "Inputs" (b)), which is neither garment nor body.
pub fn is_keyframe_mesh(name: &str, garments: &[&str]) -> bool {
    garments.iter().any(|g| {
        name.strip_prefix(g)
            .and_then(|r| r.strip_prefix("_key_"))
            .is_some_and(|f| {
                let f = f.strip_prefix('-').unwrap_or(f);
                !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit())
            })
    })
}

impl Imported {
    fn available(&self) -> String {
        let list: Vec<&str> = self.meshes.iter().map(|m| m.name.as_str()).collect();
        if list.is_empty() {
            "the file has no meshes".to_string()
        } else {
            format!("meshes in the file: {}", list.join(", "))
        }
    }

    fn find(&self, name: &str) -> Result<usize> {
        let stem = self.source.file_stem().and_then(|s| s.to_str());
        self.meshes
            .iter()
            .position(|m| m.answers_to(name))
            .or_else(|| (self.meshes.len() == 1 && stem == Some(name)).then_some(0))
            .ok_or_else(|| {
                Error::input(
                    &self.source,
                    Some(name),
                    format!("no such mesh; {}", self.available()),
                )
            })
    }

    /// Indices of the garments: those named (in order, repeats dropped), else the meshes
    /// marked `drape_role = "garment"`. `require` makes "none marked" an error.
    pub fn garment_indices(&self, names: &[String], require: bool) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        if names.is_empty() {
            out.extend(
                (0..self.meshes.len())
                    .filter(|&i| self.meshes[i].role.as_deref() == Some(GARMENT_ROLE)),
            );
            if out.is_empty() && require {
                return Err(Error::input(
                    &self.source,
                    None,
                    format!(
                        "no mesh is marked as a garment ({}); pass --garment NAME or set the \
                         custom property drape_role = \"garment\" on the garment object",
                        self.available()
                    ),
                ));
            }
        } else {
            for name in names {
                let i = self.find(name)?;
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        Ok(out)
    }

    /// Indices of the bodies: those named, else every mesh with faces that is not a
    /// garment in `garments` nor a keyframe target `<garment>_key_<frame>`.
    pub fn body_indices(&self, names: &[String], garments: &[usize]) -> Result<Vec<usize>> {
        if !names.is_empty() {
            let mut out = Vec::new();
            for name in names {
                let i = self.find(name)?;
                if garments.contains(&i) {
                    return Err(Error::input(
                        &self.source,
                        Some(name),
                        "is chosen both as garment and as body; pick one",
                    ));
                }
                if !out.contains(&i) {
                    out.push(i);
                }
            }
            return Ok(out);
        }
        let garment_names: Vec<&str> = garments
            .iter()
            .map(|&i| self.meshes[i].name.as_str())
            .collect();
        Ok((0..self.meshes.len())
            .filter(|i| !garments.contains(i))
            .filter(|&i| !self.meshes[i].triangles.is_empty())
            .filter(|&i| !is_keyframe_mesh(&self.meshes[i].name, &garment_names))
            .filter(|&i| self.meshes[i].role.as_deref() != Some(GARMENT_ROLE))
            .collect())
    }

    /// The [`Scene`] with the chosen garments and bodies (see [`Self::garment_indices`],
    /// [`Self::body_indices`]).
    pub fn select(
        self,
        garments: &[String],
        bodies: &[String],
        require_garment: bool,
    ) -> Result<Scene> {
        let gi = self.garment_indices(garments, require_garment)?;
        let bi = self.body_indices(bodies, &gi)?;
        let mut slots: Vec<Option<ImportedMesh>> = self.meshes.into_iter().map(Some).collect();
        let mut take = |i: usize| slots.get_mut(i).and_then(Option::take);
        let bodies = bi
            .iter()
            .filter_map(|&i| take(i))
            .map(ImportedMesh::into_body)
            .collect();
        let mut garments = gi
            .iter()
            .filter_map(|&i| take(i))
            .map(ImportedMesh::into_garment)
            .collect::<Result<Vec<_>>>()?;
        for g in &mut garments {
            g.keyframes = keyframes_of(g, slots.iter().flatten())?;
        }
        Ok(Scene {
            garments,
            bodies,
            up: self.up,
            fps: self.fps,
            frame_range: self.frame_range,
        })
    }
}

/// The keyframe shapes of `g` among `meshes`: each mesh named `<garment>_key_<frame>`
/// (docs/reference.md, "Inputs" (b)) with the garment's point count, its world positions brought into
/// the garment's object space at the first frame, sorted by frame.
pub fn keyframes_of<'a>(
    g: &Garment,
    meshes: impl Iterator<Item = &'a ImportedMesh>,
) -> Result<Vec<(i32, Vec<Vec3>)>> {
    let prefix = format!("{}_key_", g.name);
    let mut out = Vec::new();
    for m in meshes {
        let Some(frame) = m.name.strip_prefix(&prefix) else {
            continue;
        };
        if !is_keyframe_mesh(&m.name, &[g.name.as_str()]) {
            continue;
        }
        let err = |msg: String| Error::input(&m.source, Some(&m.name), msg);
        let frame: i32 = frame
            .parse()
            .map_err(|_| err(format!("keyframe number '{frame}' is out of range")))?;
        if m.positions.len() != g.positions.len() {
            return Err(err(format!(
                "is a keyframe of '{}' but has {} points instead of {}; keyframe shapes must \
                 be copies of the garment",
                g.name,
                m.positions.len(),
                g.positions.len()
            )));
        }
        let inverse = g
            .world_linear
            .try_inverse()
            .ok_or_else(|| err(format!("garment '{}' has a singular transform", g.name)))?;
        let local = m
            .world_positions()
            .iter()
            .map(|p| inverse * (p - g.world_translation))
            .collect();
        out.push((frame, local));
    }
    out.sort_by_key(|(f, _)| *f);
    Ok(out)
}

/// Gives each name not yet in `used` unchanged, repeats as `name.1`, `name.2`, ...
pub fn unique_name(base: &str, used: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while !used.insert(name.clone()) {
        name = format!("{base}.{k}");
        k += 1;
    }
    name
}

/// The file stem of `path` as a name ("mesh" if it has none).
pub fn stem_name(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("mesh")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(name: &str, role: Option<&str>) -> ImportedMesh {
        ImportedMesh {
            uv_problem: None,
            name: name.into(),
            aliases: vec![format!("/root/{name}/{name}")],
            source: "s.usda".into(),
            role: role.map(str::to_string),
            positions: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
            triangles: vec![[0, 1, 2]],
            corner_uvs: vec![[Vec2::zeros(), Vec2::x(), Vec2::y()]],
            pin: vec![],
            key_weight: None,
            faces: OutputFaces::default(),
            world_linear: Mat3::identity() * 2.0,
            world_translation: Vec3::z(),
            animation: None,
        }
    }

    fn imported(meshes: Vec<ImportedMesh>) -> Imported {
        Imported {
            warnings: Vec::new(),
            source: "s.usda".into(),
            meshes,
            up: UpAxis::Y,
            fps: None,
            frame_range: None,
        }
    }

    #[test]
    fn marked_garments_and_every_other_mesh_as_body_except_keyframes() {
        let f = imported(vec![
            mesh("Body", None),
            mesh("Shirt", Some("garment")),
            mesh("Shirt_key_12", None),
        ]);
        let s = f.select(&[], &[], true).unwrap();
        assert_eq!(s.garments.len(), 1);
        // The keyframe mesh (same transform) becomes a keyframe in object space.
        assert_eq!(s.garments[0].keyframes.len(), 1);
        assert_eq!(s.garments[0].keyframes[0].0, 12);
        assert!((s.garments[0].keyframes[0].1[1] - Vec3::x()).norm() < 1e-12);
        assert_eq!(s.garments[0].name, "Shirt");
        assert_eq!(s.garments[0].output_points, vec![0, 1, 2]);
        assert_eq!(s.garments[0].pin, vec![0.0; 3]);
        let names: Vec<&str> = s.bodies.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, vec!["Body"]);
        // A static body is in world space (m): 2·p + z.
        assert_eq!(
            s.bodies[0].animation.positions[0][1],
            Vec3::new(2.0, 0.0, 1.0)
        );
    }

    #[test]
    fn names_and_aliases_select_and_unknown_names_list_the_meshes() {
        let f = imported(vec![mesh("Body", None), mesh("Skirt", None)]);
        let s = f
            .clone()
            .select(&["/root/Skirt/Skirt".into()], &[], true)
            .unwrap();
        assert_eq!(s.garments[0].name, "Skirt");
        let e = f.clone().select(&["Nope".into()], &[], true).unwrap_err();
        assert!(e.to_string().contains("Body, Skirt"), "{e}");
        let e = f.select(&[], &[], true).unwrap_err();
        assert!(e.to_string().contains("--garment NAME"), "{e}");
    }

    #[test]
    fn a_garment_without_uvs_is_an_input_error() {
        let mut m = mesh("Shirt", Some("garment"));
        m.corner_uvs.clear();
        assert!(matches!(m.into_garment(), Err(Error::Input { .. })));
    }

    #[test]
    fn keyframe_names_need_a_frame_number() {
        assert!(is_keyframe_mesh("Shirt_key_4", &["Shirt"]));
        assert!(!is_keyframe_mesh("Shirt_key_", &["Shirt"]));
        assert!(!is_keyframe_mesh("Shirt_keyx", &["Shirt"]));
    }
}
