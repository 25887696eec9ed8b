//! USD composition, `.usdz` and UsdSkel through the CLI and the library: the project's own
//! `.usda` fixtures (written into a temp dir) and, when `../shared/assets` is present, the
//! outside assets (Teapot component, RiggedFigure / RiggedSimple UsdSkel archives).
mod common;
use common::{code, drape, s, stderr, stdout};
use drape::Vec3;
use std::path::{Path, PathBuf};

/// The outside asset `name`, or `None` (with a message) when `../shared/assets` is absent.
fn asset(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "skipped: {} is absent (outside assets not installed)",
            p.display()
        );
        None
    }
}

/// Largest distance between the skinned points of RiggedFigure.usdz and RiggedFigure.glb
/// at every frame of the walk. The USD file's points are the glTF vertices unwelded
/// (several USD points per glTF vertex), so each USD point is paired with the glTF vertex
/// nearest to it at the first frame.
///
/// Tolerance: both files store the same keyframes and bind matrices as 32-bit floats
/// (relative error 6e-8, about 1e-7 m on a 2 m figure after a chain of a few joint
/// matrices) and both readers interpolate rotations by slerp between the same keys, so
/// the points agree to float rounding: 1e-5 m leaves two decades for the rounding of
/// the converted file and is a thousandth of the figure's smallest feature.
#[test]
fn rigged_figure_usdz_skin_matches_the_gltf() {
    let (Some(usdz), Some(glb)) = (asset("RiggedFigure.usdz"), asset("RiggedFigure.glb")) else {
        return;
    };
    let u = drape::io::load_scene(&usdz).expect("usdz loads");
    let g = drape::io::load_scene(&glb).expect("glb loads");
    assert_eq!(u.bodies.len(), 1);
    assert_eq!(g.bodies.len(), 1);
    let (ua, ga) = (&u.bodies[0].animation, &g.bodies[0].animation);
    let (first, last) = ga.range();
    assert_eq!(ua.range(), (first, last), "same frame range");
    assert!(last > first);
    let u0 = ua.sample(first);
    let g0 = ga.sample(first);
    let pair: Vec<usize> = u0
        .iter()
        .map(|p| {
            (0..g0.len())
                .min_by(|&a, &b| (g0[a] - p).norm().total_cmp(&(g0[b] - p).norm()))
                .unwrap()
        })
        .collect();
    let mut worst = 0.0f64;
    let mut f = first;
    while f <= last {
        let (us, gs) = (ua.sample(f), ga.sample(f));
        let mut w = 0.0f64;
        for (p, &k) in us.iter().zip(&pair) {
            w = w.max((p - gs[k]).norm());
        }
        worst = worst.max(w);
        f += 1.0;
    }
    let moved = ua
        .sample(last)
        .iter()
        .zip(&u0)
        .map(|(a, b): (&Vec3, &Vec3)| (a - b).norm())
        .fold(0.0, f64::max);
    eprintln!("RiggedFigure usdz vs glb: max distance {worst:e} m over frames {first}..{last}; points move up to {moved} m");
    assert!(moved > 0.01, "the figure is animated");
    assert!(worst < 1e-5, "max distance {worst} m");
}

