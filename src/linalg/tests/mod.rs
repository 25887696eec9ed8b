//! Tests of the linear algebra against dense references (nalgebra `DMatrix`, Cholesky),
//! with shared generators of block-sparse SPD systems.
use super::assembly::ElementSet;
use super::precond::TriangularFactor;
use super::{AssemblyPlan, BlockCsr};
use crate::{Mat3, Vec3};
use nalgebra::{DMatrix, DVector};

mod deflation;
mod determinism;
mod kernels;
mod ordering;
mod perf;
mod precond;
mod solver;

/// Small deterministic generator (xorshift64*), so tests need no extra dependency.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [-1, 1).
    pub(super) fn sym(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub(super) fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.sym(), self.sym(), self.sym())
    }
    pub(super) fn mat3(&mut self) -> Mat3 {
        Mat3::from_fn(|_, _| self.sym())
    }
    pub(super) fn unit(&mut self) -> Vec3 {
        loop {
            let v = self.vec3();
            if v.norm() > 0.2 {
                return v.normalize();
            }
        }
    }
}

/// Dense `3n × 3n` copy of a block matrix.
pub(super) fn dense(a: &BlockCsr) -> DMatrix<f64> {
    let n = a.n();
    let mut d = DMatrix::zeros(3 * n, 3 * n);
    for i in 0..n {
        for (k, &j) in a.pattern.row(i).iter().enumerate() {
            let m = a.values[a.pattern.row_ptr[i] + k];
            d.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&m);
        }
    }
    d
}

/// Flattens `[Vec3]` into a dense vector.
pub(super) fn flat(v: &[Vec3]) -> DVector<f64> {
    DVector::from_iterator(3 * v.len(), v.iter().flat_map(|x| x.iter().copied()))
}

/// Splits a dense vector back into `Vec3`s.
pub(super) fn unflat(v: &DVector<f64>) -> Vec<Vec3> {
    (0..v.len() / 3)
        .map(|i| Vec3::new(v[3 * i], v[3 * i + 1], v[3 * i + 2]))
        .collect()
}

/// Triangles of a regular `nx × ny` grid of particles (two per quad).
pub(super) fn grid_triangles(nx: usize, ny: usize) -> ElementSet {
    let mut nodes = Vec::new();
    for y in 0..ny - 1 {
        for x in 0..nx - 1 {
            let p = y * nx + x;
            nodes.extend_from_slice(&[p, p + 1, p + nx + 1, p, p + nx + 1, p + nx]);
        }
    }
    ElementSet { arity: 3, nodes }
}

/// Hinge-like 4-particle elements across the quads of the grid.
pub(super) fn grid_hinges(nx: usize, ny: usize) -> ElementSet {
    let mut nodes = Vec::new();
    for y in 0..ny - 1 {
        for x in 0..nx - 1 {
            let p = y * nx + x;
            nodes.extend_from_slice(&[p + 1, p, p + nx + 1, p + nx]);
        }
    }
    ElementSet { arity: 4, nodes }
}

/// A block-sparse SPD system over the elements of a grid, assembled through
/// [`AssemblyPlan`] like the simulator does:
///
/// ```text
/// A = diag(m_i I) + Σ_e k · G_e G_eᵀ     (G_e random 3N × 3N, m_i ∈ [0.5, 1.5])
/// ```
/// `k` sets the stiffness (and so the condition number).
pub(super) fn spd_system(nx: usize, ny: usize, k: f64, seed: u64) -> (BlockCsr, Vec<Vec3>) {
    let mut rng = Rng::new(seed);
    let sets = [grid_triangles(nx, ny), grid_hinges(nx, ny)];
    let n = nx * ny;
    let plan = AssemblyPlan::new(n, &sets);
    let buffers: Vec<Vec<Mat3>> = sets
        .iter()
        .map(|set| {
            let nn = set.arity;
            let mut out = vec![Mat3::zeros(); set.count() * nn * nn];
            for e in 0..set.count() {
                let g = DMatrix::from_fn(3 * nn, 3 * nn, |_, _| rng.sym());
                let ke = &g * g.transpose() * k;
                for a in 0..nn {
                    for b in 0..nn {
                        out[e * nn * nn + a * nn + b] =
                            ke.fixed_view::<3, 3>(3 * a, 3 * b).into_owned();
                    }
                }
            }
            out
        })
        .collect();
    let mass: Vec<Mat3> = (0..n)
        .map(|_| Mat3::identity() * (1.0 + 0.5 * rng.sym()))
        .collect();
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    let refs: Vec<&[Mat3]> = buffers.iter().map(|b| b.as_slice()).collect();
    plan.gather_matrix(&refs, Some(&mass), &mut a);
    let b = (0..n).map(|_| rng.vec3()).collect();
    (a, b)
}

/// A cloth-like mass–spring system over the edges of an `nx × ny` grid (a vector
/// Laplacian plus mass, condition number growing like `k/m · n`):
///
/// ```text
/// K_e = k (d dᵀ + 0.1 I),  A_ii += K_e, A_jj += K_e, A_ij = A_ji −= K_e,  A_ii += m_i I
/// ```
/// with `d` a random unit direction per edge and `m_i ∈ [0.5, 1.5]`.
pub(super) fn spring_system(nx: usize, ny: usize, k: f64, seed: u64) -> (BlockCsr, Vec<Vec3>) {
    let mut rng = Rng::new(seed);
    let nodes = grid_edge_nodes(nx, ny, true);
    let edges = ElementSet { arity: 2, nodes };
    let n = nx * ny;
    let plan = AssemblyPlan::new(n, std::slice::from_ref(&edges));
    let mut blocks = Vec::with_capacity(edges.count() * 4);
    for _ in 0..edges.count() {
        let d = rng.unit();
        let ke = (d * d.transpose() + Mat3::identity() * 0.1) * k;
        blocks.extend_from_slice(&[ke, -ke, -ke, ke]);
    }
    let mass: Vec<Mat3> = (0..n)
        .map(|_| Mat3::identity() * (1.0 + 0.5 * rng.sym()))
        .collect();
    let mut a = BlockCsr::zeros(plan.pattern.clone());
    plan.gather_matrix(&[&blocks], Some(&mass), &mut a);
    let b = (0..n).map(|_| rng.vec3()).collect();
    (a, b)
}

/// Particle pairs of the edges of an `nx × ny` grid (row-major particles): the horizontal
/// and vertical edges, and with `diagonals` one diagonal per cell.
pub(super) fn grid_edge_nodes(nx: usize, ny: usize, diagonals: bool) -> Vec<usize> {
    let mut nodes = Vec::new();
    for y in 0..ny {
        for x in 0..nx {
            let p = y * nx + x;
            if x + 1 < nx {
                nodes.extend_from_slice(&[p, p + 1]);
            }
            if y + 1 < ny {
                nodes.extend_from_slice(&[p, p + nx]);
            }
            if diagonals && x + 1 < nx && y + 1 < ny {
                nodes.extend_from_slice(&[p, p + nx + 1]);
            }
        }
    }
    nodes
}

/// `P⁻¹` as a dense matrix, by applying the factor to the unit vectors.
pub(super) fn dense_inverse(f: &TriangularFactor, n: usize) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(3 * n, 3 * n);
    let mut s = vec![Vec3::zeros(); n];
    for col in 0..3 * n {
        let mut e = vec![Vec3::zeros(); n];
        e[col / 3][col % 3] = 1.0;
        f.apply(&e, &mut s, |_, x| x);
        for i in 0..n {
            for d in 0..3 {
                out[(3 * i + d, col)] = s[i][d];
            }
        }
    }
    out
}
