//! Writes meshes as USD text the way Blender's USD exporter lays them out: a generated
//! `root` Xform, one `Xform` per object (named after it, carrying the custom property
//! `userProperties:drape_role` and an optional translation) holding one `Mesh`, faceVarying
//! `primvars:st`, vertex `primvars:pin`, static or time-sampled `points` and `extent`.
//! Used by the fixture generator (`examples/gen_io_fixtures.rs`).
use crate::error::{Error, Result};
use crate::format::text::f32_text;
use crate::scene::{Garment, UpAxis};
use crate::{Vec2, Vec3};
use std::fmt::Write as _;
use std::path::Path;

/// One object to write.
#[derive(Debug, Clone, Default)]
pub struct UsdMesh {
    /// Object (Xform) name.
    pub name: String,
    /// Mesh prim name (Blender: the mesh data's name).
    pub mesh_name: String,
    /// `userProperties:drape_role` on the Xform, if any.
    pub role: Option<String>,
    /// `xformOp:translate` of the Xform (file units); none written if zero.
    pub translate: Vec3,
    /// `faceVertexCounts`.
    pub face_counts: Vec<usize>,
    /// `faceVertexIndices`.
    pub face_indices: Vec<usize>,
    /// Static `points` (file units); ignored when `point_samples` is not empty.
    pub points: Vec<Vec3>,
    /// `points.timeSamples` as (time code, points).
    pub point_samples: Vec<(f64, Vec<Vec3>)>,
    /// faceVarying `primvars:st`, one per face-vertex.
    pub st: Option<Vec<Vec2>>,
    /// vertex `primvars:pin`, one per point.
    pub pin: Option<Vec<f64>>,
}

impl UsdMesh {
    /// A garment as a USD mesh: one point per particle, triangles as faces, faceVarying UVs
    /// from the triangle corners, pins per point, role `garment`.
    pub fn from_garment(g: &Garment, mesh_name: &str) -> UsdMesh {
        UsdMesh {
            name: g.name.clone(),
            mesh_name: mesh_name.to_string(),
            role: Some("garment".into()),
            face_counts: vec![3; g.triangles.len()],
            face_indices: g.triangles.iter().flatten().copied().collect(),
            points: g.positions.clone(),
            st: Some(g.corner_uvs.iter().flatten().copied().collect()),
            pin: Some(g.pin.clone()),
            ..UsdMesh::default()
        }
    }
}

/// A stage to write.
#[derive(Debug, Clone)]
pub struct UsdStage {
    /// `upAxis`.
    pub up: UpAxis,
    /// `metersPerUnit`.
    pub meters_per_unit: f64,
    /// `timeCodesPerSecond` and `framesPerSecond`.
    pub fps: f64,
    /// `startTimeCode` and `endTimeCode`, if any.
    pub range: Option<(f64, f64)>,
    /// The objects.
    pub meshes: Vec<UsdMesh>,
}

/// Shortest text of an `f32` (USD's `float` types) that reads back exactly.
fn f(x: f64) -> String {
    f32_text(x as f32)
}

fn vec3s(points: &[Vec3]) -> String {
    let items: Vec<String> = points
        .iter()
        .map(|p| format!("({}, {}, {})", f(p.x), f(p.y), f(p.z)))
        .collect();
    format!("[{}]", items.join(", "))
}

fn extent(points: &[Vec3]) -> String {
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    if points.is_empty() {
        (lo, hi) = (Vec3::zeros(), Vec3::zeros());
    }
    vec3s(&[lo, hi])
}

