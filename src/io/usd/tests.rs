//! Tests of the USD reader on hand-written layers in the shapes exporters write.
use super::*;
use crate::Vec2;
use proptest::prelude::*;

/// Two quads (a 2 × 1 strip) the way Blender writes them: generated root, object Xform
/// holding a Mesh named after the mesh data, indexed faceVarying `UVMap`, vertex pin.
const BLENDER: &str = r#"#usda 1.0
(
    defaultPrim = "root"
    doc = "Blender v4.2.0"
    metersPerUnit = 1
    upAxis = "Z"
    startTimeCode = 1
    endTimeCode = 10
    timeCodesPerSecond = 24
)

def Xform "root" (
    customData = {
        dictionary Blender = {
            bool generated = 1
        }
    }
)
{
    def Xform "Strip_001"
    {
        custom string userProperties:blender:object_name = "Strip.001"
        custom string userProperties:drape_role = "garment"
        matrix4d xformOp:transform = ( (1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 2, 1) )
        uniform token[] xformOpOrder = ["xformOp:transform"]

        def Mesh "StripData" (
            active = true
            prepend apiSchemas = ["MaterialBindingAPI"]
        )
        {
            float3[] extent = [(0, 0, 0), (2, 1, 0)]
            int[] faceVertexCounts = [4, 4]
            int[] faceVertexIndices = [0, 1, 4, 3, 1, 2, 5, 4]
            rel material:binding = </root/_materials/Cloth>
            normal3f[] normals = [(0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 1), (0, 0, 1)] (
                interpolation = "faceVarying"
            )
            point3f[] points = [(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0)]
            float[] primvars:pin = [1, 0, 0, 0.25, 0, 0] (
                interpolation = "vertex"
            )
            texCoord2f[] primvars:UVMap = [(0, 0), (1, 0), (1, 1), (0, 1), (3, 0), (2, 0), (2, 1), (3, 1)] (
                interpolation = "faceVarying"
            )
            int[] primvars:UVMap:indices = [0, 1, 2, 3, 5, 4, 7, 6]
            uniform token subdivisionScheme = "none"
        }
    }

    def Scope "_materials"
    {
        def Material "Cloth"
        {
            token outputs:surface.connect = </root/_materials/Cloth/Principled_BSDF.outputs:surface>

            def Shader "Principled_BSDF"
            {
                uniform token info:id = "UsdPreviewSurface"
                float inputs:roughness = 0.5
                asset inputs:file = @./tex.png@
                token outputs:surface
            }
        }
    }
}
"#;

pub(super) fn read_text(text: &str) -> Result<Imported> {
    let layer = parser::parse(text).map_err(|e| unreadable(Path::new("t.usda"), e))?;
    from_layer(Path::new("t.usda"), &layer)
}

#[test]
fn blender_layout_gives_the_object_name_role_fan_triangles_and_seam_uvs() {
    let f = read_text(BLENDER).unwrap();
    assert_eq!(f.up, UpAxis::Z);
    assert_eq!(f.frame_range, Some((1, 10)));
    assert_eq!(f.fps, Some(24.0));
    assert_eq!(f.meshes.len(), 1);
    let m = &f.meshes[0];
    assert_eq!(m.name, "Strip.001");
    for alias in ["Strip_001", "StripData", "/root/Strip_001/StripData"] {
        assert!(m.answers_to(alias), "{alias}");
    }
    assert_eq!(m.role.as_deref(), Some("garment"));
    assert_eq!(m.positions.len(), 6);
    // Fans (c0, c1, c2), (c0, c2, c3) per quad.
    assert_eq!(
        m.triangles,
        vec![[0, 1, 4], [0, 4, 3], [1, 2, 5], [1, 5, 4]]
    );
    // Corner UVs through the indices; point 1 and 4 carry two UVs each: a seam.
    let uv = |x, y| Vec2::new(x, y);
    assert_eq!(m.corner_uvs[0], [uv(0.0, 0.0), uv(1.0, 0.0), uv(1.0, 1.0)]);
    assert_eq!(m.corner_uvs[2], [uv(2.0, 0.0), uv(3.0, 0.0), uv(3.0, 1.0)]);
    assert_eq!(m.pin, vec![1.0, 0.0, 0.0, 0.25, 0.0, 0.0]);
    assert_eq!(m.faces.counts, vec![4, 4]);
    assert_eq!(m.faces.points, vec![0, 1, 4, 3, 1, 2, 5, 4]);
    assert_eq!(m.faces.uvs[4], uv(2.0, 0.0));
    // The transform's last row is the translation (row-vector convention).
    assert_eq!(m.world_translation, Vec3::new(0.0, 0.0, 2.0));
    assert!(m.animation.is_none());
    let scene = f.select(&[], &[], true).unwrap();
    let g = &scene.garments[0];
    assert_eq!(g.output_points, (0..6).collect::<Vec<_>>());
    assert_eq!(g.pinned_count(), 1);
    assert!(scene.bodies.is_empty());
}

