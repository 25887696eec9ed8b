//! A glTF file decoded for evaluation at any time: node hierarchy, meshes, skins and
//! animations (glTF 2.0 §3.5 scenes and nodes, §3.7.3 skins, §3.7.2.2 morph targets).
//!
//! Evaluating a mesh node at time `t` ([`GltfFile::pose`], [`GltfFile::world_positions`]):
//!
//! ```text
//! local(n)   = T · R · S of node n (animated channels override the file's values),
//!              or its matrix (matrix nodes cannot be animated, §3.5.3)
//! world(n)   = world(parent(n)) · local(n)
//! morphed p  = p + Σ_k w_k δ_k          (w: animated node weights, else node weights,
//!                                        else mesh weights; key_<frame> targets excluded)
//! skinned    = Σ_i w_i J_i · morphed p,  J_i = world(joint_i) · IBM_i
//!              (the skinned node's own transform is ignored, §3.7.3.3; a vertex with no
//!              positive weight follows the node's world transform instead)
//! unskinned  = world(node) · morphed p
//! ```
//!
//! Cost per evaluation: one pass over the nodes for their world matrices, then
//! O(vertices × (influences + animated targets)) for a mesh.
use super::animation::{Animations, Property};
use super::mesh::{read_mesh, MeshData};
use super::source::Source;
use crate::error::Result;
use crate::Vec3;
use nalgebra::{Matrix4, Quaternion, UnitQuaternion};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Local transform of a node.
#[derive(Debug, Clone, Copy)]
enum Local {
    /// A fixed matrix.
    Matrix(Matrix4<f64>),
    /// Translation, rotation `(x, y, z, w)` and scale.
    Trs {
        t: [f64; 3],
        r: [f64; 4],
        s: [f64; 3],
    },
}

impl Local {
    fn matrix(&self) -> Matrix4<f64> {
        match *self {
            Local::Matrix(m) => m,
            Local::Trs { t, r, s } => trs_matrix(t, r, s),
        }
    }
}

/// `T · R · S` (glTF 2.0 §3.5.2); the rotation is normalised (a zero quaternion is the
/// identity).
pub(crate) fn trs_matrix(t: [f64; 3], r: [f64; 4], s: [f64; 3]) -> Matrix4<f64> {
    let mut q = r;
    super::animation::normalize4(&mut q);
    let rot = UnitQuaternion::from_quaternion(Quaternion::new(q[3], q[0], q[1], q[2]));
    let mut m = rot.to_homogeneous() * Matrix4::new_nonuniform_scaling(&Vec3::from(s));
    m.fixed_view_mut::<3, 1>(0, 3).copy_from(&Vec3::from(t));
    m
}

#[derive(Debug, Clone)]
struct NodeData {
    parent: Option<usize>,
    local: Local,
    weights: Option<Vec<f64>>,
}

#[derive(Debug, Clone)]
struct SkinData {
    joints: Vec<usize>,
    inverse_bind: Vec<Matrix4<f64>>,
}

/// One node of the scene carrying a mesh: what drape calls a garment or a body.
#[derive(Debug, Clone)]
pub struct MeshInstance {
    /// Node name, else mesh name, else the file stem; made unique with `.1`, `.2`, ...
    pub name: String,
    /// `extras.drape.role` or `extras.drape_role` of the node, else of the mesh.
    pub role: Option<String>,
    /// Node index in the file.
    pub node: usize,
    mesh: usize,
    skin: Option<usize>,
}

/// Node world matrices and morph weights at one time (see [`GltfFile::pose`]).
#[derive(Debug, Clone)]
pub struct Pose {
    world: Vec<Matrix4<f64>>,
    weights: Vec<Option<Vec<f64>>>,
}

impl Pose {
    /// World matrix of node `node` (an index of the file's nodes).
    pub fn node(&self, node: usize) -> Option<&Matrix4<f64>> {
        self.world.get(node)
    }
}