fn ints(v: &[usize]) -> String {
    let items: Vec<String> = v.iter().map(usize::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The `.usda` text of `stage`.
pub fn to_usda(stage: &UsdStage) -> String {
    let mut s = String::from("#usda 1.0\n(\n    defaultPrim = \"root\"\n    doc = \"drape\"\n");
    if let Some((a, b)) = stage.range {
        let _ = writeln!(s, "    endTimeCode = {b}");
        let _ = writeln!(s, "    framesPerSecond = {}", stage.fps);
        let _ = writeln!(s, "    startTimeCode = {a}");
    } else {
        let _ = writeln!(s, "    framesPerSecond = {}", stage.fps);
    }
    let up = match stage.up {
        UpAxis::Y => "Y",
        UpAxis::Z => "Z",
    };
    let _ = writeln!(s, "    metersPerUnit = {}", stage.meters_per_unit);
    let _ = writeln!(s, "    timeCodesPerSecond = {}", stage.fps);
    let _ = writeln!(s, "    upAxis = \"{up}\"\n)\n");
    s.push_str(
        "def Xform \"root\" (\n    customData = {\n        dictionary Blender = {\n            \
         bool generated = 1\n        }\n    }\n)\n{\n",
    );
    for m in &stage.meshes {
        write_mesh(&mut s, m);
    }
    s.push_str("}\n");
    s
}

fn write_mesh(s: &mut String, m: &UsdMesh) {
    let _ = writeln!(s, "    def Xform \"{}\"\n    {{", m.name);
    if let Some(role) = &m.role {
        let _ = writeln!(
            s,
            "        custom string userProperties:drape_role = \"{role}\""
        );
    }
    if m.translate != Vec3::zeros() {
        let t = m.translate;
        let _ = writeln!(
            s,
            "        double3 xformOp:translate = ({}, {}, {})",
            t.x, t.y, t.z
        );
        s.push_str("        uniform token[] xformOpOrder = [\"xformOp:translate\"]\n");
    }
    let _ = writeln!(s, "\n        def Mesh \"{}\"\n        {{", m.mesh_name);
    let pad = "            ";
    if m.point_samples.is_empty() {
        let _ = writeln!(s, "{pad}float3[] extent = {}", extent(&m.points));
    } else {
        let _ = writeln!(s, "{pad}float3[] extent.timeSamples = {{");
        for (t, p) in &m.point_samples {
            let _ = writeln!(s, "{pad}    {t}: {},", extent(p));
        }
        let _ = writeln!(s, "{pad}}}");
    }
    let _ = writeln!(s, "{pad}int[] faceVertexCounts = {}", ints(&m.face_counts));
    let _ = writeln!(
        s,
        "{pad}int[] faceVertexIndices = {}",
        ints(&m.face_indices)
    );
    if m.point_samples.is_empty() {
        let _ = writeln!(s, "{pad}point3f[] points = {}", vec3s(&m.points));
    } else {
        let _ = writeln!(s, "{pad}point3f[] points.timeSamples = {{");
        for (t, p) in &m.point_samples {
            let _ = writeln!(s, "{pad}    {t}: {},", vec3s(p));
        }
        let _ = writeln!(s, "{pad}}}");
    }
    if let Some(pin) = &m.pin {
        let items: Vec<String> = pin.iter().map(|&w| f(w)).collect();
        let _ = writeln!(
            s,
            "{pad}float[] primvars:pin = [{}] (\n{pad}    interpolation = \"vertex\"\n{pad})",
            items.join(", ")
        );
    }
    if let Some(st) = &m.st {
        let items: Vec<String> = st
            .iter()
            .map(|u| format!("({}, {})", f(u.x), f(u.y)))
            .collect();
        let _ = writeln!(
            s,
            "{pad}texCoord2f[] primvars:st = [{}] (\n{pad}    interpolation = \"faceVarying\"\n{pad})",
            items.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "{pad}uniform token subdivisionScheme = \"none\"\n        }}\n    }}"
    );
}

/// Writes `stage` to `path` as `.usda`.
pub fn write_usda(stage: &UsdStage, path: &Path) -> Result<()> {
    std::fs::write(path, to_usda(stage)).map_err(|source| Error::Output {
        path: path.to_path_buf(),
        source,
    })
}
