//! Archives built here byte by byte from the layout in [`super::core`]'s doc, read back
//! through [`super::read`] and the scene selection.
use super::*;
use crate::io::objects::GARMENT_ROLE;

/// An Ogawa file under construction.
struct Ogawa(Vec<u8>);

const DATA: u64 = 1 << 63;

impl Ogawa {
    fn new() -> Self {
        let mut b = b"Ogawa\xff\x00\x01".to_vec();
        b.extend_from_slice(&[0; 8]);
        Ogawa(b)
    }
    fn data(&mut self, bytes: &[u8]) -> u64 {
        if bytes.is_empty() {
            return DATA;
        }
        let pos = self.0.len() as u64;
        self.0
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
        pos | DATA
    }
    fn group(&mut self, children: &[u64]) -> u64 {
        if children.is_empty() {
            return 0;
        }
        let pos = self.0.len() as u64;
        self.0
            .extend_from_slice(&(children.len() as u64).to_le_bytes());
        for c in children {
            self.0.extend_from_slice(&c.to_le_bytes());
        }
        pos
    }
    /// A sample: a 16-byte key and the values.
    fn sample(&mut self, values: &[u8]) -> u64 {
        let mut b = vec![0u8; 16];
        b.extend_from_slice(values);
        self.data(&b)
    }
}

fn f32s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect()
}
fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|&x| x.to_le_bytes()).collect()
}
fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|&x| x.to_le_bytes()).collect()
}

/// A property to write: its kind, POD code, extent, time sampling, metadata and samples
/// (one stored sample per entry; all entries differ but the first if `changing`).
struct Prop {
    name: &'static str,
    kind: u32,
    pod: u32,
    extent: u32,
    ts: u32,
    meta: &'static str,
    samples: Vec<Vec<u8>>,
    group: u64,
}

fn array(name: &'static str, pod: u32, extent: u32, samples: Vec<Vec<u8>>) -> Prop {
    Prop {
        name,
        kind: 2,
        pod,
        extent,
        ts: 0,
        meta: "",
        samples,
        group: 0,
    }
}
fn scalar(name: &'static str, pod: u32, extent: u32, samples: Vec<Vec<u8>>) -> Prop {
    Prop {
        name,
        kind: 1,
        pod,
        extent,
        ts: 0,
        meta: "",
        samples,
        group: 0,
    }
}
fn compound(o: &mut Ogawa, name: &'static str, meta: &'static str, props: Vec<Prop>) -> Prop {
    let group = write_compound(o, props);
    Prop {
        name,
        kind: 0,
        pod: 0,
        extent: 0,
        ts: 0,
        meta,
        samples: Vec::new(),
        group,
    }
}

fn write_compound(o: &mut Ogawa, props: Vec<Prop>) -> u64 {
    let mut children = Vec::new();
    let mut headers = Vec::new();
    for p in props {
        let g = if p.kind == 0 {
            p.group
        } else {
            let mut slots = Vec::new();
            for s in &p.samples {
                slots.push(o.sample(s));
                if p.kind == 2 {
                    slots.push(DATA);
                }
            }
            o.group(&slots)
        };
        children.push(g);
        let info =
            p.kind | (2 << 2) | (p.pod << 4) | 0x100 | 0x200 | (p.extent << 12) | (0xff << 20);
        let mut h = info.to_le_bytes().to_vec();
        if p.kind != 0 {
            let n = p.samples.len() as u32;
            let (first, last) = if n > 1 { (1, n - 1) } else { (0, 0) };
            for x in [n, first, last, p.ts] {
                h.extend_from_slice(&x.to_le_bytes());
            }
        }
        h.extend_from_slice(&(p.name.len() as u32).to_le_bytes());
        h.extend_from_slice(p.name.as_bytes());
        h.extend_from_slice(&(p.meta.len() as u32).to_le_bytes());
        h.extend_from_slice(p.meta.as_bytes());
        headers.extend(h);
    }
    children.push(o.data(&headers));
    o.group(&children)
}