#[test]
fn customdata_role_and_meters_per_unit_go_into_the_world_transform() {
    let text = r#"#usda 1.0
(
    metersPerUnit = 0.01
)
def Xform "Body" (
    customData = {
        string "drape:role" = "body"
    }
)
{
    double3 xformOp:translate = (100, 0, 0)
    float3 xformOp:scale = (2, 2, 2)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]
    def Mesh "Tri" (customData = { dictionary drape = { string role = "garment" } })
    {
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        point3f[] points = [(0, 0, 0), (50, 0, 0), (0, 50, 0)]
    }
}
"#;
    let f = read_text(text).unwrap();
    let m = &f.meshes[0];
    // The Mesh's own customData wins over its Xform's.
    assert_eq!(m.role.as_deref(), Some("garment"));
    assert_eq!(m.name, "Body");
    // Positions stay in file units (cm); world is metres: 0.01 · (100 + 2 p).
    assert_eq!(m.positions[1], Vec3::new(50.0, 0.0, 0.0));
    let w = m.world_positions();
    assert!((w[1] - Vec3::new(2.0, 0.0, 0.0)).norm() < 1e-12, "{}", w[1]);
    assert!((m.world_linear - Mat3::identity() * 0.02).norm() < 1e-15);
    assert_eq!(f.up, UpAxis::Y);
    assert_eq!(f.fps, None);
}

#[test]
fn time_sampled_points_and_transforms_animate_in_frames() {
    let text = r#"#usda 1.0
(
    timeCodesPerSecond = 48
    framesPerSecond = 24
    metersPerUnit = 1
)
def Xform "Arm"
{
    double3 xformOp:translate.timeSamples = {
        0: (0, 0, 0),
        4: (0, 4, 0),
    }
    uniform token[] xformOpOrder = ["xformOp:translate"]
    def Mesh "ArmMesh"
    {
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        point3f[] points.timeSamples = {
            2: [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
            0: [(0, 0, 0), (1, 0, 0), (0, 0, 1)],
        }
    }
}
"#;
    let f = read_text(text).unwrap();
    let m = &f.meshes[0];
    let a = m.animation.as_ref().expect("animated");
    // Time codes 0, 2, 4 at 48 per second are frames 0, 1, 2 at 24 fps.
    assert_eq!(a.frames, vec![0.0, 1.0, 2.0]);
    assert_eq!(a.positions[0][2], Vec3::new(0.0, 0.0, 1.0));
    assert_eq!(a.positions[1][2], Vec3::new(0.0, 3.0, 0.0)); // translate (0,2,0) + (0,1,0)
    assert_eq!(a.positions[2][2], Vec3::new(0.0, 5.0, 0.0)); // held points, translate 4
                                                             // The first frame is the earliest sample.
    assert_eq!(m.positions[2], Vec3::new(0.0, 0.0, 1.0));
    let body = f.select(&[], &[], false).unwrap().bodies.remove(0);
    assert_eq!(body.animation.range(), (0.0, 2.0));
}

#[test]
fn left_handed_meshes_are_rewound_and_vertex_uvs_and_st_are_read() {
    let text = r#"#usda 1.0
def Mesh "M"
{
    uniform token orientation = "leftHanded"
    int[] faceVertexCounts = [3]
    int[] faceVertexIndices = [0, 1, 2]
    point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    texCoord2f[] primvars:st = [(0, 0), (1, 0), (0, 1)] (interpolation = "vertex")
}
"#;
    let m = read_text(text).unwrap().meshes.remove(0);
    assert_eq!(m.triangles, vec![[0, 2, 1]]);
    assert_eq!(m.corner_uvs[0][1], Vec2::new(0.0, 1.0));
    assert_eq!(m.faces.points, vec![0, 2, 1]);
}

#[test]
fn usdskel_meshes_bound_to_no_skeleton_are_errors() {
    let text = "#usda 1.0\ndef SkelRoot \"R\" { def Mesh \"Body\" {\n  int[] primvars:skel:jointIndices = [0]\n} }\n";
    let e = read_text(text).unwrap_err().to_string();
    assert!(
        e.contains("bound to no Skeleton") && e.contains("/R/Body"),
        "{e}"
    );
}

#[test]
fn overs_classes_inactive_prims_and_variant_sets_are_skipped() {
    let text = r#"#usda 1.0
over "O" { def Mesh "Hidden" { point3f[] points = [(0,0,0)] } }
class "C" { }
def Mesh "Off" (active = false) { }
def Xform "V" (
    variants = { string look = "a" }
    prepend variantSets = "look"
)
{
    variantSet "look" = {
        "a" { def Mesh "InVariant" { } }
    }
    float3 xformOp:scale.spline = { 1: 0; post held, }
}
"#;
    assert!(read_text(text).unwrap().meshes.is_empty());
}

#[test]
fn broken_meshes_are_input_errors_naming_the_prim() {
    let mesh = |body: &str| {
        format!("#usda 1.0\ndef Xform \"Obj\" {{ def Mesh \"Data\" {{\n{body}\n}} }}\n")
    };
    let cases = [
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 5]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,0)]", "beyond the 3 points"),
        ("int[] faceVertexCounts = [4]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,0)]", "add up to 4"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, -1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,0)]", "not a valid index"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,nan)]", "not finite"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,0)]\ntexCoord2f[] primvars:st = [(0,0)] (interpolation = \"faceVarying\")", "needs 3"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,0)]\ntexCoord2f[] primvars:st = [(0,0)]\nint[] primvars:st:indices = [0, 0, 7]", "beyond the 1 values"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points.timeSamples = { 1: [(0,0,0),(1,0,0),(0,1,0)], 2: [(0,0,0)] }", "must not change"),
        ("int[] faceVertexCounts = [3]\nint[] faceVertexIndices = [0, 1, 2]\npoint3f[] points = [(0,0,0),(1,0,0),(0,1,\"x\")]", "not numeric"),
    ];
    for (body, want) in cases {
        let e = read_text(&mesh(body))
            .and_then(|i| i.select(&["Obj".to_string()], &[], true))
            .unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.exit_code(), 2);
        assert!(
            msg.contains(want) && msg.contains("'Obj'") && msg.contains("/Obj/Data"),
            "{want}: {msg}"
        );
    }
}

