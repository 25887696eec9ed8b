//! Writes meshes as Houdini JSON geometry, as Houdini saves an ASCII `.geo`: `P` point
//! attribute, vertex `uv` (3 components, w = 0), point `pin`, an optional detail string
//! `drape_role`, and polygons in one `Polygon_run` with Houdini's clockwise winding (each
//! drape triangle `(a, b, c)` becomes the Houdini polygon `(c, b, a)`).
use crate::error::{Error, Result};
use crate::{Vec2, Vec3};
use serde_json::{json, Value};
use std::path::Path;

/// What to write.
#[derive(Debug, Clone, Default)]
pub struct GeoMesh {
    /// Point positions.
    pub points: Vec<Vec3>,
    /// Triangles over points, counter-clockwise (drape winding).
    pub triangles: Vec<[usize; 3]>,
    /// UV per triangle corner, if any (written as vertex `uv`).
    pub corner_uvs: Option<Vec<[Vec2; 3]>>,
    /// Pin weight per point, if any.
    pub pin: Option<Vec<f64>>,
    /// Detail attribute `drape_role`, if any.
    pub role: Option<String>,
}

fn f(x: f64) -> Value {
    json!(x as f32)
}

fn numeric(name: &str, kind: Option<&str>, size: usize, tuples: Vec<Value>) -> Value {
    let mut def = vec![
        json!("scope"),
        json!("public"),
        json!("type"),
        json!("numeric"),
        json!("name"),
        json!(name),
    ];
    if let Some(kind) = kind {
        def.extend([
            json!("options"),
            json!({"type": {"type": "string", "value": kind}}),
        ]);
    }
    json!([
        def,
        [
            "size",
            size,
            "storage",
            "fpreal32",
            "defaults",
            ["size", 1, "storage", "fpreal64", "values", [0]],
            "values",
            ["size", size, "storage", "fpreal32", "tuples", tuples]
        ]
    ])
}

/// The JSON value of `mesh`.
pub fn to_json(mesh: &GeoMesh) -> Value {
    let n_tri = mesh.triangles.len();
    // Houdini winding: the corners reversed.
    let pointref: Vec<usize> = mesh
        .triangles
        .iter()
        .flat_map(|t| [t[2], t[1], t[0]])
        .collect();
    let p: Vec<Value> = mesh
        .points
        .iter()
        .map(|p| json!([f(p.x), f(p.y), f(p.z)]))
        .collect();
    let mut point_attrs = vec![numeric("P", Some("point"), 3, p)];
    if let Some(pin) = &mesh.pin {
        point_attrs.push(numeric(
            "pin",
            None,
            1,
            pin.iter().map(|&w| json!([f(w)])).collect(),
        ));
    }
    let mut attributes = vec![json!("pointattributes"), json!(point_attrs)];
    if let Some(uvs) = &mesh.corner_uvs {
        let tuples: Vec<Value> = uvs
            .iter()
            .flat_map(|c| [c[2], c[1], c[0]])
            .map(|u| json!([f(u.x), f(u.y), 0.0]))
            .collect();
        attributes.push(json!("vertexattributes"));
        attributes.push(json!([numeric("uv", Some("texturecoord"), 3, tuples)]));
    }
    if let Some(role) = &mesh.role {
        attributes.push(json!("globalattributes"));
        attributes.push(json!([[
            [
                "scope",
                "public",
                "type",
                "string",
                "name",
                "drape_role",
                "options",
                {}
            ],
            [
                "size",
                1,
                "storage",
                "int32",
                "strings",
                [role],
                "indices",
                ["size", 1, "storage", "int32", "arrays", [[0]]]
            ]
        ]]));
    }
    json!([
        "fileversion", "20.0.547",
        "hasindex", false,
        "pointcount", mesh.points.len(),
        "vertexcount", 3 * n_tri,
        "primitivecount", n_tri,
        "info", {"software": "drape"},
        "topology", ["pointref", ["indices", pointref]],
        "attributes", attributes,
        "primitives", [[["type", "Polygon_run"],
            ["startvertex", 0, "nprimitives", n_tri, "nvertices_rle", [3, n_tri]]]]
    ])
}

/// Writes `mesh` to `path`.
pub fn write_geo(mesh: &GeoMesh, path: &Path) -> Result<()> {
    std::fs::write(path, to_json(mesh).to_string()).map_err(|source| Error::Output {
        path: path.to_path_buf(),
        source,
    })
}
