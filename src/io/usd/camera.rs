//! Perspective cameras (`UsdGeomCamera`, prims of type `Camera`) of a USD stage, placed at
//! given frames (the silhouette keyframes' `"camera": "NAME"`,
//! [`crate::io::silhouettes`]).
//!
//! A camera looks down its local −Z axis with +Y up, as glTF's. Its placement is the
//! prim's world transform ([`super::xform`]: the ops of the prim and its ancestors,
//! `!resetXformStack!` honoured) at time code `t = frame · timeCodesPerSecond / fps`,
//! scaled by `metersPerUnit` like every mesh of the stage, so it is in the world drape
//! simulates in. The lens, read at the first frame asked for, is
//!
//! ```text
//! yfov   = 2 · atan(verticalAperture / (2 · focalLength))
//! aspect = horizontalAperture / verticalAperture
//! ```
//! `focalLength` and the apertures are in the same unit (tenths of a scene unit, USD's
//! convention; millimetres in practice), so only their ratios matter; their fallbacks are
//! USD's: 50, 20.955 and 15.2908. The aperture offsets are left out. An orthographic
//! `projection` is an input error.
use super::layer::{Layer, Prim, Value};
use super::xform::{numbers_at, xform_ops, Blend};
use super::{compose, Found, StageInfo};
use crate::error::{Error, Result};
use crate::io::gltf::camera::PlacedCamera;
use nalgebra::Matrix4;
use std::path::Path;

/// USD's fallback `focalLength`.
const FOCAL_LENGTH: f64 = 50.0;
/// USD's fallback `horizontalAperture` (35 mm film, in mm).
const HORIZONTAL_APERTURE: f64 = 20.955;
/// USD's fallback `verticalAperture`.
const VERTICAL_APERTURE: f64 = 15.2908;

impl Found<'_> {
    /// The names that select it: the prim's name and path, and, when it is the one camera
    /// of an Xform (Blender writes each object as an Xform over its data's prim), the
    /// Xform's name and Blender's object name.
    fn names(&self) -> Vec<String> {
        let mut names = vec![self.prim.name.clone(), self.path.clone()];
        let alone = |p: &&&Prim| {
            p.type_name == "Xform"
                && p.children
                    .iter()
                    .filter(|c| c.type_name == "Camera")
                    .count()
                    == 1
        };
        if let Some(parent) = self.ancestors.last().filter(alone) {
            names.push(parent.name.clone());
            let object = parent
                .attribute("userProperties:blender:object_name")
                .and_then(|a| a.default.as_ref())
                .and_then(Value::as_str);
            names.extend(object.map(str::to_string));
        }
        names
    }
}

/// The camera of the USD file `path` (composed with `options`) named `name` (see
/// `Found::names`), placed at `frames`; `Err(names)` lists the stage's cameras when none
/// has that name.
pub fn camera(
    path: &Path,
    options: &compose::Options,
    name: &str,
    frames: &[i32],
) -> Result<std::result::Result<PlacedCamera, Vec<String>>> {
    let (layer, _) = super::stage(path, options)?;
    from_layer(path, &layer, name, frames)
}