/// An object: its name, metadata, properties and children.
struct Obj {
    name: &'static str,
    meta: &'static str,
    props: u64,
    children: Vec<Obj>,
}

fn write_object(o: &mut Ogawa, props: u64, children: Vec<Obj>) -> u64 {
    let mut groups = vec![props];
    let mut headers = Vec::new();
    for c in children {
        groups.push(write_object(o, c.props, c.children));
        headers.extend_from_slice(&(c.name.len() as u32).to_le_bytes());
        headers.extend_from_slice(c.name.as_bytes());
        headers.push(0xff);
        headers.extend_from_slice(&(c.meta.len() as u32).to_le_bytes());
        headers.extend_from_slice(c.meta.as_bytes());
    }
    headers.extend_from_slice(&[0; 32]);
    groups.push(o.data(&headers));
    o.group(&groups)
}

/// The archive with `top`'s children, time sampling 1 uniform at 24 fps from frame 1.
fn archive(mut o: Ogawa, children: Vec<Obj>) -> Vec<u8> {
    let version = o.data(&1i32.to_le_bytes());
    let library = o.data(&10709i32.to_le_bytes());
    let top = write_object(&mut o, 0, children);
    let meta = o.data(b"_ai_Application=test");
    let mut ts = Vec::new();
    for (tpc, t0) in [(1.0, 0.0), (1.0 / 24.0, 1.0 / 24.0)] {
        ts.extend_from_slice(&3u32.to_le_bytes());
        ts.extend_from_slice(&f64s(&[tpc]));
        ts.extend_from_slice(&1u32.to_le_bytes());
        ts.extend_from_slice(&f64s(&[t0]));
    }
    let ts = o.data(&ts);
    let indexed = o.data(&[]);
    let root = o.group(&[version, library, top, meta, ts, indexed]);
    o.0[8..16].copy_from_slice(&root.to_le_bytes());
    o.0
}

const MESH: &str = "schema=AbcGeom_PolyMesh_v1";
const XFORM: &str = "schema=AbcGeom_Xform_v3";

/// A unit quad in the XY plane, wound clockwise seen from +Z (Alembic), with indexed
/// face-varying UVs; `p` gives its points per sample.
fn quad(o: &mut Ogawa, p: Vec<Vec<f64>>, ts: u32) -> u64 {
    let mut points = array("P", 10, 3, p.iter().map(|s| f32s(s)).collect());
    points.ts = ts;
    let uv_vals = array(
        ".vals",
        10,
        2,
        vec![f32s(&[0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 2.0])],
    );
    let uv_idx = array(".indices", 5, 1, vec![i32s(&[0, 3, 2, 1])]);
    let uv = compound(
        o,
        "uv",
        "geoScope=fvr;isGeomParam=true",
        vec![uv_vals, uv_idx],
    );
    let geom = compound(
        o,
        ".geom",
        MESH,
        vec![
            points,
            array(".faceIndices", 6, 1, vec![i32s(&[0, 3, 2, 1])]),
            array(".faceCounts", 6, 1, vec![i32s(&[4])]),
            uv,
        ],
    );
    write_compound(o, vec![geom])
}

fn square() -> Vec<f64> {
    vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
}

