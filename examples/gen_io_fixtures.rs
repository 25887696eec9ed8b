//! Writes the USD and Houdini fixtures into `fixtures/usd/` and `fixtures/houdini/`.
//!
//! ```text
//! cargo run --example gen_io_fixtures
//! ```
//!
//! | file | content |
//! |---|---|
//! | `usd/sheet_seam.usda` | the seamed sheet of `fixtures/sheet_seam.gltf` (13 × 13, two panels sewn at the middle column, the right one mirrored) as Blender's USD exporter writes it: object Xform `SheetSeam` marked `drape_role = "garment"` holding Mesh `SheetSeamMesh`, one point per vertex, faceVarying `primvars:st`, vertex `primvars:pin` |
//! | `houdini/sheet_seam.geo` | the same sheet as Houdini JSON geometry (clockwise polygons, vertex `uv`, point `pin`, detail `drape_role`) |
//! | `usd/body_anim.usda` | [`body_world`]: an open cylinder swaying and bending over frames 1–24, as time-sampled points in centimetres (`metersPerUnit = 0.01`) under a translated Xform |
//! | `houdini/body.0001.geo` … `body.0024.geo` | the same motion as a `$F4` sequence, metres |
//! | `usd/character_anim.usda` | the skinned character of `drape::fixtures::character_frames` (its glTF motion evaluated by drape's glTF reader) baked to time-sampled points over frames 1–48, as Blender's USD exporter bakes armature motion; object `Character`, metres, Y-up |
//! | `usd/scene_sheet_body.json` | scene file: the USD sheet as garment, the `.geo` sequence as body |
//! | `usd/bad/*`, `houdini/bad/*` | broken inputs: truncated, not UTF-8, wrong magic, index out of range, unknown scene-file key, binary crate file |
//!
//! Tests include this file (`#[path]`) to compare what the readers return with
//! [`body_world`] and to check the checked-in files are what [`write_all`] writes.
use drape::fixtures::{character_frames, sheet, SheetSpec};
use drape::io::houdini_geo::write::{to_json, write_geo, GeoMesh};
use drape::io::usd::writer::{to_usda, write_usda, UsdMesh, UsdStage};
use drape::scene::{Garment, UpAxis};
use drape::{Error, Result, Vec3};
use std::path::{Path, PathBuf};

/// Frames of the animated body (inclusive).
pub const BODY_FRAMES: (i32, i32) = (1, 24);
/// Frames of the baked character (its glTF motion runs over 48 frames at 24 fps).
pub const CHARACTER_FRAMES: (i32, i32) = (1, 48);
/// Rings and segments of the body cylinder.
const RINGS: usize = 5;
const SEGMENTS: usize = 8;
/// USD body units: centimetres, under an Xform translated by this (cm).
const BODY_TRANSLATE_CM: [f64; 3] = [0.0, 0.0, -30.0];

/// The seamed sheet shared with `fixtures/sheet_seam.gltf`.
pub fn seam_sheet() -> Garment {
    sheet(&SheetSpec {
        name: "SheetSeam".into(),
        n: 13,
        seam: true,
        ..SheetSpec::default()
    })
}

/// Triangles of the body cylinder, counter-clockwise seen from outside.
pub fn body_triangles() -> Vec<[usize; 3]> {
    let mut t = Vec::new();
    for r in 0..RINGS - 1 {
        for s in 0..SEGMENTS {
            let a = r * SEGMENTS + s;
            let b = r * SEGMENTS + (s + 1) % SEGMENTS;
            let (c, d) = (a + SEGMENTS, b + SEGMENTS);
            t.push([a, b, d]);
            t.push([a, d, c]);
        }
    }
    t
}