/// A decoded glTF file: evaluate any of its meshes at any time.
#[derive(Debug, Clone)]
pub struct GltfFile {
    path: PathBuf,
    nodes: Vec<NodeData>,
    /// Node indices with every parent before its children.
    order: Vec<usize>,
    meshes: Vec<Option<MeshData>>,
    skins: Vec<SkinData>,
    animations: Animations,
    instances: Vec<MeshInstance>,
    ignored_extensions: Vec<String>,
    /// Every clip of the file, whichever plays.
    clips: Vec<Clip>,
    /// The clip chosen with [`GltfFile::play_clip`], if any.
    playing: Option<usize>,
}

/// One animation clip of a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Clip {
    /// The animation's name (`animation_<index>` if it has none).
    pub name: String,
    /// First and last keyframe time (s), `None` if it animates nothing drape reads.
    pub seconds: Option<(f64, f64)>,
}

impl GltfFile {
    /// Reads `path` (`.gltf` with embedded or external buffers, or `.glb`), every clip
    /// playing at once (see [`GltfFile::play_clip`]).
    pub fn open(path: &Path) -> Result<GltfFile> {
        GltfFile::open_with(path, &[])
    }

    /// [`GltfFile::open`] with external files also allowed from the `allowed` folders
    /// (`--allow-paths`) besides the file's own folder.
    pub fn open_with(path: &Path, allowed: &[PathBuf]) -> Result<GltfFile> {
        GltfFile::decode(Source::open(path, allowed)?)
    }

    /// Reads glTF or GLB bytes whose buffers are embedded; `name` labels messages.
    pub fn from_slice(bytes: &[u8], name: &Path) -> Result<GltfFile> {
        GltfFile::decode(Source::from_bytes(bytes, name, None)?)
    }

    fn decode(src: Source) -> Result<GltfFile> {
        let doc = &src.doc;
        let nodes: Vec<NodeData> = doc
            .nodes()
            .map(|n| NodeData {
                parent: None,
                local: match n.transform() {
                    gltf::scene::Transform::Matrix { matrix } => {
                        Local::Matrix(Matrix4::from_fn(|r, c| f64::from(matrix[c][r])))
                    }
                    gltf::scene::Transform::Decomposed {
                        translation,
                        rotation,
                        scale,
                    } => Local::Trs {
                        t: translation.map(f64::from),
                        r: rotation.map(f64::from),
                        s: scale.map(f64::from),
                    },
                },
                weights: n
                    .weights()
                    .map(|w| w.iter().map(|&x| f64::from(x)).collect()),
            })
            .collect();
        let mut file = GltfFile {
            path: src.path.clone(),
            nodes,
            order: Vec::new(),
            meshes: vec![None; doc.meshes().count()],
            skins: Vec::new(),
            animations: Animations::default(),
            instances: Vec::new(),
            ignored_extensions: src.ignored_extensions.clone(),
            clips: Vec::new(),
            playing: None,
        };
        file.link_hierarchy(&src)?;
        for skin in doc.skins() {
            file.skins.push(read_skin(&src, &skin)?);
        }
        file.read_instances(&src)?;
        let targets = |node: usize| {
            let mesh = doc.nodes().nth(node).and_then(|n| n.mesh());
            mesh.map_or(0, |m| {
                m.primitives()
                    .map(|p| p.morph_targets().count())
                    .max()
                    .unwrap_or(0)
            })
        };
        file.animations = Animations::read(&src, targets)?;
        let anims = &file.animations;
        file.clips = (0..anims.clips.len())
            .map(|k| Clip {
                name: anims.clips[k].clone(),
                seconds: anims.time_range(Some(k)),
            })
            .collect();
        for c in &file.animations.channels {
            if c.property != Property::Weights
                && matches!(file.nodes[c.node].local, Local::Matrix(_))
            {
                let name = doc
                    .nodes()
                    .nth(c.node)
                    .and_then(|n| n.name().map(str::to_string));
                return Err(src.error(
                    &name.unwrap_or_else(|| format!("node {}", c.node)),
                    "is animated but has a matrix; glTF requires translation/rotation/scale \
                     on animated nodes, export the file again",
                ));
            }
        }
        Ok(file)
    }