/// An Xform with ops `ops` and `vals` per sample, `inherits` and a `drape_role`.
fn xform(
    o: &mut Ogawa,
    ops: &[u8],
    vals: Vec<Vec<f64>>,
    inherits: bool,
    role: Option<&'static str>,
) -> u64 {
    let n = vals[0].len() as u32;
    let mut v = scalar(".vals", 11, n, vals.iter().map(|s| f64s(s)).collect());
    v.ts = if vals.len() > 1 { 1 } else { 0 };
    let mut props = vec![
        scalar(".ops", 1, ops.len() as u32, vec![ops.to_vec()]),
        v,
        scalar(".inherits", 0, 1, vec![vec![u8::from(inherits)]]),
    ];
    if let Some(r) = role {
        let mut s = r.as_bytes().to_vec();
        s.push(0);
        let user = compound(
            o,
            ".userProperties",
            "",
            vec![array("drape_role", 12, 1, vec![s])],
        );
        props.push(user);
    }
    let x = compound(o, ".xform", XFORM, props);
    write_compound(o, vec![x])
}

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Translate (1, 2, 3) then rotate 90° about Y (applied first) around a quad mesh.
fn placed_quad_archive(role: Option<&'static str>) -> Vec<u8> {
    let mut o = Ogawa::new();
    let mesh = quad(&mut o, vec![square()], 0);
    let x = xform(
        &mut o,
        &[0x10, 0x50],
        vec![vec![1.0, 2.0, 3.0, 90.0]],
        true,
        role,
    );
    archive(
        o,
        vec![Obj {
            name: "Cloth",
            meta: XFORM,
            props: x,
            children: vec![Obj {
                name: "ClothShape",
                meta: MESH,
                props: mesh,
                children: vec![],
            }],
        }],
    )
}

#[test]
fn a_marked_mesh_under_a_transform_is_a_garment_wound_counter_clockwise_with_its_uvs() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "quad.abc", &placed_quad_archive(Some(GARMENT_ROLE)));
    let imported = read(&path, None).unwrap();
    assert_eq!(imported.up, UpAxis::Y);
    let m = &imported.meshes[0];
    assert_eq!(m.name, "Cloth");
    assert!(m.answers_to("ClothShape") && m.answers_to("/Cloth/ClothShape"));
    assert_eq!(m.role.as_deref(), Some(GARMENT_ROLE));
    // Alembic's clockwise (0, 3, 2, 1) is drape's counter-clockwise (1, 2, 3, 0): the
    // triangles face +Z in object space.
    assert_eq!(m.faces.points, vec![1, 2, 3, 0]);
    for t in &m.triangles {
        let [a, b, c] = t.map(|i| m.positions[i]);
        assert!((b - a).cross(&(c - a)).z > 0.0, "{t:?}");
    }
    // Corner UVs follow their points: the indexed UVs are 2 × the position.
    for (t, uv) in m.triangles.iter().zip(&m.corner_uvs) {
        for (&p, q) in t.iter().zip(uv) {
            assert_eq!(*q, 2.0 * m.positions[p].xy(), "{t:?}");
        }
    }
    // World: rotate (1, 0, 0) by 90° about Y to (0, 0, −1), then translate.
    let w = m.world_positions();
    assert!((w[1] - Vec3::new(1.0, 2.0, 2.0)).norm() < 1e-12, "{}", w[1]);
    let scene = imported.select(&[], &[], true).unwrap();
    assert_eq!(scene.garments.len(), 1);
    assert!(scene.bodies.is_empty());
}

#[test]
fn an_unmarked_mesh_is_a_body_and_garment_names_select_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "quad.abc", &placed_quad_archive(None));
    let scene = read(&path, None).unwrap().select(&[], &[], false).unwrap();
    assert_eq!((scene.garments.len(), scene.bodies.len()), (0, 1));
    let scene = read(&path, None)
        .unwrap()
        .select(&["ClothShape".into()], &[], true)
        .unwrap();
    assert_eq!(scene.garments[0].name, "Cloth");
    let e = read(&path, None)
        .unwrap()
        .select(&["Nope".into()], &[], true)
        .unwrap_err();
    assert!(e.to_string().contains("Cloth"), "{e}");
}

