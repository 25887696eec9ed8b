//! Tests of UsdSkel skinning and of the UV forms on hand-written `.usda` layers.
use super::tests::read_text;
use crate::Vec3;
use nalgebra::{UnitQuaternion, Vector3};

/// Two joints: `root` at the origin and `root/tip` one unit up +y; the animation turns
/// `tip` by 90° about z at time 10 (0° at time 0). Point 0 follows `root` only, point 1
/// `tip` only, point 2 half of each.
const SKINNED: &str = r#"#usda 1.0
(
    metersPerUnit = 1
    startTimeCode = 0
    endTimeCode = 10
)
def SkelRoot "Rig"
{
    def Skeleton "Skel" (prepend apiSchemas = ["SkelBindingAPI"])
    {
        uniform token[] joints = ["root", "root/tip"]
        uniform matrix4d[] bindTransforms = [((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1)), ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,1,0,1))]
        uniform matrix4d[] restTransforms = [((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1)), ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,1,0,1))]
        rel skel:animationSource = </Rig/Anim>
    }
    def SkelAnimation "Anim"
    {
        uniform token[] joints = ["root/tip", "root"]
        float3[] translations.timeSamples = { 0: [(0, 1, 0), (0, 0, 0)], 10: [(0, 1, 0), (0, 0, 0)] }
        quatf[] rotations.timeSamples = { 0: [(1, 0, 0, 0), (1, 0, 0, 0)], 10: [(0.70710678, 0, 0, 0.70710678), (1, 0, 0, 0)] }
        half3[] scales = [(1, 1, 1), (1, 1, 1)]
    }
    def Mesh "Body" (prepend apiSchemas = ["SkelBindingAPI"])
    {
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        point3f[] points = [(1, 0, 0), (1, 2, 0), (1, 1, 0)]
        matrix4d primvars:skel:geomBindTransform = ((1,0,0,0),(0,1,0,0),(0,0,1,0),(0,0,0,1))
        int[] primvars:skel:jointIndices = [0, 0, 1, 0, 0, 1] (interpolation = "vertex" elementSize = 2)
        float[] primvars:skel:jointWeights = [1, 0, 1, 0, 0.5, 0.5] (interpolation = "vertex" elementSize = 2)
        uniform token[] skel:joints = ["root", "root/tip"]
        rel skel:skeleton = </Rig/Skel>
    }
}
"#;

/// The skinned points at frame 5 are the analytic linear blend: `tip` turned by 45° about
/// the joint at (0, 1, 0) (slerp halfway), `root` still; point 2 averages the two.
#[test]
fn two_joint_skin_matches_the_analytic_linear_blend() {
    let imported = read_text(SKINNED).unwrap();
    let m = &imported.meshes[0];
    let anim = m.animation.as_ref().expect("skinned mesh is animated");
    assert_eq!(anim.frames.len(), 11, "every frame of 0..10 is evaluated");
    let p = anim.sample(5.0);
    let joint = Vec3::new(0.0, 1.0, 0.0);
    let turn = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_4);
    let by_tip = |q: Vec3| joint + turn * (q - joint);
    let want = [
        Vec3::new(1.0, 0.0, 0.0),
        by_tip(Vec3::new(1.0, 2.0, 0.0)),
        0.5 * Vec3::new(1.0, 1.0, 0.0) + 0.5 * by_tip(Vec3::new(1.0, 1.0, 0.0)),
    ];
    for (got, want) in p.iter().zip(want) {
        assert!((got - want).norm() < 1e-6, "{got:?} vs {want:?}");
    }
    assert!(
        (p[1] - Vec3::new(1.0, 2.0, 0.0)).norm() > 0.1,
        "the tip moved"
    );
}

/// A triangle pair with `st` indexed faceVarying: the indices pick the values per corner.
#[test]
fn indexed_face_varying_st_is_read() {
    let text = r#"#usda 1.0
(
    metersPerUnit = 1
)
def Mesh "Cloth" (customData = { dictionary drape = { string role = "garment" } })
{
    int[] faceVertexCounts = [3, 3]
    int[] faceVertexIndices = [0, 1, 2, 0, 2, 3]
    point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    texCoord2f[] primvars:st = [(0, 0), (1, 0), (1, 1), (0, 1)] (interpolation = "faceVarying")
    int[] primvars:st:indices = [0, 1, 2, 0, 2, 3]
}
"#;
    let m = &read_text(text).unwrap().meshes[0];
    let uv = |k: usize, c: usize| m.corner_uvs[k][c];
    assert_eq!(m.corner_uvs.len(), 2);
    assert_eq!(uv(1, 1), crate::Vec2::new(1.0, 1.0));
    assert_eq!(uv(1, 2), crate::Vec2::new(0.0, 1.0));
    assert!(m.uv_problem.is_none());
}

/// A body needs no UVs: none, or a malformed `st`, reads; a garment with the same
/// malformed `st` is refused with the reason.
#[test]
fn body_without_uvs_reads_and_garment_needs_them() {
    let text = r#"#usda 1.0
(
    metersPerUnit = 1
)
def Mesh "Wall"
{
    int[] faceVertexCounts = [3]
    int[] faceVertexIndices = [0, 1, 2]
    point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
}
def Mesh "Odd"
{
    int[] faceVertexCounts = [3]
    int[] faceVertexIndices = [0, 1, 2]
    point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
    texCoord2f[] primvars:st = [(0, 0)] (interpolation = "faceVarying")
}
"#;
    let imported = read_text(text).unwrap();
    let scene = imported.clone().select(&[], &[], false).unwrap();
    assert_eq!(scene.bodies.len(), 2);
    let err = imported
        .select(&["Odd".to_string()], &[], true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("UVs cannot be read"), "{err}");
}
