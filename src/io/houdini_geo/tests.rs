//! Tests of the Houdini `.geo` reader: layouts Houdini writes, winding, sequences, errors.
use super::format::parse;
use super::write::{to_json, GeoMesh};
use super::*;
use proptest::prelude::*;

/// A unit quad as Houdini saves it: points 0..3 counter-clockwise seen from +Z, so the
/// polygon lists them clockwise (0, 3, 2, 1) to face +Z; vertex uv; point pin.
const QUAD: &str = r#"["fileversion","20.0.547","hasindex",false,"pointcount",4,"vertexcount",4,"primitivecount",1,
 "info",{"software":"Houdini"},
 "topology",["pointref",["indices",[0,3,2,1]]],
 "attributes",[
  "pointattributes",[
   [["scope","public","type","numeric","name","P","options",{"type":{"type":"string","value":"point"}}],
    ["size",3,"storage","fpreal32","defaults",["size",1,"storage","fpreal64","values",[0]],
     "values",["size",3,"storage","fpreal32","tuples",[[0,0,0],[1,0,0],[1,1,0],[0,1,0]]]]],
   [["scope","public","type","numeric","name","pin"],
    ["size",1,"storage","fpreal32","values",["size",1,"storage","fpreal32","arrays",[[1,0,0,0.5]]]]]
  ],
  "vertexattributes",[
   [["scope","public","type","numeric","name","uv","options",{"type":{"type":"string","value":"texturecoord"}}],
    ["size",3,"storage","fpreal32","values",["size",3,"storage","fpreal32","tuples",[[0,0,0],[0,1,0],[1,1,0],[1,0,0]]]]]
  ],
  "globalattributes",[
   [["scope","public","type","string","name","drape_role"],
    ["size",1,"storage","int32","strings",["garment"],"indices",["size",1,"storage","int32","arrays",[[0]]]]]
  ]
 ],
 "primitives",[[["type","Polygon_run"],["startvertex",0,"nprimitives",1,"nvertices_rle",[4,1]]]]
]"#;

fn normal(m: &ImportedMesh, t: usize) -> Vec3 {
    let [a, b, c] = m.triangles[t].map(|i| m.positions[i]);
    (b - a).cross(&(c - a))
}

#[test]
fn houdini_clockwise_polygons_become_counter_clockwise_triangles() {
    let geo = parse(QUAD).unwrap();
    let m = to_mesh(Path::new("q.geo"), "q", &geo).unwrap();
    assert_eq!(m.triangles.len(), 2);
    for t in 0..2 {
        assert!(
            normal(&m, t).z > 0.0,
            "triangle {t} faces {:?}",
            normal(&m, t)
        );
    }
    // UVs follow their vertices: point 1 (1,0,0) has uv (1,0) in this layout.
    for (tri, uvs) in m.triangles.iter().zip(&m.corner_uvs) {
        for (p, uv) in tri.iter().zip(uvs) {
            let pos = m.positions[*p];
            assert_eq!((uv.x, uv.y), (pos.x, pos.y), "point {p}");
        }
    }
    assert_eq!(m.pin, vec![1.0, 0.0, 0.0, 0.5]);
    assert_eq!(m.role.as_deref(), Some("garment"));
    assert_eq!(m.faces.counts, vec![4]);
    assert_eq!(m.faces.points, vec![1, 2, 3, 0]);
}

#[test]
fn written_geometry_reads_back_with_the_same_triangles() {
    let mesh = GeoMesh {
        points: vec![
            Vec3::zeros(),
            Vec3::x(),
            Vec3::y(),
            Vec3::new(1.0, 1.0, 0.5),
        ],
        triangles: vec![[0, 1, 2], [1, 3, 2]],
        corner_uvs: Some(vec![
            [
                Vec2::new(0.0, 0.0),
                Vec2::new(1.0, 0.0),
                Vec2::new(0.0, 1.0),
            ],
            [
                Vec2::new(1.0, 0.0),
                Vec2::new(1.0, 1.0),
                Vec2::new(0.0, 1.0),
            ],
        ]),
        pin: Some(vec![0.0, 1.0, 0.0, 0.0]),
        role: Some("garment".into()),
    };
    let geo = parse(&to_json(&mesh).to_string()).unwrap();
    let m = to_mesh(Path::new("w.geo"), "w", &geo).unwrap();
    // Houdini's reversal undone: (a, b, c) → (c, b, a) → fan of the reversal → (a, b, c).
    assert_eq!(m.triangles, mesh.triangles);
    assert_eq!(Some(m.corner_uvs), mesh.corner_uvs);
    assert_eq!(m.pin, vec![0.0, 1.0, 0.0, 0.0]);
    assert_eq!(m.role.as_deref(), Some("garment"));
}

