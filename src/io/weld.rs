//! Welding split vertices back into particles (docs/reference.md, "Inputs").
//!
//! Exporters such as glTF split a mesh vertex wherever it carries several UVs (a seam of the
//! UV layout, Baraff §2.1 footnote 3) or several normals. The cloth needs one particle per
//! *physical* point, so vertices whose positions are bit-identical (and, for animated
//! garments, whose skin weights and morph deltas are identical: pass them in the key of
//! [`weld_by_key`]) become one particle; each triangle corner keeps its own UV.
//!
//! [`SplitMesh`] is the importer-neutral description of such a mesh (one UV per vertex);
//! [`SplitMesh::into_garment`] (or [`SplitMesh::into_garment_keyed`]) welds it and maps the output points, for every reader whose
//! format splits vertices (glTF now, and any other format with per-vertex UVs).
use crate::error::{Error, Result};
use crate::scene::{Garment, OutputFaces};
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

impl Welded {
    /// Number of particles.
    pub fn particles(&self) -> usize {
        self.first_vertex.len()
    }

    /// Per particle the largest of its vertices' `values`, clamped to [0, 1], non-finite
    /// values counting as 0 (pin and keyframe weights); empty `values` give all zeros.
    pub fn max_per_particle(&self, values: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0f64; self.particles()];
        for (&p, &w) in self.particle_of_vertex.iter().zip(values) {
            let w = if w.is_finite() {
                w.clamp(0.0, 1.0)
            } else {
                0.0
            };
            out[p] = out[p].max(w);
        }
        out
    }
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

/// Weld key of a vertex of a skinned or morphing mesh (docs/reference.md, "Inputs"): the position bits,
/// the number of skin influences and each `(joint, weight bits)`, then the bits of every
/// morph delta; `-0.0` is folded onto `+0.0` throughout. Influences must come in a
/// canonical order (sorted by joint) for equal skins to give equal keys.
pub fn animated_key(
    position: &Vec3,
    influences: impl IntoIterator<Item = (usize, f64)>,
    deltas: impl IntoIterator<Item = Vec3>,
) -> Vec<u64> {
    let mut key = position_key(position).to_vec();
    let at = key.len();
    key.push(0);
    for (joint, weight) in influences {
        key.push(joint as u64);
        key.push((weight + 0.0).to_bits());
        key[at] += 1;
    }
    for d in deltas {
        key.extend(position_key(&d));
    }
    key
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

    /// Welds bit-identical positions into particles and builds the [`Garment`]
    /// (static meshes: see [`SplitMesh::into_garment_keyed`]).
    pub fn into_garment(self) -> Result<Garment> {
        let keys: Vec<[u64; 3]> = self.positions.iter().map(position_key).collect();
        self.into_garment_keyed(|v| keys[v]).map(|(g, _)| g)
    }

    /// Welds vertices with equal `key(v)` into particles and builds the [`Garment`],
    /// returning the welding too. The key must include the position bits
    /// ([`position_key`]); animated meshes add their skin weights and morph deltas, so
    /// that vertices which only coincide at rest stay apart (docs/reference.md, "Inputs").
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
    pub fn into_garment_keyed<K: Hash + Eq>(
        self,
        key: impl Fn(usize) -> K,
    ) -> Result<(Garment, Welded)> {
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
        let welded = weld_by_key(n, key);
        let pov = &welded.particle_of_vertex;
        let positions: Vec<Vec3> = welded
            .first_vertex
            .iter()
            .map(|&v| self.positions[v])
            .collect();
        let pin = welded.max_per_particle(&self.pins);
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
        let output_faces = self.output_faces();
        let garment = Garment {
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
            keyframes: Vec::new(),
            key_weight: None,
            output_faces,
        };
        Ok((garment, welded))
    }

    /// The triangles over output points (a vertex's output point is its `_DRAPE_INDEX`, else
    /// the vertex itself) with each corner's UV; call after the indices were validated.
    fn output_faces(&self) -> OutputFaces {
        let point = |v: usize| match &self.source_index {
            Some(index) => index[v] as usize,
            None => v,
        };
        let corners = self.triangles.iter().flatten();
        OutputFaces {
            counts: vec![3; self.triangles.len()],
            points: corners.clone().map(|&v| point(v)).collect(),
            uvs: match self.uvs.is_empty() {
                true => Vec::new(),
                false => corners.map(|&v| self.uvs[v]).collect(),
            },
        }
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
    fn animated_key_separates_equal_positions_with_other_skins_or_deltas() {
        let p = Vec3::new(1.0, 2.0, 3.0);
        let skin = [(0, 0.25), (3, 0.75)];
        let d = [Vec3::new(0.0, 0.5, 0.0)];
        let base = animated_key(&p, skin, d);
        assert_eq!(base, animated_key(&Vec3::new(1.0, 2.0, 3.0), skin, d));
        assert_eq!(base, animated_key(&p, skin, [Vec3::new(-0.0, 0.5, 0.0)]));
        assert_ne!(base, animated_key(&p, [(0, 0.25), (2, 0.75)], d));
        assert_ne!(base, animated_key(&p, [(0, 0.5), (3, 0.5)], d));
        assert_ne!(base, animated_key(&p, skin, [Vec3::new(0.0, 0.25, 0.0)]));
        // The influence count is part of the key: one joint less is another key even
        // when the deltas' bits would line up after it.
        assert_ne!(
            animated_key(&p, [(1, 1.0)], []),
            animated_key(&p, [], [Vec3::new(f64::from_bits(1), 1.0, 0.0)])
        );
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