    /// Parents from the children lists; the evaluation order; checks for cycles.
    fn link_hierarchy(&mut self, src: &Source) -> Result<()> {
        for node in src.doc.nodes() {
            for child in node.children() {
                let c = child.index();
                if self.nodes[c].parent.is_some() || c == node.index() {
                    return Err(src.error(
                        &format!("node {c}"),
                        "has more than one parent; the node hierarchy must be a tree, export \
                         the file again",
                    ));
                }
                self.nodes[c].parent = Some(node.index());
            }
        }
        let children: Vec<Vec<usize>> = src
            .doc
            .nodes()
            .map(|n| n.children().map(|c| c.index()).collect())
            .collect();
        let mut stack: Vec<usize> = (0..self.nodes.len())
            .rev()
            .filter(|&n| self.nodes[n].parent.is_none())
            .collect();
        while let Some(n) = stack.pop() {
            self.order.push(n);
            stack.extend(children[n].iter().rev());
        }
        if self.order.len() != self.nodes.len() {
            return Err(src.error(
                "nodes",
                "the node hierarchy has a cycle; export the file again",
            ));
        }
        Ok(())
    }

    /// Mesh nodes of the default scene (else the first scene, else every root) in
    /// depth-first order, with names, roles and their meshes decoded.
    fn read_instances(&mut self, src: &Source) -> Result<()> {
        let doc = &src.doc;
        let roots: Vec<usize> = match doc.default_scene().or_else(|| doc.scenes().next()) {
            Some(s) => s.nodes().map(|n| n.index()).collect(),
            None => (0..self.nodes.len())
                .filter(|&n| self.nodes[n].parent.is_none())
                .collect(),
        };
        let all: Vec<gltf::Node> = doc.nodes().collect();
        let stem = src
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("mesh")
            .to_string();
        let mut used = HashSet::new();
        let mut visited = HashSet::new();
        let mut stack: Vec<usize> = roots.into_iter().rev().collect();
        while let Some(n) = stack.pop() {
            if !visited.insert(n) {
                continue;
            }
            let node = &all[n];
            stack.extend(
                node.children()
                    .map(|c| c.index())
                    .collect::<Vec<_>>()
                    .iter()
                    .rev(),
            );
            let Some(mesh) = node.mesh() else { continue };
            let base = node
                .name()
                .or(mesh.name())
                .filter(|s| !s.is_empty())
                .unwrap_or(&stem);
            let name = unique_name(base, &mut used);
            if self.meshes[mesh.index()].is_none() {
                self.meshes[mesh.index()] = Some(read_mesh(src, &mesh, &name)?);
            }
            let skin = node.skin().map(|s| s.index());
            if let (Some(s), Some(inf)) = (skin, self.mesh_data(mesh.index()).influences.as_ref()) {
                let joints = self.skins[s].joints.len();
                if let Some(j) = inf.max_joint().filter(|&j| j >= joints) {
                    return Err(src.error(
                        &name,
                        format!(
                            "uses joint {j} but its skin {s} has {joints} joints; export the \
                             file again"
                        ),
                    ));
                }
            }
            let targets = self.mesh_data(mesh.index()).targets.len();
            if let Some(w) = &self.nodes[n].weights {
                if w.len() != targets {
                    return Err(src.error(
                        &name,
                        format!(
                            "has {} morph weights for {targets} morph targets; export the \
                             file again",
                            w.len()
                        ),
                    ));
                }
            }
            self.instances.push(MeshInstance {
                name,
                role: role_of(node.extras()).or_else(|| role_of(mesh.extras())),
                node: n,
                mesh: mesh.index(),
                skin,
            });
        }
        Ok(())
    }

    fn mesh_data(&self, mesh: usize) -> &MeshData {
        self.meshes[mesh]
            .as_ref()
            .expect("meshes of instances are decoded in read_instances")
    }

    /// The file this was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mesh nodes of the scene in depth-first order.
    pub fn instances(&self) -> &[MeshInstance] {
        &self.instances
    }

    /// First and last keyframe time over the clips playing (s), `None` without animations.
    pub fn time_range(&self) -> Option<(f64, f64)> {
        self.animations.time_range(None)
    }