/// World positions (m) of the body at `frame`: a cylinder of radius 0.15 m and height
/// 1 m standing at z = −0.3 m, bending about its base by θ·h (h the ring's height) and
/// sliding along x, with θ = 0.4 sin(2π(f − 1)/24).
pub fn body_world(frame: f64) -> Vec<Vec3> {
    let phase = 2.0 * std::f64::consts::PI * (frame - 1.0) / 24.0;
    let theta = 0.4 * phase.sin();
    let slide = 0.1 * phase.sin();
    let mut out = Vec::with_capacity(RINGS * SEGMENTS);
    for r in 0..RINGS {
        let h = r as f64 / (RINGS - 1) as f64;
        let (s, c) = (theta * h).sin_cos();
        for k in 0..SEGMENTS {
            let a = 2.0 * std::f64::consts::PI * k as f64 / SEGMENTS as f64;
            let (x, z) = (0.15 * a.cos(), 0.15 * a.sin());
            // Bend: rotate (x, h) about the z axis through the base.
            let p = Vec3::new(x * c - h * s + slide, x * s + h * c, z - 0.3);
            out.push(p);
        }
    }
    out
}

fn frames() -> impl Iterator<Item = i32> {
    BODY_FRAMES.0..=BODY_FRAMES.1
}

fn usd_body() -> UsdMesh {
    let t = Vec3::from(BODY_TRANSLATE_CM);
    let tris = body_triangles();
    UsdMesh {
        name: "Body".into(),
        mesh_name: "BodyMesh".into(),
        role: Some("body".into()),
        translate: t,
        face_counts: vec![3; tris.len()],
        face_indices: tris.iter().flatten().copied().collect(),
        point_samples: frames()
            .map(|f| {
                let cm = body_world(f64::from(f))
                    .iter()
                    .map(|p| p * 100.0 - t)
                    .collect();
                (f64::from(f), cm)
            })
            .collect(),
        ..UsdMesh::default()
    }
}

fn geo_sheet(g: &Garment) -> GeoMesh {
    GeoMesh {
        points: g.positions.clone(),
        triangles: g.triangles.clone(),
        corner_uvs: Some(g.corner_uvs.clone()),
        pin: Some(g.pin.clone()),
        role: Some("garment".into()),
    }
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).map_err(|source| Error::Output {
        path: path.to_path_buf(),
        source,
    })
}