#[test]
fn time_sampled_points_and_transforms_animate_a_body_at_the_archive_frames() {
    // P moves up 1 per frame over frames 1..3; the Xform moves +X 10 per frame over the
    // same frames; a child Xform that does not inherit places a second, static quad.
    let mut o = Ogawa::new();
    let lifted = |dz: f64| -> Vec<f64> {
        square()
            .chunks(3)
            .flat_map(|c| [c[0], c[1], c[2] + dz])
            .collect()
    };
    let mesh = quad(&mut o, vec![lifted(0.0), lifted(1.0), lifted(2.0)], 1);
    let still = quad(&mut o, vec![square()], 0);
    let moving = xform(
        &mut o,
        &[0x10],
        vec![
            vec![0.0, 0.0, 0.0],
            vec![10.0, 0.0, 0.0],
            vec![20.0, 0.0, 0.0],
        ],
        true,
        None,
    );
    let alone = xform(&mut o, &[0x10], vec![vec![0.0, 5.0, 0.0]], false, None);
    let bytes = archive(
        o,
        vec![Obj {
            name: "Mover",
            meta: XFORM,
            props: moving,
            children: vec![
                Obj {
                    name: "MoverShape",
                    meta: MESH,
                    props: mesh,
                    children: vec![],
                },
                Obj {
                    name: "Alone",
                    meta: XFORM,
                    props: alone,
                    children: vec![Obj {
                        name: "AloneShape",
                        meta: MESH,
                        props: still,
                        children: vec![],
                    }],
                },
            ],
        }],
    );
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "anim.abc", &bytes);
    let imported = read(&path, None).unwrap();
    assert_eq!(imported.fps, Some(24.0));
    assert_eq!(imported.frame_range, Some((1, 3)));
    let scene = imported.select(&[], &[], false).unwrap();
    let names: Vec<&str> = scene.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, vec!["Mover", "Alone"]);
    let a = &scene.bodies[0].animation;
    assert_eq!(a.frames.len(), 3);
    for (k, f) in a.frames.iter().enumerate() {
        assert!((f - (k + 1) as f64).abs() < 1e-9, "{f}");
        let p = a.positions[k][2];
        assert!(
            (p - Vec3::new(1.0 + 10.0 * k as f64, 1.0, k as f64)).norm() < 1e-6,
            "{p}"
        );
    }
    // Not inheriting: only its own translation, static.
    let still = &scene.bodies[1].animation;
    assert_eq!(still.frames.len(), 1);
    assert!((still.positions[0][2] - Vec3::new(1.0, 6.0, 0.0)).norm() < 1e-12);
    // --fps 48 maps the same times to frames 2..6.
    let imported = read(&path, Some(48.0)).unwrap();
    let frames = &imported.meshes[0].animation.as_ref().unwrap().frames;
    assert!((frames[2] - 6.0).abs() < 1e-9, "{frames:?}");
}

#[test]
fn hdf5_archives_are_refused_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(&dir, "old.abc", b"\x89HDF\r\n\x1a\n\0\0\0\0");
    let e = read(&path, None).unwrap_err().to_string();
    assert!(
        e.contains("HDF5") && e.contains("Ogawa") && e.contains("old.abc"),
        "{e}"
    );
}

#[test]
fn every_truncation_and_every_corrupted_offset_is_an_error_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = placed_quad_archive(Some(GARMENT_ROLE));
    let path = dir.path().join("cut.abc");
    for len in (0..bytes.len()).step_by(7) {
        std::fs::write(&path, &bytes[..len]).unwrap();
        assert!(read(&path, None).is_err(), "{len} bytes read");
    }
    // Each 8-byte word set to a huge offset or size in turn.
    let mut errors = 0;
    for at in (8..bytes.len() - 8).step_by(8) {
        let mut b = bytes.clone();
        b[at..at + 8].copy_from_slice(&(u64::MAX >> 2).to_le_bytes());
        std::fs::write(&path, &b).unwrap();
        if let Err(e) = read(&path, None) {
            assert!(matches!(e, Error::Input { .. }), "{e}");
            errors += 1;
        }
    }
    assert!(errors > 0);
}
