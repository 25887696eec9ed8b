//! Cloth materials: presets and JSON files (docs/reference.md, "Materials").
//!
//! Stiffnesses follow Baraff & Witkin §4: the stretch, shear and bend conditions are
//! `C_stretch = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)`, `C_shear = a w_uᵀ w_v`, `C_bend = θ`, with
//! energy `E = ½ k Cᵀ C`; damping `d = −k_d (∂C/∂x) Ċ` (§4.5). Baraff's `a` (rest area)
//! makes a triangle's energy grow with `a²`; drape divides each triangle's `k` and `k_d` by
//! its rest area `a`, so a triangle stores `½ k a ε²` and the stiffness is a resolution
//! independent membrane modulus in N/m (energy per m² per unit strain²). Bend stiffness is a
//! bending rigidity `B` in N·m; a hinge with edge `e` between triangles of rest areas
//! `A₁`, `A₂` gets `k = (B/3) · 3‖e‖² / (A₁ + A₂)` (the discrete-shells hinge weight, with
//! `B/3` so that `B` is the rigidity of cylindrical bending that a cantilever test
//! measures), which keeps the draped shape the same when the mesh is refined.
//!
//! A material's u and v are the axes of each panel's UV layout. The presets put the weft
//! along u and the warp along v; a JSON file may turn them (`"warp": "u"`).
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A cloth material. Every field has its unit and typical range in its doc.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Areal density, kg/m². Typical 0.05 (silk) … 0.4 (denim, leather).
    pub density: f64,
    /// Stretch stiffness (membrane modulus) of the u (weft) fibres, the u component of
    /// C_stretch (Baraff §4.2), N/m: the slope of force per width against strain of a strip
    /// cut along u. Typical 1e3 … 1e5; higher is less stretchy and costs the implicit
    /// solver little. A JSON file's `stretch` sets both directions.
    pub stretch_u: f64,
    /// Stretch stiffness of the v (warp) fibres, N/m.
    pub stretch_v: f64,
    /// Stretch damping `k_d` (Baraff §4.5), N·s/m. Typical 1e-3 × stretch.
    pub stretch_damping: f64,
    /// Shear stiffness of C_shear (Baraff §4.3), N/m. Typical 10 … 1e3.
    pub shear: f64,
    /// Shear damping `k_d`, N·s/m. Typical 1e-2 × shear.
    pub shear_damping: f64,
    /// Bending rigidity of the u (weft) fibres, i.e. about hinges that run along v, N·m.
    /// Typical 1e-6 (silk) … 6e-4 (leather): `w g c³` for a fabric of weight per area `w g`
    /// and cantilever bending length `c` (docs/materials.md).
    pub bend_u: f64,
    /// Bending rigidity of the v (warp) fibres (about hinges along u), N·m.
    pub bend_v: f64,
    /// Bending rigidity of a strip cut on the bias (45° between u and v), N·m; `None` (the
    /// default) for the mean of `bend_u` and `bend_v`. See [`Material::bend_rigidity`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bend_bias: Option<f64>,
    /// Bend damping `k_d`, N·m·s (weighted per hinge like the stiffness). Typical 0.1 × bend.
    pub bend_damping: f64,
    /// Rest-scale of the u direction (Baraff eq. 10 `b_u`), dimensionless. 1 = as cut;
    /// < 1 gathers (cuffs), > 1 lengthens and wrinkles.
    pub bu: f64,
    /// Rest-scale of the v direction (`b_v`), dimensionless.
    pub bv: f64,
    /// Air drag coefficient, N·s/m³ (force per area per normal velocity). Typical 0 … 2.
    pub drag: f64,
    /// Coulomb friction coefficient against bodies, dimensionless. Typical 0.1 … 0.8.
    pub friction: f64,
    /// Collision thickness, metres. Typical 0.002 … 0.01.
    pub thickness: f64,
}

impl Default for Material {
    fn default() -> Self {
        Material::preset("cotton").expect("cotton preset exists")
    }
}

/// Names of the built-in presets, for help texts and error messages.
pub const PRESETS: [&str; 5] = ["cotton", "silk", "denim", "jersey", "leather"];

