//! Welding split vertices back into particles (SPEC "Inputs").
//!
//! Exporters such as glTF split a mesh vertex wherever it carries several UVs (a seam of the
//! UV layout, Baraff §2.1 footnote 3) or several normals. The cloth needs one particle per
//! *physical* point, so vertices whose positions are bit-identical (and, for animated
//! garments, whose skin weights and morph deltas are identical: pass them in the key of
//! [`weld_by_key`]) become one particle; each triangle corner keeps its own UV.
//!
//! [`SplitMesh`] is the importer-neutral description of such a mesh (one UV per vertex);
//! [`SplitMesh::into_garment`] welds it and maps the output points, for every reader whose
//! format splits vertices (glTF now, and any other format with per-vertex UVs).
use crate::error::{Error, Result};
use crate::scene::Garment;
use crate::{Mat3, Vec2, Vec3};
use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;

/// Largest `_DRAPE_INDEX` accepted (16 Mi points); larger values are surely corrupt.
const MAX_SOURCE_INDEX: f64 = (1u32 << 24) as f64;

/// Vertices merged into particles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welded {
    /// Particle of each input vertex.
    pub particle_of_vertex: Vec<usize>,
    /// For each particle, the first vertex (in input order) welded into it. Particles are
    /// numbered in the order of their first vertex, so this list is increasing.
    pub first_vertex: Vec<usize>,
}

/// Welds `n` vertices: vertices `i`, `j` become one particle iff `key(i) == key(j)`.
/// Particles are numbered in order of first appearance, which makes the result
/// deterministic and keeps an unsplit mesh's vertex order.
pub fn weld_by_key<K: Hash + Eq>(n: usize, key: impl Fn(usize) -> K) -> Welded {
    let mut map: HashMap<K, usize> = HashMap::with_capacity(n);
    let mut particle_of_vertex = Vec::with_capacity(n);
    let mut first_vertex = Vec::new();
    for i in 0..n {
        let next = first_vertex.len();
        let p = *map.entry(key(i)).or_insert(next);
        if p == next {
            first_vertex.push(i);
        }
        particle_of_vertex.push(p);
    }
    Welded {
        particle_of_vertex,
        first_vertex,
    }
}

/// Bit pattern of a position used as weld key; `-0.0` is folded onto `+0.0`.
pub fn position_key(p: &Vec3) -> [u64; 3] {
    [p.x, p.y, p.z].map(|c| (c + 0.0).to_bits())
}

/// Welds vertices with bit-identical positions (static garments: no skin, no morphs).
pub fn weld_positions(positions: &[Vec3]) -> Welded {
    weld_by_key(positions.len(), |i| position_key(&positions[i]))
}

/// A triangle mesh as formats with split vertices store it: one position, UV and pin
/// weight per vertex, triangles over vertices.
#[derive(Debug, Clone)]
pub struct SplitMesh {
    /// Garment name (node / prim / file stem).
    pub name: String,
    /// File it came from.
    pub source: PathBuf,
    /// Vertex positions, object-local (metres).
    pub positions: Vec<Vec3>,
    /// Vertex UVs (file units); empty if the mesh has none (the garment then has empty
    /// `corner_uvs`, which the cloth model reports as an input error).
    pub uvs: Vec<Vec2>,
    /// Vertex pin weights in [0, 1] (empty: all 0).
    pub pins: Vec<f64>,
    /// Triangles over vertex indices.
    pub triangles: Vec<[usize; 3]>,
    /// Optional source index per vertex (glTF `_DRAPE_INDEX`): the output cache then has
    /// `max + 1` points, point `k` showing the particle of a vertex with index `k`.
    pub source_index: Option<Vec<f64>>,
    /// Object-to-world rotation/scale at the first frame.
    pub world_linear: Mat3,
    /// Object-to-world translation at the first frame.
    pub world_translation: Vec3,
}

impl SplitMesh {
    fn error(&self, message: impl Into<String>) -> Error {
        Error::input(&self.source, Some(&self.name), message)
    }