    /// The file's animation clips, in file order.
    pub fn clips(&self) -> &[Clip] {
        &self.clips
    }

    /// Plays clip `k` (an index into [`GltfFile::clips`]) alone.
    pub fn play_clip(&mut self, k: usize) {
        self.animations.keep_clip(k);
        self.playing = Some(k);
    }

    /// The name of the clip chosen with [`GltfFile::play_clip`], if any.
    pub fn playing_clip(&self) -> Option<&str> {
        self.playing
            .and_then(|k| self.clips.get(k))
            .map(|c| c.name.as_str())
    }

    /// Extensions the file uses that drape does not apply (appearance-only ones), in the
    /// order the file lists them.
    pub fn ignored_extensions(&self) -> &[String] {
        &self.ignored_extensions
    }

    /// The decoded mesh data of instance `i`.
    pub(crate) fn mesh(&self, i: usize) -> &MeshData {
        self.mesh_data(self.instances[i].mesh)
    }

    /// Whether instance `i` uses its skin (a skin on the node and joints in the mesh).
    pub fn is_skinned(&self, i: usize) -> bool {
        let inst = &self.instances[i];
        inst.skin.is_some() && self.mesh(i).influences.is_some()
    }

    /// Whether instance `i` moves or deforms over time: its node (or an ancestor) is
    /// animated, a joint of its skin is, or its morph weights are (with a target that is
    /// not a `key_<frame>` keyframe).
    pub fn is_animated(&self, i: usize) -> bool {
        let inst = &self.instances[i];
        let moved = |mut n: usize| loop {
            let hit = self
                .animations
                .channels
                .iter()
                .any(|c| c.node == n && c.property != Property::Weights);
            if hit {
                return true;
            }
            match self.nodes[n].parent {
                Some(p) => n = p,
                None => return false,
            }
        };
        let morphs = self.mesh(i).targets.iter().any(|t| t.key_frame.is_none())
            && self
                .animations
                .channels
                .iter()
                .any(|c| c.node == inst.node && c.property == Property::Weights);
        let joints = match (self.is_skinned(i), inst.skin) {
            (true, Some(s)) => self.skins[s].joints.iter().any(|&j| moved(j)),
            _ => false,
        };
        moved(inst.node) || morphs || joints
    }

    /// World matrices of every node and the animated morph weights at time `t` (s).
    pub fn pose(&self, t: f64) -> Pose {
        let mut local: Vec<Local> = self.nodes.iter().map(|n| n.local).collect();
        let mut weights: Vec<Option<Vec<f64>>> = vec![None; self.nodes.len()];
        let mut value = [0.0; 4];
        for c in &self.animations.channels {
            let rotation = c.property == Property::Rotation;
            if c.property == Property::Weights {
                let mut w = vec![0.0; c.sampler.width];
                c.sampler.sample(t, false, &mut w);
                weights[c.node] = Some(w);
                continue;
            }
            let v = &mut value[..c.sampler.width];
            c.sampler.sample(t, rotation, v);
            if let Local::Trs { t, r, s } = &mut local[c.node] {
                match c.property {
                    Property::Translation => t.copy_from_slice(v),
                    Property::Rotation => r.copy_from_slice(v),
                    Property::Scale => s.copy_from_slice(v),
                    Property::Weights => {}
                }
            }
        }
        let mut world = vec![Matrix4::identity(); self.nodes.len()];
        for &n in &self.order {
            let parent = self.nodes[n]
                .parent
                .map_or(Matrix4::identity(), |p| world[p]);
            world[n] = parent * local[n].matrix();
        }
        Pose { world, weights }
    }

    /// World matrix of instance `i`'s node in `pose`.
    pub fn node_world(&self, i: usize, pose: &Pose) -> Matrix4<f64> {
        pose.world[self.instances[i].node]
    }

    /// Morph weights of instance `i` in `pose`: animated, else the node's, else the mesh's.
    fn morph_weights<'a>(&'a self, i: usize, pose: &'a Pose) -> &'a [f64] {
        let node = self.instances[i].node;
        pose.weights[node]
            .as_deref()
            .or(self.nodes[node].weights.as_deref())
            .unwrap_or(&self.mesh(i).default_weights)
    }