fn mkdir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|source| Error::Output {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes every fixture under `root` (`root/usd`, `root/houdini`), returning the paths.
pub fn write_all(root: &Path) -> Result<Vec<PathBuf>> {
    let (usd, geo) = (root.join("usd"), root.join("houdini"));
    for d in [usd.join("bad"), geo.join("bad")] {
        mkdir(&d)?;
    }
    let mut written = Vec::new();
    let mut out = |p: PathBuf| {
        written.push(p.clone());
        p
    };

    let sheet = seam_sheet();
    let sheet_stage = UsdStage {
        up: UpAxis::Y,
        meters_per_unit: 1.0,
        fps: 24.0,
        range: None,
        meshes: vec![UsdMesh::from_garment(&sheet, "SheetSeamMesh")],
    };
    write_usda(&sheet_stage, &out(usd.join("sheet_seam.usda")))?;
    write_geo(&geo_sheet(&sheet), &out(geo.join("sheet_seam.geo")))?;

    let body_stage = UsdStage {
        up: UpAxis::Y,
        meters_per_unit: 0.01,
        fps: 24.0,
        range: Some((f64::from(BODY_FRAMES.0), f64::from(BODY_FRAMES.1))),
        meshes: vec![usd_body()],
    };
    write_usda(&body_stage, &out(usd.join("body_anim.usda")))?;
    for f in frames() {
        let mesh = GeoMesh {
            points: body_world(f64::from(f)),
            triangles: body_triangles(),
            ..GeoMesh::default()
        };
        write_geo(&mesh, &out(geo.join(format!("body.{f:04}.geo"))))?;
    }

    let (tris, poses) = character_frames(24.0, CHARACTER_FRAMES)?;
    let character = UsdMesh {
        name: "Character".into(),
        mesh_name: "CharacterMesh".into(),
        role: Some("body".into()),
        face_counts: vec![3; tris.len()],
        face_indices: tris.iter().flatten().copied().collect(),
        point_samples: (CHARACTER_FRAMES.0..=CHARACTER_FRAMES.1)
            .zip(poses)
            .map(|(f, p)| (f64::from(f), p))
            .collect(),
        ..UsdMesh::default()
    };
    let character_stage = UsdStage {
        meters_per_unit: 1.0,
        range: Some((f64::from(CHARACTER_FRAMES.0), f64::from(CHARACTER_FRAMES.1))),
        meshes: vec![character],
        ..body_stage.clone()
    };
    write_usda(&character_stage, &out(usd.join("character_anim.usda")))?;

    let scene = serde_json::json!({
        "frames": {"start": BODY_FRAMES.0, "end": BODY_FRAMES.1, "fps": 24},
        "garments": [{"file": "sheet_seam.usda", "name": "SheetSeam", "material": "cotton",
                      "out": "sheet_seam.pc2"}],
        "bodies": [{"file": "../houdini/body.$F4.geo", "thickness": 0.004, "friction": 0.3}],
        "solver": {"max_step": 0.01}
    });
    let text = serde_json::to_string_pretty(&scene).unwrap_or_default() + "\n";
    write_bytes(&out(usd.join("scene_sheet_body.json")), text.as_bytes())?;

    // Broken inputs.
    let sheet_text = to_usda(&sheet_stage);
    write_bytes(
        &out(usd.join("bad/truncated.usda")),
        &sheet_text.as_bytes()[..sheet_text.len() / 2],
    )?;
    write_bytes(
        &out(usd.join("bad/not_utf8.usda")),
        b"#usda 1.0\ndef Mesh \"Caf\xe9\" {}\n",
    )?;
    write_bytes(
        &out(usd.join("bad/wrong_magic.usda")),
        b"this is not a USD file\n",
    )?;
    write_bytes(
        &out(usd.join("bad/binary.usdc")),
        b"PXR-USDC\x00\x08\x00\x00\x00\x00\x00\x00",
    )?;
    let mut bad_index = UsdMesh::from_garment(&seam_sheet(), "SheetSeamMesh");
    bad_index.face_indices[4] = 999;
    let bad_stage = UsdStage {
        meshes: vec![bad_index],
        ..sheet_stage.clone()
    };
    write_usda(&bad_stage, &out(usd.join("bad/index_out_of_range.usda")))?;
    let unknown = r#"{"garments": [{"file": "../sheet_seam.usda"}], "gravity": -9.81}"#;
    write_bytes(&out(usd.join("bad/unknown_key.json")), unknown.as_bytes())?;

    let geo_text = to_json(&geo_sheet(&sheet)).to_string();
    write_bytes(
        &out(geo.join("bad/truncated.geo")),
        &geo_text.as_bytes()[..geo_text.len() / 2],
    )?;
    write_bytes(
        &out(geo.join("bad/not_utf8.geo")),
        b"[\"fileversion\",\"\xff\xfe\"]",
    )?;
    write_bytes(
        &out(geo.join("bad/wrong_magic.geo")),
        b"PGEOMETRY V5\nNPoints 3 NPrims 1\n",
    )?;
    let mut broken = to_json(&geo_sheet(&sheet));
    let topology = broken
        .as_array()
        .and_then(|a| a.iter().position(|v| v == "topology"))
        .map_or(0, |i| i + 1);
    if let Some(idx) = broken
        .get_mut(topology)
        .and_then(|t| t.get_mut(1))
        .and_then(|p| p.get_mut(1))
        .and_then(|i| i.get_mut(0))
    {
        *idx = serde_json::json!(999);
    }
    write_bytes(
        &out(geo.join("bad/index_out_of_range.geo")),
        broken.to_string().as_bytes(),
    )?;
    Ok(written)
}

#[allow(dead_code)]
fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    match write_all(&root) {
        Ok(paths) => {
            for p in paths {
                println!("wrote {}", p.display());
            }
        }
        Err(e) => {
            eprintln!("gen_io_fixtures: {e}");
            std::process::exit(e.exit_code());
        }
    }
}