    /// Welds bit-identical positions into particles and builds the [`Garment`].
    ///
    /// * Particle positions: those of their first vertex. Pin weight: the largest of the
    ///   welded vertices' weights, clamped to [0, 1] (non-finite weights count as 0).
    /// * Triangle corners keep their vertex's UV.
    /// * Output points: without a source index, one per vertex in order; with one,
    ///   `max + 1` points, point `k` showing the particle of the first vertex with index
    ///   `k`. An index used by no vertex (a loose vertex the exporter dropped) shows the
    ///   particle of the nearest used index below it (above it if there is none).
    ///
    /// Errors (input errors naming the mesh): attribute lengths that disagree with the
    /// vertex count, triangles referencing missing vertices, source indices that are not
    /// non-negative integers below 2²⁴.
    pub fn into_garment(self) -> Result<Garment> {
        let n = self.positions.len();
        if !self.uvs.is_empty() && self.uvs.len() != n {
            return Err(self.error(format!(
                "has {} UVs for {n} vertices; export the mesh again with one UV map",
                self.uvs.len()
            )));
        }
        if !self.pins.is_empty() && self.pins.len() != n {
            return Err(self.error(format!(
                "has {} pin weights for {n} vertices; export the pin attribute on every vertex",
                self.pins.len()
            )));
        }
        if let Some(t) = self
            .triangles
            .iter()
            .position(|t| t.iter().any(|&i| i >= n))
        {
            return Err(self.error(format!(
                "triangle {t} references a vertex beyond the {n} vertices; export the mesh again"
            )));
        }
        let welded = weld_positions(&self.positions);
        let pov = &welded.particle_of_vertex;
        let positions: Vec<Vec3> = welded
            .first_vertex
            .iter()
            .map(|&v| self.positions[v])
            .collect();
        let mut pin = vec![0.0f64; positions.len()];
        for (v, &w) in self.pins.iter().enumerate() {
            let w = if w.is_finite() {
                w.clamp(0.0, 1.0)
            } else {
                0.0
            };
            pin[pov[v]] = pin[pov[v]].max(w);
        }
        let triangles = self.triangles.iter().map(|t| t.map(|v| pov[v])).collect();
        let corner_uvs = match self.uvs.is_empty() {
            true => Vec::new(),
            false => self
                .triangles
                .iter()
                .map(|t| t.map(|v| self.uvs[v]))
                .collect(),
        };
        let output_points = match &self.source_index {
            None => pov.clone(),
            Some(index) => self.map_source_index(index, pov)?,
        };
        Ok(Garment {
            name: self.name,
            source: self.source,
            positions,
            triangles,
            corner_uvs,
            pin,
            output_points,
            world_linear: self.world_linear,
            world_translation: self.world_translation,
            animation: None,
        })
    }

    fn map_source_index(&self, index: &[f64], pov: &[usize]) -> Result<Vec<usize>> {
        if index.len() != pov.len() {
            return Err(self.error(format!(
                "has {} _DRAPE_INDEX values for {} vertices; export the attribute on every vertex",
                index.len(),
                pov.len()
            )));
        }
        let mut slots: Vec<Option<usize>> = Vec::new();
        for (v, &k) in index.iter().enumerate() {
            if !(k.is_finite() && k >= 0.0 && k.fract() == 0.0 && k < MAX_SOURCE_INDEX) {
                return Err(self.error(format!(
                    "vertex {v} has _DRAPE_INDEX {k}, not a vertex index; the attribute must \
                     hold the source mesh's vertex numbers (0, 1, 2, ...)"
                )));
            }
            let k = k as usize;
            if slots.len() <= k {
                slots.resize(k + 1, None);
            }
            slots[k].get_or_insert(pov[v]);
        }
        // Fill unused indices from the nearest used one below, else above.
        let mut last = None;
        let mut out: Vec<Option<usize>> = slots
            .iter()
            .map(|s| {
                if s.is_some() {
                    last = *s;
                }
                last
            })
            .collect();
        let first_used = slots.iter().flatten().next().copied();
        for o in out.iter_mut() {
            if o.is_none() {
                *o = first_used;
            }
        }
        Ok(out.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh(positions: Vec<Vec3>, source_index: Option<Vec<f64>>) -> SplitMesh {
        let n = positions.len();
        SplitMesh {
            name: "M".into(),
            source: "m.gltf".into(),
            uvs: (0..n).map(|i| Vec2::new(i as f64, 0.0)).collect(),
            pins: vec![],
            triangles: vec![],
            positions,
            source_index,
            world_linear: Mat3::identity(),
            world_translation: Vec3::zeros(),
        }
    }

    #[test]
    fn welding_merges_only_bit_identical_positions_and_signed_zeros() {
        let p = [
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(-0.0, 0.0, 0.0),
            Vec3::new(1.0 + f64::EPSILON, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
        ];
        let w = weld_positions(&p);
        assert_eq!(w.particle_of_vertex, vec![0, 1, 0, 2, 1]);
        assert_eq!(w.first_vertex, vec![0, 1, 3]);
    }

    #[test]
    fn drape_index_maps_points_to_particles_and_fills_gaps() {
        let p = vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(2.0, 0.0, 0.0),
        ];
        // Source indices 1, 3 (twice: a split vertex), 4; 0 and 2 unused.
        let g = mesh(p, Some(vec![1.0, 3.0, 3.0, 4.0]))
            .into_garment()
            .unwrap();
        assert_eq!(g.positions.len(), 3);
        // 0 → nearest used above (1 → particle 0); 2 → nearest used below (1 → particle 0).
        assert_eq!(g.output_points, vec![0, 0, 0, 1, 2]);
    }

    #[test]
    fn bad_drape_index_is_an_input_error() {
        for bad in [-1.0, 0.5, f64::NAN, 1e12] {
            let r = mesh(vec![Vec3::zeros()], Some(vec![bad])).into_garment();
            assert!(matches!(r, Err(Error::Input { .. })), "{bad}: {r:?}");
        }
    }

    #[test]
    fn triangle_beyond_vertices_is_an_input_error() {
        let mut m = mesh(vec![Vec3::zeros(); 3], None);
        m.triangles = vec![[0, 1, 3]];
        assert!(matches!(m.into_garment(), Err(Error::Input { .. })));
    }
}