#[test]
fn paged_values_poly_and_run_primitives_are_read() {
    // P paged 2 per page, packed as [1, 2]: page 0 stores x0 x1 | (y0 z0) (y1 z1),
    // page 1 (one point) has its x pack constant.
    let text = r#"["pointcount",3,"vertexcount",6,"primitivecount",2,
 "topology",["pointref",["indices",[0,1,2,2,1,0]]],
 "attributes",["pointattributes",[
   [["type","numeric","name","P"],["size",3,"values",["size",3,"storage","fpreal32",
     "pagesize",2,"packing",[1,2],"constantpageflags",[[false,true],[false,false]],
     "rawpagedata",[0,1, 0,0, 0,0, 7, 1,0]]]]]],
 "primitives",[
   [["type","Poly"],["vertex",[0,1,2],"closed",true]],
   [["type","run","runtype","Poly","varyingfields",["vertex"],"uniformfields",{"closed":true}],[[[3,4,5]]]]
 ]]"#;
    let geo = parse(text).unwrap();
    assert_eq!(
        geo.points,
        vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [7.0, 1.0, 0.0]]
    );
    assert_eq!(geo.polygons, vec![vec![0, 1, 2], vec![3, 4, 5]]);
}

#[test]
fn broken_geometry_is_an_error_never_a_panic() {
    let cases = [
        ("", "JSON"),
        ("{\"a\": 1}", "not Houdini"),
        ("[\"pointcount\"]", "not Houdini"),
        (
            r#"["pointcount",1,"vertexcount",1,"topology",["pointref",["indices",[5]]]]"#,
            "beyond the 1 points",
        ),
        (r#"["pointcount",2,"vertexcount",0]"#, "no P attribute"),
        (
            r#"["pointcount",1,"vertexcount",1,"topology",["pointref",["indices",[0]]],"attributes",["pointattributes",[[["type","numeric","name","P"],["size",3,"values",["tuples",[[0,0,0]]]]]]],"primitives",[[["type","Polygon_run"],["startvertex",0,"nprimitives",1,"nvertices_rle",[3,1]]]]]"#,
            "past the vertex count",
        ),
        (
            r#"["pointcount",1,"attributes",["pointattributes",[[["type","numeric","name","P"],["size",3,"values",["pagesize",4,"rawpagedata",[0,0]]]]]]]"#,
            "shorter",
        ),
        (r#"["pointcount",99999999999]"#, "pointcount"),
    ];
    for (text, want) in cases {
        let e = parse(text).unwrap_err();
        assert!(e.contains(want), "{want}: {e}");
    }
    let full = &QUAD[..QUAD.len() / 2];
    assert!(parse(full).is_err());
}

#[test]
fn frame_numbers_match_the_pattern_exactly() {
    let p = FramePattern::parse(Path::new("dir/body.$F4.geo")).unwrap();
    let f = match_frame(&p, "body.0012.geo").unwrap();
    assert_eq!(f.frame, 12);
    assert_eq!(f.mesh_name(), "body");
    assert_eq!(match_frame(&p, "body.12.geo"), None);
    assert_eq!(match_frame(&p, "body.0012.geo.partial"), None);
    assert_eq!(match_frame(&p, "body.-003.geo").map(|f| f.frame), Some(-3));
    let p = FramePattern::parse(Path::new("shot2_$F.geo")).unwrap();
    let f = match_frame(&p, "shot2_7.geo").unwrap();
    assert_eq!((f.frame, f.mesh_name()), (7, "shot2".to_string()));
}

#[test]
fn a_sequence_is_one_mesh_animated_at_its_frames() {
    let dir = tempfile::tempdir().unwrap();
    let base = GeoMesh {
        points: vec![Vec3::zeros(), Vec3::x(), Vec3::y()],
        triangles: vec![[0, 1, 2]],
        ..GeoMesh::default()
    };
    for frame in [3, 1, 2] {
        let mut m = base.clone();
        m.points.iter_mut().for_each(|p| p.y += f64::from(frame));
        write::write_geo(&m, &dir.path().join(format!("body.{frame:04}.geo"))).unwrap();
    }
    std::fs::write(dir.path().join("body.0004.geo.partial"), "junk").unwrap();
    let f = read(&dir.path().join("body.$F4.geo")).unwrap();
    assert_eq!(f.frame_range, Some((1, 3)));
    let m = &f.meshes[0];
    assert_eq!(m.name, "body");
    let a = m.animation.as_ref().unwrap();
    assert_eq!(a.frames, vec![1.0, 2.0, 3.0]);
    assert_eq!(a.positions[2][0], Vec3::new(0.0, 3.0, 0.0));
    // A frame with another topology is an error naming that file.
    let mut other = base.clone();
    other.points.push(Vec3::z());
    write::write_geo(&other, &dir.path().join("body.0005.geo")).unwrap();
    let e = read(&dir.path().join("body.$F4.geo"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("body.0005.geo") && e.contains("same topology"),
        "{e}"
    );
    let e = read(&dir.path().join("none.$F4.geo"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no file matches"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Corrupting a valid file anywhere gives a result or an error, never a panic.
    #[test]
    fn corrupted_geometry_never_panics(cut in 0usize..QUAD.len(), at in 0usize..QUAD.len(), byte in 32u8..127) {
        let _ = parse(&QUAD[..cut]);
        let mut bytes = QUAD.as_bytes().to_vec();
        bytes[at] = byte;
        if let Ok(text) = String::from_utf8(bytes) {
            if let Ok(geo) = parse(&text) {
                let _ = to_mesh(Path::new("x.geo"), "x", &geo);
            }
        }
    }
}