impl Material {
    /// A built-in preset by name (`cotton`, `silk`, `denim`, `jersey`, `leather`).
    ///
    /// Weft along u, warp along v. The fabrics calibrated against published textile
    /// measurements are the material files in `materials/` (docs/materials.md).
    pub fn preset(name: &str) -> Option<Material> {
        let base = Material {
            density: 0.15,
            stretch_u: 5000.0,
            stretch_v: 5000.0,
            stretch_damping: 5.0,
            shear: 50.0,
            shear_damping: 0.5,
            bend_u: 1.5e-5,
            bend_v: 1.5e-5,
            bend_bias: None,
            bend_damping: 1.5e-6,
            bu: 1.0,
            bv: 1.0,
            drag: 0.5,
            friction: 0.4,
            thickness: 0.004,
        };
        Some(match name {
            "cotton" => base,
            "silk" => Material {
                density: 0.06,
                stretch_u: 2000.0,
                stretch_v: 2000.0,
                stretch_damping: 2.0,
                shear: 10.0,
                shear_damping: 0.1,
                bend_u: 1.5e-6,
                bend_v: 1.5e-6,
                bend_damping: 1.5e-7,
                friction: 0.2,
                thickness: 0.002,
                ..base
            },
            "denim" => Material {
                density: 0.4,
                stretch_u: 20000.0,
                stretch_v: 20000.0,
                stretch_damping: 20.0,
                shear: 300.0,
                shear_damping: 3.0,
                bend_u: 1.5e-4,
                bend_v: 9e-5,
                bend_damping: 1.5e-5,
                friction: 0.5,
                thickness: 0.005,
                ..base
            },
            "jersey" => Material {
                density: 0.2,
                stretch_u: 800.0,
                stretch_v: 800.0,
                stretch_damping: 0.8,
                shear: 20.0,
                shear_damping: 0.2,
                bend_u: 9e-6,
                bend_v: 1.2e-5,
                bend_damping: 9e-7,
                friction: 0.5,
                ..base
            },
            "leather" => Material {
                density: 0.8,
                stretch_u: 50000.0,
                stretch_v: 50000.0,
                stretch_damping: 50.0,
                shear: 1000.0,
                shear_damping: 10.0,
                bend_u: 6e-4,
                bend_v: 6e-4,
                bend_damping: 6e-5,
                friction: 0.6,
                thickness: 0.006,
                ..base
            },
            _ => return None,
        })
    }

    /// This material with bend rigidity and bend damping multiplied by `factor` (the
    /// stiffness sweeps of Baraff §8).
    pub fn with_bend_scaled(&self, factor: f64) -> Material {
        Material {
            bend_u: self.bend_u * factor,
            bend_v: self.bend_v * factor,
            bend_bias: self.bend_bias.map(|b| b * factor),
            bend_damping: self.bend_damping * factor,
            ..self.clone()
        }
    }

    /// The bending rigidity (N·m) about a hinge whose fibre across it makes `cos² φ =
    /// c2` with the u axis (the hinge's `u_share`, [`crate::model::Hinge`]): with
    /// `s2 = 1 − c2`,
    ///
    /// ```text
    /// B(φ) = B_u c2 + B_v s2                                   (no bend_bias)
    /// B(φ) = B_u c2² + B_v s2² + (4 B_bias − B_u − B_v) c2 s2   (bend_bias given)
    /// ```
    ///
    /// The second is the orthotropic plate's rigidity in direction φ with the twist term
    /// chosen so that `B(45°) = B_bias`; without a bias figure both give `(B_u + B_v)/2` on
    /// the bias.
    pub fn bend_rigidity(&self, c2: f64) -> f64 {
        let s2 = 1.0 - c2;
        match self.bend_bias {
            None => self.bend_u * c2 + self.bend_v * s2,
            Some(bias) => {
                self.bend_u * c2 * c2
                    + self.bend_v * s2 * s2
                    + (4.0 * bias - self.bend_u - self.bend_v) * c2 * s2
            }
        }
    }

    /// This material turned by 90° in the panel: its u properties become v and back (a
    /// fabric whose warp runs along u).
    pub fn swapped_axes(&self) -> Material {
        Material {
            stretch_u: self.stretch_v,
            stretch_v: self.stretch_u,
            bend_u: self.bend_v,
            bend_v: self.bend_u,
            bu: self.bv,
            bv: self.bu,
            ..self.clone()
        }
    }