/// `drape inspect` of the outside Teapot component lists the teapot (payload, references,
/// variants, sublayers followed), and `--variant` picks the other model.
#[test]
fn teapot_component_and_its_variant() {
    let Some(teapot) = asset("Teapot/Teapot.usd") else {
        return;
    };
    let utah = drape(&["inspect", "--json", s(&teapot)]);
    assert_eq!(code(&utah), 0, "{}", stderr(&utah));
    assert!(
        stdout(&utah).contains(r#""vertices":1286"#),
        "{}",
        stdout(&utah)
    );
    let fancy = drape(&[
        "inspect",
        "--json",
        s(&teapot),
        "--variant",
        "modelVariant=Fancy",
    ]);
    assert_eq!(code(&fancy), 0, "{}", stderr(&fancy));
    assert!(
        !stdout(&fancy).contains(r#""vertices":1286"#),
        "{}",
        stdout(&fancy)
    );
}

/// Both UsdSkel archives are animated bodies over their stage frame ranges.
#[test]
fn rigged_usdz_bodies_are_animated() {
    for (name, range) in [
        ("RiggedFigure.usdz", "[0,30]"),
        ("RiggedSimple.usdz", "[1,50]"),
    ] {
        let Some(p) = asset(name) else {
            return;
        };
        let o = drape(&["inspect", "--json", s(&p)]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!(r#""frames":{range}"#)),
            "{}",
            stdout(&o)
        );
    }
}

/// A component made of a sublayer, a reference, a payload and a variant set, written as
/// `.usda` text: the points come from the selected variant's referenced file, moved by the
/// referencing prim's transform; a missing payload file is a warning naming it.
#[test]
fn composed_fixture_sublayer_reference_payload_variant() {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
    let mesh = |name: &str, x: f64| {
        format!(
            "#usda 1.0\n(\n defaultPrim = \"{name}\"\n)\ndef Xform \"{name}\" {{\n def Mesh \"Geo\" {{\n  \
             int[] faceVertexCounts = [3]\n  int[] faceVertexIndices = [0, 1, 2]\n  \
             point3f[] points = [({x}, 0, 0), ({x}, 1, 0), ({x}, 0, 1)]\n }}\n}}\n"
        )
    };
    w("a.usda", &mesh("A", 1.0));
    w("b.usda", &mesh("B", 2.0));
    w(
        "payload.usda",
        "#usda 1.0\n(\n defaultPrim = \"P\"\n)\ndef Xform \"P\" (\n variants = { string model = \"a\" }\n \
         prepend variantSets = \"model\"\n) {\n variantSet \"model\" = {\n  \"a\" (prepend references = @./a.usda@) { }\n  \
         \"b\" (prepend references = @./b.usda@) { }\n }\n}\n",
    );
    w(
        "sub.usda",
        "#usda 1.0\n(\n metersPerUnit = 1\n upAxis = \"Z\"\n)\n",
    );
    w(
        "root.usda",
        "#usda 1.0\n(\n subLayers = [@./sub.usda@]\n)\ndef Xform \"Root\" {\n \
         double3 xformOp:translate = (0, 0, 5)\n uniform token[] xformOpOrder = [\"xformOp:translate\"]\n \
         def Xform \"Thing\" (prepend payload = @./payload.usda@) { }\n \
         def Xform \"Gone\" (prepend references = @./missing.usda@) { }\n}\n",
    );
    let root = dir.path().join("root.usda");
    let imported = drape::io::usd::read(&root).expect("composes");
    assert_eq!(
        imported.up,
        drape::scene::UpAxis::Z,
        "upAxis from the sublayer"
    );
    assert_eq!(imported.meshes.len(), 1);
    let p = imported.meshes[0].world_positions();
    let want = [[1.0, 0.0, 5.0], [1.0, 1.0, 5.0], [1.0, 0.0, 6.0]];
    for (q, w) in p.iter().zip(want) {
        assert!(
            (q - Vec3::from(w)).norm() < 1e-12,
            "{q:?} vs {w:?} (metersPerUnit 1)"
        );
    }
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("missing.usda") && w.contains("/Root/Gone")),
        "{:?}",
        imported.warnings
    );
    let opts = drape::io::usd::compose::Options::from_args(&["model=b".to_string()]).unwrap();
    let b = drape::io::usd::read_with(&root, &opts).expect("composes");
    assert!((b.meshes[0].world_positions()[0] - Vec3::new(2.0, 0.0, 5.0)).norm() < 1e-12);
    let o = drape(&["inspect", s(&root)]);
    assert_eq!(code(&o), 0);
    assert!(stderr(&o).contains("missing.usda"), "{}", stderr(&o));

    // Through a scene file, `--variant` reaches the files the scene references.
    let scene = dir.path().join("scene.json");
    w(
        "cloth.usda",
        "#usda 1.0\n(\n upAxis = \"Z\"\n)\ndef Mesh \"Cloth\" {\n \
         string userProperties:drape_role = \"garment\"\n int[] faceVertexCounts = [3]\n \
         int[] faceVertexIndices = [0, 1, 2]\n point3f[] points = [(0, 0, 9), (1, 0, 9), (0, 1, 9)]\n \
         texCoord2f[] primvars:st = [(0, 0), (1, 0), (0, 1)] (interpolation = \"vertex\")\n}\n",
    );
    w(
        "scene.json",
        r#"{"garments": [{"file": "cloth.usda"}], "bodies": [{"file": "root.usda"}]}"#,
    );
    let options = drape::io::ReadOptions {
        usd: opts,
        ..Default::default()
    };
    for (opts, x) in [(&Default::default(), 1.0), (&options, 2.0)] {
        let body = &drape::io::load_scene_with(&scene, opts).unwrap().bodies[0];
        let first = body.animation.sample(0.0)[0];
        assert!(
            (first - Vec3::new(x, 0.0, 5.0)).norm() < 1e-12,
            "{first:?}: the scene file's body from variant x = {x}"
        );
    }
}

/// Instanceable prims are bodies of their own: one prototype referenced by two instanceable
/// prims at different places gives two meshes, each placed by its instance's transform.
#[test]
fn instanceable_references_are_bodies_each() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("set.usda");
    std::fs::write(
        &root,
        "#usda 1.0\n(\n metersPerUnit = 1\n upAxis = \"Y\"\n)\n\
         class Xform \"Rock\" {\n def Mesh \"Geo\" {\n  int[] faceVertexCounts = [3]\n  \
         int[] faceVertexIndices = [0, 1, 2]\n  point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]\n }\n}\n\
         def Xform \"A\" (instanceable = true\n prepend inherits = </Rock>) {\n \
         double3 xformOp:translate = (10, 0, 0)\n uniform token[] xformOpOrder = [\"xformOp:translate\"]\n}\n\
         def Xform \"B\" (instanceable = true\n prepend inherits = </Rock>) {\n \
         double3 xformOp:translate = (0, 0, -4)\n uniform token[] xformOpOrder = [\"xformOp:translate\"]\n}\n",
    )
    .unwrap();
    let imported = drape::io::usd::read(&root).expect("composes");
    let mut firsts: Vec<Vec3> = imported
        .meshes
        .iter()
        .map(|m| m.world_positions()[1])
        .collect();
    firsts.sort_by(|a, b| a.x.total_cmp(&b.x));
    assert_eq!(
        firsts.len(),
        2,
        "{:?}",
        imported.meshes.iter().map(|m| &m.name).collect::<Vec<_>>()
    );
    assert!(
        (firsts[0] - Vec3::new(1.0, 0.0, -4.0)).norm() < 1e-12,
        "{firsts:?}"
    );
    assert!(
        (firsts[1] - Vec3::new(11.0, 0.0, 0.0)).norm() < 1e-12,
        "{firsts:?}"
    );
}