/// [`camera`] of a parsed (composed) layer read from `path`.
pub fn from_layer(
    path: &Path,
    layer: &Layer,
    name: &str,
    frames: &[i32],
) -> Result<std::result::Result<PlacedCamera, Vec<String>>> {
    let info = StageInfo::from_layer(layer).map_err(|m| Error::input(path, None, m))?;
    let found = super::find(layer, "Camera");
    let Some(cam) = found.iter().find(|f| f.names().iter().any(|n| n == name)) else {
        return Ok(Err(found.iter().map(|f| f.path.clone()).collect()));
    };
    let err = |m: String| Error::input(path, Some(&cam.path), m);
    let projection = (cam.prim.attribute("projection"))
        .and_then(|a| a.default.as_ref())
        .and_then(Value::as_str);
    if projection == Some("orthographic") {
        return Err(err(
            "is an orthographic camera; silhouette keyframes need a perspective camera (or \
             give world_from_camera, yfov and aspect in the silhouettes file)"
                .into(),
        ));
    }
    let time = |frame: i32| f64::from(frame) * info.time_codes_per_second / info.fps();
    let t0 = time(frames.first().copied().unwrap_or(0));
    let lens = |attr: &str, fallback: f64| -> Result<f64> {
        let value = match cam.prim.attribute(attr) {
            Some(a) => numbers_at(a, t0, Blend::Linear).map_err(&err)?,
            None => None,
        };
        match value.as_deref() {
            None => Ok(fallback),
            Some([x]) if x.is_finite() && *x > 0.0 => Ok(*x),
            Some(v) => Err(err(format!(
                "{attr} is {v:?}, not one positive number; set the camera's {attr}"
            ))),
        }
    };
    let focal = lens("focalLength", FOCAL_LENGTH)?;
    let vertical = lens("verticalAperture", VERTICAL_APERTURE)?;
    let horizontal = lens("horizontalAperture", HORIZONTAL_APERTURE)?;
    let chain: Vec<_> = (cam.ancestors.iter().copied())
        .chain([cam.prim])
        .map(xform_ops)
        .collect::<std::result::Result<_, _>>()
        .map_err(&err)?;
    let world_from_camera = frames
        .iter()
        .map(|&f| {
            let mut m = Matrix4::identity();
            for ops in &chain {
                let local = ops.matrix_at(time(f)).map_err(&err)?;
                m = if ops.resets { local } else { m * local };
            }
            let m = Matrix4::new_scaling(info.meters_per_unit) * m;
            let mut out = [0.0; 16];
            out.copy_from_slice(m.as_slice());
            Ok(out)
        })
        .collect::<Result<_>>()?;
    Ok(Ok(PlacedCamera {
        world_from_camera,
        yfov: 2.0 * (vertical / (2.0 * focal)).atan(),
        aspect: Some(horizontal / vertical),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A camera under a translated Rig, moving from z = 2 to z = 4 (file units) over frames
    /// 1..11 and rolled 90° about its view axis; metersPerUnit 0.01.
    const STAGE: &str = r#"#usda 1.0
(
    metersPerUnit = 0.01
    timeCodesPerSecond = 48
    framesPerSecond = 24
    upAxis = "Y"
)
def Xform "Rig"
{
    double3 xformOp:translate = (0.2, 0, 0)
    uniform token[] xformOpOrder = ["xformOp:translate"]

    def Camera "ShotCam"
    {
        float focalLength = 35
        float horizontalAperture = 36
        float verticalAperture = 24
        double3 xformOp:translate.timeSamples = {
            2: (-0.2, 0.5, 2),
            22: (-0.2, 0.5, 4),
        }
        float xformOp:rotateZ = 90
        uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:rotateZ"]
    }
    def Camera "Flat"
    {
        token projection = "orthographic"
    }
}
"#;

    fn placed(
        name: &str,
        frames: &[i32],
    ) -> Result<std::result::Result<PlacedCamera, Vec<String>>> {
        let layer = super::super::parser::parse(STAGE).unwrap();
        from_layer(Path::new("shot.usda"), &layer, name, frames)
    }

    /// Frame 6 is time code 12, halfway between the samples: z = 3. World matrix by hand:
    /// T(0.2, 0, 0) · T(−0.2, 0.5, 3) · R_z(90°), times 0.01; R_z(90°) takes x to y and y
    /// to −x. yfov = 2 atan(12 / 35), aspect = 36 / 24.
    #[test]
    fn a_usd_camera_is_placed_by_its_xform_ops_in_metres_with_its_lens() {
        let c = placed("ShotCam", &[1, 6, 11]).unwrap().unwrap();
        let at6 = [
            0.0, 0.01, 0.0, 0.0, //
            -0.01, 0.0, 0.0, 0.0, //
            0.0, 0.0, 0.01, 0.0, //
            0.0, 0.005, 0.03, 1.0,
        ];
        for (k, (got, want)) in c.world_from_camera[1].iter().zip(at6).enumerate() {
            assert!((got - want).abs() < 1e-9, "element {k}: {got} vs {want}");
        }
        // held before the first sample (frame 1 = time 2) and after the last
        assert!((c.world_from_camera[0][14] - 0.02).abs() < 1e-9);
        assert!((c.world_from_camera[2][14] - 0.04).abs() < 1e-9);
        assert!((c.yfov - 2.0 * (12.0f64 / 35.0).atan()).abs() < 1e-7);
        assert!((c.aspect.unwrap() - 1.5).abs() < 1e-7);
        // the prim path selects it too; the Xform holding two cameras does not
        assert!(placed("/Rig/ShotCam", &[6]).unwrap().is_ok());
        assert!(placed("Rig", &[6]).unwrap().is_err());
    }

    #[test]
    fn an_unknown_name_lists_the_cameras_and_an_orthographic_one_is_refused() {
        let names = placed("Nope", &[6]).unwrap().unwrap_err();
        assert_eq!(names, ["/Rig/ShotCam", "/Rig/Flat"]);
        let e = placed("Flat", &[6]).unwrap_err().to_string();
        assert!(e.contains("orthographic") && e.contains("/Rig/Flat"), "{e}");
    }
}