    /// A preset name or a JSON file: an object of material fields (docs/reference.md,
    /// "Materials"), plus `"base"`, the preset the missing fields come from (default
    /// cotton), `"warp": "u"` to turn the base preset so that its warp runs along u, and
    /// `"stretch"` for `stretch_u` and `stretch_v` at once.
    pub fn from_arg(arg: &str) -> Result<Material> {
        if let Some(m) = Material::preset(arg) {
            return Ok(m);
        }
        let path = Path::new(arg);
        if !path.exists() {
            return Err(Error::usage(format!(
                "--material '{arg}' is neither a preset ({}) nor an existing JSON file",
                PRESETS.join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::input(path, None, format!("cannot read material file: {e}")))?;
        let m = Material::from_json(&text).map_err(|e| Error::input(path, None, e))?;
        m.validate(path)?;
        Ok(m)
    }

    /// A material from the text of a material JSON file (see [`Material::from_arg`]); the
    /// error is a message for the user.
    pub fn from_json(text: &str) -> std::result::Result<Material, String> {
        let bad = |e: &dyn std::fmt::Display| {
            format!(
                "not a valid material JSON ({e}); fields are documented in `drape simulate --help`"
            )
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(&e))?;
        let serde_json::Value::Object(mut fields) = value else {
            return Err(bad(&"expected an object of material fields"));
        };
        let base = match fields.remove("base") {
            None => Material::default(),
            Some(serde_json::Value::String(name)) => Material::preset(&name).ok_or_else(|| {
                format!("'base' is '{name}', not a preset ({})", PRESETS.join(", "))
            })?,
            Some(other) => return Err(format!("'base' must be a preset name, not {other}")),
        };
        let base = match fields.remove("warp").as_ref().map(|w| w.as_str()) {
            None | Some(Some("v")) => base,
            Some(Some("u")) => base.swapped_axes(),
            Some(_) => return Err("'warp' must be \"u\" or \"v\"".into()),
        };
        if let Some(both) = fields.remove("stretch") {
            for key in ["stretch_u", "stretch_v"] {
                if fields.contains_key(key) {
                    return Err(format!("give either 'stretch' or '{key}', not both"));
                }
                fields.insert(key.into(), both.clone());
            }
        }
        let serde_json::Value::Object(mut merged) =
            serde_json::to_value(&base).map_err(|e| bad(&e))?
        else {
            return Err(bad(&"the base material is not an object"));
        };
        merged.extend(fields);
        serde_json::from_value(serde_json::Value::Object(merged)).map_err(|e| bad(&e))
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let fields = [
            ("density", self.density),
            ("stretch_u", self.stretch_u),
            ("stretch_v", self.stretch_v),
            ("stretch_damping", self.stretch_damping),
            ("shear", self.shear),
            ("shear_damping", self.shear_damping),
            ("bend_u", self.bend_u),
            ("bend_v", self.bend_v),
            ("bend_bias", self.bend_bias.unwrap_or(0.0)),
            ("bend_damping", self.bend_damping),
            ("drag", self.drag),
            ("friction", self.friction),
            ("thickness", self.thickness),
        ];
        for (name, value) in fields {
            if !value.is_finite() || value < 0.0 {
                return Err(Error::input(
                    path,
                    None,
                    format!("material field '{name}' is {value}; it must be a finite number ≥ 0"),
                ));
            }
        }
        if self.density <= 0.0 || self.bu <= 0.0 || self.bv <= 0.0 {
            return Err(Error::input(
                path,
                None,
                "material fields 'density', 'bu' and 'bv' must be > 0",
            ));
        }
        // B(φ) ≥ 0 in every direction: 4 B_bias − B_u − B_v ≥ −2 √(B_u B_v).
        if let Some(bias) = self.bend_bias {
            let least = 0.25 * (self.bend_u.sqrt() - self.bend_v.sqrt()).powi(2);
            if bias < least {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "material field 'bend_bias' is {bias:e} N·m; with bend_u {:e} and bend_v {:e} it must be at least {least:e} N·m, or the fabric would bend with negative rigidity in some direction",
                        self.bend_u, self.bend_v
                    ),
                ));
            }
        }
        Ok(())
    }
}
