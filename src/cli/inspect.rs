//! `drape inspect`: what drape sees in a scene (docs/reference.md, "inspect --json").
//!
//! Every garment (meshes marked as garments, or a scene file's garments) with its welded
//! vertex, triangle, panel, seam-edge and pinned counts, the rest `--rest auto` picks for
//! each panel with the panel's mismatch against the modelled shape, and its UV problems;
//! every body
//! (every other mesh) with its vertex count and animation range (`frames`: first and last
//! sample frame, rounded; `null` for a static body). For a glTF file also its animation
//! clips with their frames at 24 fps, the one that plays (`--animation`), and the
//! extensions it uses that drape ignores.
use super::args::InspectArgs;
use crate::error::{Error, Result};
use crate::model::{ClothModel, Rest, UvScale};
use crate::scene::{Body, Garment};
use serde_json::{json, Value};
use std::io::Write as _;

/// Runs `drape inspect`.
pub fn run(args: &InspectArgs) -> Result<()> {
    super::settings::positive("--scale", args.scale)?;
    let opts = args.input.read_options(None)?;
    let (mut scene, notes) = crate::io::inspect_scene(&args.scene, &opts)?;
    scene.scale_lengths(args.scale);
    let mut warnings = scene.size_warnings(args.scale);
    if scene.garments.is_empty() && scene.bodies.is_empty() {
        warnings.push(format!(
            "{}: no mesh drape can read (the file holds no active, defined mesh: only \
             materials, cameras, lights or empty prims), so nothing to simulate or collide \
             with",
            args.scene.display()
        ));
    }
    for w in warnings {
        // A warning that cannot be written (a full or closed stderr) is dropped.
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
    let garments = scene
        .garments
        .iter()
        .map(garment_entry)
        .collect::<Result<Vec<_>>>()?;
    let bodies: Vec<Value> = scene.bodies.iter().map(body_entry).collect();
    let mut out = json!({"garments": garments, "bodies": bodies});
    if let Some(n) = notes {
        let clips: Vec<Value> = n
            .clips
            .iter()
            .map(|(name, frames)| json!({"name": name, "frames": frames.map(|(a, b)| [a, b])}))
            .collect();
        out["animations"] = json!(clips);
        out["animation"] = json!(n.playing);
        out["ignored_extensions"] = json!(n.ignored_extensions);
    }
    let text = match args.json {
        true => format!("{out}\n"),
        false => text(&out),
    };
    super::process::print(&text)
}

/// The `garments` entry of `g`: model counts, or the UV problem that stops the model.
pub fn garment_entry(g: &Garment) -> Result<Value> {
    Ok(
        match ClothModel::build_with_rest(g, Rest::Auto, UvScale::Auto, 1.0) {
            Ok(m) => json!({
                "name": g.name, "vertices": m.len(), "triangles": m.triangles.len(),
                "panels": m.panels, "seam_edges": m.seam_edges, "pinned": g.pinned_count(),
                "rest": m.panel_rest.iter().map(|p| if p.shape { "shape" } else { "uv" })
                    .collect::<Vec<_>>(),
                "uv_mismatch": m.panel_rest.iter().map(|p| (p.mismatch * 1e4).round() / 1e4)
                    .collect::<Vec<_>>(),
                "uv_problems": [],
            }),
            Err(Error::Input { message, .. }) => json!({
                "name": g.name, "vertices": g.positions.len(), "triangles": g.triangles.len(),
                "panels": 0, "seam_edges": 0, "pinned": g.pinned_count(),
                "rest": [], "uv_mismatch": [],
                "uv_problems": [message],
            }),
            Err(e) => return Err(e),
        },
    )
}

/// The `bodies` entry of `b`.
pub fn body_entry(b: &Body) -> Value {
    let vertices = b.animation.positions.first().map_or(0, Vec::len);
    let frames = match b.animation.frames.len() {
        0 | 1 => Value::Null,
        _ => {
            let (first, last) = b.animation.range();
            json!([first.round() as i64, last.round() as i64])
        }
    };
    json!({"name": b.name, "vertices": vertices, "frames": frames})
}

/// The readable table of `out`.
fn text(out: &Value) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for g in out["garments"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "garment {}: {} vertices, {} triangles, {} panels, {} seam edges, {} pinned",
            g["name"].as_str().unwrap_or("?"),
            g["vertices"],
            g["triangles"],
            g["panels"],
            g["seam_edges"],
            g["pinned"]
        );
        let mismatch = g["uv_mismatch"].as_array().into_iter().flatten();
        for (k, (rest, m)) in g["rest"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(mismatch)
            .enumerate()
        {
            if rest == "shape" {
                let _ = writeln!(
            s,
                    "  panel {k}: rests on the modelled shape (its UVs are {:.0}% off; --rest uv keeps them)",
                    100.0 * m.as_f64().unwrap_or(0.0)
                );
            }
        }
        for p in g["uv_problems"].as_array().into_iter().flatten() {
            let _ = writeln!(s, "  UV problem: {}", p.as_str().unwrap_or("?"));
        }
    }
    for b in out["bodies"].as_array().into_iter().flatten() {
        let frames = match b["frames"].as_array() {
            Some(f) if f.len() == 2 => format!("animated over frames {}..{}", f[0], f[1]),
            _ => "static".to_string(),
        };
        let _ = writeln!(
            s,
            "body {}: {} vertices, {frames}",
            b["name"].as_str().unwrap_or("?"),
            b["vertices"]
        );
    }
    notes(&mut s, out);
    s
}

/// The clips and ignored extensions of a glTF file, one line each.
fn notes(s: &mut String, out: &Value) {
    use std::fmt::Write as _;
    let playing = out["animation"].as_str();
    let clips: Vec<String> = out["animations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let name = c["name"].as_str().unwrap_or("?");
            let frames = match c["frames"].as_array() {
                Some(f) if f.len() == 2 => format!(" frames {}..{}", f[0], f[1]),
                _ => " (animates nothing drape reads)".to_string(),
            };
            let mark = if Some(name) == playing {
                ", playing"
            } else {
                ""
            };
            format!("{name}{frames}{mark}")
        })
        .collect();
    if !clips.is_empty() {
        let _ = writeln!(
            s,
            "animations (at 24 fps; --animation NAME chooses): {}",
            clips.join("; ")
        );
    }
    let ignored: Vec<&str> = out["ignored_extensions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !ignored.is_empty() {
        let _ = writeln!(
            s,
            "ignored glTF extensions (they change only appearance): {}",
            ignored.join(", ")
        );
    }
}
