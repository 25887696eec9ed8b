//! `--scale` (issue 51, "Units"): a garment modelled in centimetres but exported as metres
//! is named with its size and the scale that fixes it, and with `--scale 0.01` it falls
//! as the same garment in metres does, its cache written back in the file's centimetres.
mod common;
use common::{code, drape, s, stderr};
use drape::cache::pc2;
use drape::fixtures::{sheet, write_gltf, SheetPins, SheetPlane, SheetSpec};
use std::path::Path;

/// A 12 × 12 sheet, nothing pinned, `size` file units wide, in `path`.
fn write_sheet(path: &Path, size: f64) {
    let g = sheet(&SheetSpec {
        name: "Sheet".into(),
        size,
        plane: SheetPlane::Horizontal,
        pins: SheetPins::None,
        ..Default::default()
    });
    write_gltf(&[g], path).unwrap();
}

/// Bakes frames 1..12 of `scene` with `--scale scale`; (stderr, cache frames).
fn bake(scene: &Path, out: &Path, scale: &str) -> (String, Vec<Vec<[f32; 3]>>) {
    let o = drape(&[
        "simulate",
        s(scene),
        "--frames",
        "1..12",
        "--scale",
        scale,
        "-o",
        s(out),
        "--progress",
        "none",
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (_, _, frames) = pc2::read(out).expect("the cache reads back");
    (stderr(&o), frames)
}

#[test]
fn a_garment_in_centimetres_is_named_and_falls_as_in_metres_with_scale() {
    let dir = tempfile::tempdir().unwrap();
    let metres = dir.path().join("metres.gltf");
    let centimetres = dir.path().join("centimetres.gltf");
    write_sheet(&metres, 1.0);
    write_sheet(&centimetres, 100.0);

    // Read as metres the centimetre sheet is 100 m wide: a warning with the fix.
    let o = drape(&["inspect", s(&centimetres)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("garment 'Sheet' is 100.000 m across") && err.contains("--scale 0.01 "),
        "{err}"
    );
    let o = drape(&["inspect", s(&centimetres), "--scale", "0.01"]);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    let o = drape(&["inspect", s(&metres), "--scale", "0"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));

    // Falling freely (nothing pinned, no body) the sheet drops by the same metres either
    // way; the centimetre cache holds them in centimetres: 100 times the metre cache.
    let (err, m) = bake(&metres, &dir.path().join("m.pc2"), "1");
    assert!(!err.contains("warning"), "{err}");
    let (err, cm) = bake(&centimetres, &dir.path().join("cm.pc2"), "0.01");
    assert!(!err.contains("warning"), "{err}");
    assert_eq!((m.len(), cm.len()), (12, 12));
    let drop = m[0][0][1] - m[11][0][1];
    assert!(drop > 0.1, "the sheet fell {drop} m in 11 frames");
    for (f, (a, b)) in m.iter().zip(&cm).enumerate() {
        for (p, q) in a.iter().zip(b) {
            for k in 0..3 {
                let d = (f64::from(q[k]) - 100.0 * f64::from(p[k])).abs();
                assert!(d < 1e-3, "frame {f}: {q:?} cm against {p:?} m");
            }
        }
    }
}
