//! Per-element stiffness constants of a [`System`](super::System), derived once from the
//! material and the rest state.
use crate::forces::spring::SpringParams;
use crate::forces::stretch::StretchParams;
use crate::model::springs::{springs, SpringKind};
use crate::model::ClothModel;
use crate::scene::Material;

/// Per-element stiffness constants derived once from the material and rest state.
#[derive(Debug, Clone)]
pub(super) struct Coefficients {
    /// Per triangle: stretch, shear parameters (k and k_d divided by the rest area).
    pub(super) triangles: Vec<(StretchParams, f64, f64)>,
    /// Per hinge: (k, k_d).
    pub(super) hinges: Vec<(f64, f64)>,
    pub(super) drag: f64,
    /// Lift coefficient (kg/m³), 0 for none.
    pub(super) lift: f64,
    /// The mass-spring model's springs (particles and parameters); empty for the continuum.
    pub(super) springs: Vec<([usize; 2], SpringParams)>,
}

impl Coefficients {
    pub(super) fn new(model: &ClothModel, m: &Material) -> Self {
        let triangles = model
            .rest
            .iter()
            .map(|r| {
                let inv_a = 1.0 / r.area;
                (
                    StretchParams {
                        k: [m.stretch_u * inv_a, m.stretch_v * inv_a],
                        kd: m.stretch_damping * inv_a,
                        bu: m.bu,
                        bv: m.bv,
                    },
                    m.shear * inv_a,
                    m.shear_damping * inv_a,
                )
            })
            .collect();
        let plate = per_hinge(m);
        let hinges = model
            .hinges
            .iter()
            .map(|h| {
                let rigidity = plate.bend_rigidity(h.u_share);
                (h.weight * rigidity, h.weight * plate.bend_damping)
            })
            .collect();
        Coefficients {
            triangles,
            hinges,
            drag: m.drag,
            lift: 0.0,
            springs: Vec::new(),
        }
    }

    /// Springs of the mass-spring model with stiffness from the material (the spring
    /// network of [`crate::model::springs`]), matching the continuum's small-strain energy:
    ///
    /// ```text
    /// stretch spring:  k = k_stretch A / L₀²,   k_d = k_d,stretch A / L₀²   (k_stretch the
    ///                  mean of the u and v moduli: a spring has no fibre direction)
    /// hinge spring:    k = (k_shear A + w (B_u + B_v)/6) / L₀²,
    ///                  k_d = (k_d,shear A + w k_d,bend/3) / L₀²
    /// ```
    /// `A` the spring's area share (m²), `w` its hinge weight, material stiffness in N/m
    /// (stretch, shear) and N·m (bend): ½ k (L − L₀)² = ½ k_stretch A ε² at strain ε.
    pub(super) fn spring_network(
        model: &ClothModel,
        m: &Material,
    ) -> Vec<([usize; 2], SpringParams)> {
        let plate = per_hinge(m);
        springs(model)
            .iter()
            .map(|s| {
                let inv = 1.0 / (s.rest * s.rest);
                let (k, kd) = match s.kind {
                    SpringKind::Stretch => (
                        0.5 * (m.stretch_u + m.stretch_v) * s.area,
                        m.stretch_damping * s.area,
                    ),
                    SpringKind::Hinge => (
                        m.shear * s.area + s.weight * 0.5 * (plate.bend_u + plate.bend_v),
                        m.shear_damping * s.area + s.weight * plate.bend_damping,
                    ),
                };
                let params = SpringParams {
                    rest: s.rest,
                    k: k * inv,
                    kd: kd * inv,
                };
                (s.nodes, params)
            })
            .collect()
    }
}

/// `m` with its bending rigidities and bend damping divided by 3, the factor the hinges'
/// discrete-shells weight `3‖e‖²/(A₁ + A₂)` carries over the plate: on a regular mesh bent
/// into a cylinder of curvature κ, a hinge turns by κ times the distance between its
/// triangles' circumcentres and the discrete-shells sum `Σ ½ B w θ²` comes to `3 · ½ B κ²`
/// per unit area, three times the plate's `½ B κ²` (on the equilateral mesh it is the
/// energy of a plate of Poisson ratio −⅓). With `B/3` per hinge, a material's `B` is the
/// rigidity a cantilever test measures (`B = w g c³`, [`crate::textile`]).
fn per_hinge(m: &Material) -> Material {
    Material {
        bend_u: m.bend_u / 3.0,
        bend_v: m.bend_v / 3.0,
        bend_bias: m.bend_bias.map(|b| b / 3.0),
        bend_damping: m.bend_damping / 3.0,
        ..m.clone()
    }
}