#[test]
fn malformed_files_are_input_errors_with_a_line_number() {
    let cases = [
        ("def Mesh \"M\" {}", "#usda 1.0"),
        (
            "#usda 1.0\ndef Mesh \"M\" {\n  point3f[] points = [(0, 0, 0),\n",
            "truncated",
        ),
        ("#usda 1.0\ndef Mesh M {}", "line 2"),
        ("#usda 1.0\n(\n upAxis = \"X\"\n)\n", "upAxis"),
        ("#usda 1.0\n(\n metersPerUnit = -1\n)\n", "metersPerUnit"),
        ("#usda 1.0\nfoo", "'def'"),
    ];
    for (text, want) in cases {
        let msg = read_text(text).unwrap_err().to_string();
        assert!(msg.contains(want), "{want}: {msg}");
    }
    let deep = format!(
        "#usda 1.0\ndef Mesh \"M\" {{ int[] a = {}{} }}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    assert!(read_text(&deep)
        .unwrap_err()
        .to_string()
        .contains("nesting"));
}

#[test]
fn binary_and_non_utf8_files_are_refused_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let crate_file = dir.path().join("a.usdc");
    std::fs::write(&crate_file, b"PXR-USDC\x00\x00\x08\x00binary").unwrap();
    let e = read(&crate_file).unwrap_err().to_string();
    assert!(e.contains(".usda") && e.contains("a.usdc"), "{e}");
    let latin1 = dir.path().join("b.usda");
    std::fs::write(&latin1, b"#usda 1.0\ndef Mesh \"\xe9\" {}\n").unwrap();
    let e = read(&latin1).unwrap_err().to_string();
    assert!(e.contains("UTF-8"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Truncating or corrupting a valid file anywhere gives a result or an input error,
    /// never a panic.
    #[test]
    fn corrupted_files_never_panic(cut in 0usize..BLENDER.len(), at in 0usize..BLENDER.len(), byte in 0u8..128) {
        let cut_text = &BLENDER.as_bytes()[..cut];
        let _ = read_text(&String::from_utf8_lossy(cut_text));
        let mut bytes = BLENDER.as_bytes().to_vec();
        bytes[at] = byte;
        let _ = read_text(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn key_prims_named_after_a_mesh_get_the_keyframe_role_whatever_they_carry() {
    // A Blender duplicate of the garment keeps its drape_role = "garment".
    let key = BLENDER
        .replace("def Xform \"Strip_001\"", "def Xform \"Strip_001_key_12\"")
        .replace("\"Strip.001\"", "\"Strip.001_key_12\"");
    let text = BLENDER.replacen(
        "    def Scope \"_materials\"",
        &format!(
            "{}\n    def Scope \"_materials\"",
            &key[key.find("    def Xform \"Strip_001_key_12\"").unwrap()
                ..key.find("    def Scope \"_materials\"").unwrap()]
        ),
        1,
    );
    let f = read_text(&text).unwrap();
    let roles: Vec<(&str, Option<&str>)> = f
        .meshes
        .iter()
        .map(|m| (m.name.as_str(), m.role.as_deref()))
        .collect();
    assert_eq!(
        roles,
        vec![
            ("Strip.001", Some("garment")),
            ("Strip.001_key_12", Some(KEYFRAME_ROLE))
        ]
    );
}