    /// Instance `i`'s vertex positions in its mesh space with the animated morph targets
    /// applied (keyframe targets `key_<frame>` excluded).
    pub fn morphed_positions(&self, i: usize, pose: &Pose) -> Vec<Vec3> {
        let mesh = self.mesh(i);
        let mut out = mesh.positions.clone();
        let weights = self.morph_weights(i, pose);
        for (target, &w) in mesh.targets.iter().zip(weights) {
            if target.key_frame.is_some() || w == 0.0 || !w.is_finite() {
                continue;
            }
            for (p, d) in out.iter_mut().zip(&target.deltas) {
                *p += d * w;
            }
        }
        out
    }

    /// World-space positions of every glTF vertex of instance `i` (primitives
    /// concatenated) in `pose`: morphed, then skinned or placed by the node.
    pub fn world_positions(&self, i: usize, pose: &Pose) -> Vec<Vec3> {
        let morphed = self.morphed_positions(i, pose);
        let node_world = self.node_world(i, pose);
        let apply = |m: &Matrix4<f64>, p: &Vec3| {
            m.fixed_view::<3, 3>(0, 0) * p + m.fixed_view::<3, 1>(0, 3)
        };
        let inst = &self.instances[i];
        let (Some(s), Some(inf)) = (inst.skin, self.mesh(i).influences.as_ref()) else {
            return morphed.iter().map(|p| apply(&node_world, p)).collect();
        };
        let skin = &self.skins[s];
        let joint: Vec<Matrix4<f64>> = skin
            .joints
            .iter()
            .zip(&skin.inverse_bind)
            .map(|(&j, ibm)| pose.world[j] * ibm)
            .collect();
        morphed
            .iter()
            .enumerate()
            .map(|(v, p)| {
                let mut m = Matrix4::zeros();
                let mut any = false;
                for (j, w) in inf.of(v) {
                    m += joint[j] * w;
                    any = true;
                }
                apply(if any { &m } else { &node_world }, p)
            })
            .collect()
    }
}

/// Joints and inverse bind matrices of a skin (identity matrices if absent).
fn read_skin(src: &Source, skin: &gltf::Skin) -> Result<SkinData> {
    let object = match skin.name() {
        Some(n) => format!("skin '{n}'"),
        None => format!("skin {}", skin.index()),
    };
    let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    let inverse_bind = match skin.inverse_bind_matrices() {
        None => vec![Matrix4::identity(); joints.len()],
        Some(acc) => {
            if acc.dimensions() != gltf::accessor::Dimensions::Mat4 {
                return Err(src.error(
                    &object,
                    "inverseBindMatrices must be MAT4; export the file again",
                ));
            }
            let flat = src.read(&acc, &object, "inverseBindMatrices")?;
            let m: Vec<Matrix4<f64>> = flat
                .chunks_exact(16)
                .map(Matrix4::from_column_slice)
                .collect();
            if m.len() < joints.len() || flat.iter().any(|x| !x.is_finite()) {
                return Err(src.error(
                    &object,
                    format!(
                        "has {} finite inverse bind matrices for {} joints; export the file again",
                        m.len(),
                        joints.len()
                    ),
                ));
            }
            m
        }
    };
    Ok(SkinData {
        joints,
        inverse_bind,
    })
}

fn unique_name(base: &str, used: &mut HashSet<String>) -> String {
    let mut name = base.to_string();
    let mut k = 1;
    while !used.insert(name.clone()) {
        name = format!("{base}.{k}");
        k += 1;
    }
    name
}

/// The role from `{"drape": {"role": ...}}` or `{"drape_role": ...}` extras.
fn role_of(extras: &gltf::json::Extras) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(extras.as_ref()?.get()).ok()?;
    let role = value
        .get("drape")
        .and_then(|d| d.get("role"))
        .or_else(|| value.get("drape_role"))?;
    role.as_str().map(str::to_string)
}
