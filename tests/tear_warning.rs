//! Cloth torn while the bake goes on (issue 50, "Honest failure"): pins that follow points
//! moving apart stretch the cloth between them whatever the solver does. The bake warns
//! once, naming the frame, the strain and the place, and `--report` lists it under
//! `tears`; a sound bake says nothing of the kind.
mod common;

use common::{fixture, simulate_with_report};
use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// Columns (along x) and rows (along z) of the strip, its length and width (m).
const COLUMNS: usize = 9;
const ROWS: usize = 3;
const LENGTH: f64 = 0.4;
const WIDTH: f64 = 0.1;
/// Frames of the scene; its two end columns move apart uniformly, from `LENGTH` apart at
/// frame 1 to `2 LENGTH` at frame `LAST`.
const LAST: i32 = 24;

/// How far apart the pinned ends are at `frame`, over their distance at frame 1.
fn spread(frame: i32) -> f64 {
    1.0 + f64::from(frame - 1) / f64::from(LAST - 1)
}

/// A `.usda` scene: a horizontal strip at y = 1 m, UVs its flat shape in metres, both end
/// columns pinned, its points time-sampled so that they spread along x by [`spread`]
/// (the pins follow the garment's own animation; the free points' samples are not used).
fn pulled_strip(path: &Path) {
    let (mut points, mut st, mut pin) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..ROWS {
        for i in 0..COLUMNS {
            let x = LENGTH * (i as f64 / (COLUMNS - 1) as f64 - 0.5);
            let z = WIDTH * j as f64 / (ROWS - 1) as f64;
            points.push((x, z));
            st.push(format!("({}, {z})", x + 0.5 * LENGTH));
            pin.push(if i == 0 || i == COLUMNS - 1 { "1" } else { "0" });
        }
    }
    let mut indices = Vec::new();
    for j in 0..ROWS - 1 {
        for i in 0..COLUMNS - 1 {
            let k = j * COLUMNS + i;
            indices.extend([k, k + COLUMNS, k + COLUMNS + 1, k, k + COLUMNS + 1, k + 1]);
        }
    }
    let mut samples = String::new();
    for f in 1..=LAST {
        let row: Vec<String> = (points.iter())
            .map(|&(x, z)| format!("({}, 1, {z})", x * spread(f)))
            .collect();
        writeln!(samples, "                    {f}: [{}],", row.join(", ")).unwrap();
    }
    let join = |v: &[String]| v.join(", ");
    let text = format!(
        r#"#usda 1.0
(
    defaultPrim = "root"
    startTimeCode = 1
    endTimeCode = {LAST}
    framesPerSecond = 24
    timeCodesPerSecond = 24
    metersPerUnit = 1
    upAxis = "Y"
)

def Xform "root"
{{
    def Xform "Strip"
    {{
        custom string userProperties:drape_role = "garment"

        def Mesh "StripMesh"
        {{
            int[] faceVertexCounts = [{counts}]
            int[] faceVertexIndices = [{indices}]
            point3f[] points.timeSamples = {{
{samples}            }}
            texCoord2f[] primvars:st = [{st}] (
                interpolation = "vertex"
            )
            float[] primvars:pin = [{pin}] (
                interpolation = "vertex"
            )
            uniform token subdivisionScheme = "none"
        }}
    }}
}}
"#,
        counts = join(&vec!["3".to_string(); indices.len() / 3]),
        indices = join(&indices.iter().map(usize::to_string).collect::<Vec<_>>()),
        st = join(&st),
        pin = pin.join(", "),
    );
    std::fs::write(path, text).unwrap();
}

/// Bakes `scene` over `frames` with a report; returns (exit code, stderr, report).
fn bake(scene: &Path, frames: &str, dir: &Path) -> (i32, String, Value) {
    let (out, report) = (dir.join("out.pc2"), dir.join("report.json"));
    simulate_with_report(scene, frames, &out, &report, &[])
}

#[test]
fn pins_pulled_apart_warn_once_that_the_cloth_tears_and_the_report_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("pulled.usda");
    pulled_strip(&scene);
    let (code, err, report) = bake(&scene, &format!("1..{LAST}"), dir.path());
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = (err.lines())
        .filter(|l| l.contains("the cloth tears"))
        .collect();
    assert_eq!(warnings.len(), 1, "{err}");
    let tears = report["tears"].as_array().expect("a `tears` list");
    assert_eq!(tears.len(), 1, "{report}");
    let tear = &tears[0];
    println!("{}\n{tear}", warnings[0]);
    assert_eq!(tear["garment"], "Strip");
    assert_eq!(tear["cause"], "tear");
    // Each row is a chain of edges from one pinned end to the other, so its longest edge
    // is stretched at least as much as the pins' distance: past 50% from the first frame
    // whose spread passes 1.5 on.
    let frame = tear["frame"].as_i64().unwrap() as i32;
    let first_past = (1..=LAST).find(|&f| spread(f) > 1.5).unwrap();
    assert!((2..=first_past).contains(&frame), "frame {frame}");
    let strain = tear["strain"].as_f64().unwrap();
    assert!(strain > 0.5, "{strain}");
    assert!(
        strain >= spread(frame) - 1.0 - 1e-6,
        "{strain} at frame {frame}"
    );
    // One edge's two particles; the cache is in the file's point order.
    let particles: Vec<u64> = (tear["particles"].as_array().unwrap().iter())
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(particles.len(), 2);
    assert_eq!(tear["vertices"], tear["particles"]);
    assert!(particles.iter().all(|&p| p < (COLUMNS * ROWS) as u64));
    let warning = warnings[0];
    for says in [
        format!("at frame {frame} "),
        format!("stretched by {:.0}%", 100.0 * strain),
        format!("particles {}, {}", particles[0], particles[1]),
        "armature".to_string(),
    ] {
        assert!(warning.contains(&says), "'{says}' not in: {warning}");
    }
}

#[test]
fn a_sound_bake_says_nothing_of_tearing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err, report) = bake(&fixture("skirt_on_character.gltf"), "1..24", dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("tears"), "{err}");
    assert!(report.get("tears").is_none(), "{report}");
}
