//! `drape inspect`: what drape sees in a scene (SPEC "inspect --json").
use super::args::InspectArgs;
use crate::error::{Error, Result};
use crate::model::{ClothModel, UvScale};
use serde_json::json;

/// Runs `drape inspect`.
pub fn run(args: &InspectArgs) -> Result<()> {
    let scene = crate::io::load_garments(&args.scene, &[])?;
    let mut garments = Vec::new();
    for g in &scene.garments {
        let entry = match ClothModel::build(g, UvScale::Auto, 1.0) {
            Ok(m) => json!({
                "name": g.name, "vertices": m.len(), "triangles": m.triangles.len(),
                "panels": m.panels, "seam_edges": m.seam_edges, "pinned": g.pinned_count(),
                "uv_problems": [],
            }),
            Err(Error::Input { message, .. }) => json!({
                "name": g.name, "vertices": g.positions.len(), "triangles": g.triangles.len(),
                "panels": 0, "seam_edges": 0, "pinned": g.pinned_count(),
                "uv_problems": [message],
            }),
            Err(e) => return Err(e),
        };
        garments.push(entry);
    }
    let out = json!({"garments": garments, "bodies": []});
    if args.json {
        println!("{out}");
    } else {
        for g in out["garments"].as_array().into_iter().flatten() {
            println!(
                "garment {}: {} vertices, {} triangles, {} panels, {} seam edges, {} pinned",
                g["name"].as_str().unwrap_or("?"),
                g["vertices"],
                g["triangles"],
                g["panels"],
                g["seam_edges"],
                g["pinned"]
            );
            for p in g["uv_problems"].as_array().into_iter().flatten() {
                println!("  UV problem: {}", p.as_str().unwrap_or("?"));
            }
        }
    }
    Ok(())
}
