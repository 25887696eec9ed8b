//! Cloth materials: presets and JSON files (docs/reference.md, "Materials").
//!
//! Stiffnesses follow Baraff & Witkin §4: the stretch, shear and bend conditions are
//! `C_stretch = a (‖w_u‖ − b_u, ‖w_v‖ − b_v)`, `C_shear = a w_uᵀ w_v`, `C_bend = θ`, with
//! energy `E = ½ k Cᵀ C`; damping `d = −k_d (∂C/∂x) Ċ` (§4.5). Baraff's `a` (rest area)
//! makes a triangle's energy grow with `a²`; drape divides each triangle's `k` and `k_d` by
//! its rest area `a`, so a triangle stores `½ k a ε²` and the stiffness is a resolution
//! independent membrane modulus in N/m (energy per m² per unit strain²). Bend stiffness is a
//! bending rigidity `B` in N·m; a hinge with edge `e` between triangles of rest areas
//! `A₁`, `A₂` gets `k = B · 3‖e‖² / (A₁ + A₂)` (the discrete-shells hinge weight), which
//! keeps the draped shape the same when the mesh is refined.
use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// A cloth material. Every field has its unit and typical range in its doc.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Material {
    /// Areal density, kg/m². Typical 0.05 (silk) … 0.4 (denim, leather).
    pub density: f64,
    /// Stretch stiffness (membrane modulus) of C_stretch (Baraff §4.2), N/m. Typical 1e3 … 1e5;
    /// higher is less stretchy and costs the implicit solver little.
    pub stretch: f64,
    /// Stretch damping `k_d` (Baraff §4.5), N·s/m. Typical 1e-3 × stretch.
    pub stretch_damping: f64,
    /// Shear stiffness of C_shear (Baraff §4.3), N/m. Typical 10 … 1e3.
    pub shear: f64,
    /// Shear damping `k_d`, N·s/m. Typical 1e-2 × shear.
    pub shear_damping: f64,
    /// Bending rigidity of the u (weft) fibres, i.e. about hinges that run along v, N·m.
    /// Typical 5e-7 (silk) … 2e-4 (leather).
    pub bend_u: f64,
    /// Bending rigidity of the v (warp) fibres (about hinges along u), N·m.
    pub bend_v: f64,
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
    pub fn preset(name: &str) -> Option<Material> {
        let base = Material {
            density: 0.15,
            stretch: 5000.0,
            stretch_damping: 5.0,
            shear: 50.0,
            shear_damping: 0.5,
            bend_u: 5e-06,
            bend_v: 5e-06,
            bend_damping: 5e-07,
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
                stretch: 2000.0,
                stretch_damping: 2.0,
                shear: 10.0,
                shear_damping: 0.1,
                bend_u: 5e-07,
                bend_v: 5e-07,
                bend_damping: 5e-08,
                friction: 0.2,
                thickness: 0.002,
                ..base
            },
            "denim" => Material {
                density: 0.4,
                stretch: 20000.0,
                stretch_damping: 20.0,
                shear: 300.0,
                shear_damping: 3.0,
                bend_u: 5e-05,
                bend_v: 3e-05,
                bend_damping: 5e-06,
                friction: 0.5,
                thickness: 0.005,
                ..base
            },
            "jersey" => Material {
                density: 0.2,
                stretch: 800.0,
                stretch_damping: 0.8,
                shear: 20.0,
                shear_damping: 0.2,
                bend_u: 3e-06,
                bend_v: 4e-06,
                bend_damping: 3e-07,
                friction: 0.5,
                ..base
            },
            "leather" => Material {
                density: 0.8,
                stretch: 50000.0,
                stretch_damping: 50.0,
                shear: 1000.0,
                shear_damping: 10.0,
                bend_u: 0.0002,
                bend_v: 0.0002,
                bend_damping: 2e-05,
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
            bend_damping: self.bend_damping * factor,
            ..self.clone()
        }
    }

    /// A preset name or a JSON file (`{"density": 0.2, ...}`, missing fields from cotton).
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
        let m: Material = serde_json::from_str(&text).map_err(|e| {
            Error::input(
                path,
                None,
                format!("not a valid material JSON ({e}); fields are documented in `drape simulate --help`"),
            )
        })?;
        m.validate(path)?;
        Ok(m)
    }

    fn validate(&self, path: &Path) -> Result<()> {
        let fields = [
            ("density", self.density),
            ("stretch", self.stretch),
            ("stretch_damping", self.stretch_damping),
            ("shear", self.shear),
            ("shear_damping", self.shear_damping),
            ("bend_u", self.bend_u),
            ("bend_v", self.bend_v),
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
        Ok(())
    }
}
