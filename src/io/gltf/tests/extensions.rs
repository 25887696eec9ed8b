//! Extensions and clips: one hand-built grid garment stored plainly, quantized
//! (`KHR_mesh_quantization`) and meshopt-compressed (encoded here with the `meshopt` crate)
//! reads back the same; a scene Blender exported with and without Draco
//! (`KHR_draco_mesh_compression`) reads the same within Draco's quantisation;
//! appearance-only extensions are ignored and named; undecodable Draco data and unknown
//! required extensions are refused by name; `--animation` picks a clip.
use super::super::mesh::MeshData;
use super::*;
use crate::Vec2;
use serde_json::json;

/// Grid side: (N + 1)² vertices, 2 N² triangles.
const N: usize = 4;

/// Vertex positions (a 1 m square in the x–z plane, raised y = 0.25 m), UVs and triangles.
fn grid() -> (Vec<[f32; 3]>, Vec<[f32; 2]>, Vec<u32>) {
    let mut pos = Vec::new();
    let mut uv = Vec::new();
    for j in 0..=N {
        for i in 0..=N {
            let (u, v) = (i as f32 / N as f32, j as f32 / N as f32);
            pos.push([u - 0.5, 0.25, v - 0.5]);
            uv.push([u, v]);
        }
    }
    let mut idx = Vec::new();
    let at = |i: usize, j: usize| (j * (N + 1) + i) as u32;
    for j in 0..N {
        for i in 0..N {
            idx.extend([at(i, j), at(i, j + 1), at(i + 1, j)]);
            idx.extend([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
        }
    }
    (pos, uv, idx)
}

fn bytes<T: Copy, const K: usize>(v: &[[T; K]], f: impl Fn(T) -> Vec<u8>) -> Vec<u8> {
    v.iter().flatten().flat_map(|&x| f(x)).collect()
}

/// How the grid is stored.
#[derive(Clone, Copy, PartialEq)]
enum Storage {
    Plain,
    /// `POSITION` as normalised i16 with the scale on the node, `TEXCOORD_0` as
    /// normalised u16.
    Quantized,
    /// Every view compressed with the named meshopt extension.
    Meshopt(&'static str),
}

/// Writes the grid garment as `dir/name` with its data in `name.bin`.
fn write_grid(dir: &Path, name: &str, storage: Storage) -> PathBuf {
    let (pos, uv, idx) = grid();
    let count = pos.len();
    let bounds = |f: &dyn Fn(f32) -> f32| {
        let pick = |take: fn(f32, f32) -> f32| -> Vec<f32> {
            (0..3)
                .map(|c| pos.iter().map(|p| f(p[c])).reduce(take).unwrap())
                .collect()
        };
        (pick(f32::min), pick(f32::max))
    };
    let q = |x: f32| ((x / 0.5) * 32767.0).round() as i16;
    let (min, max) = match storage {
        Storage::Quantized => bounds(&|x| f32::from(q(x))),
        _ => bounds(&|x| x),
    };
    let (pos_bytes, pos_type, uv_bytes, uv_type, scale) = match storage {
        Storage::Quantized => {
            let qp: Vec<[i16; 4]> = pos.iter().map(|p| [q(p[0]), q(p[1]), q(p[2]), 0]).collect();
            let qu: Vec<[u16; 2]> = uv
                .iter()
                .map(|t| t.map(|x| (x * 65535.0).round() as u16))
                .collect();
            let pb = bytes(&qp, |x: i16| x.to_le_bytes().to_vec());
            let ub = bytes(&qu, |x: u16| x.to_le_bytes().to_vec());
            (pb, (5122, 8), ub, (5123, 4), 0.5)
        }
        _ => {
            let pb = bytes(&pos, |x: f32| x.to_le_bytes().to_vec());
            let ub = bytes(&uv, |x: f32| x.to_le_bytes().to_vec());
            (pb, (5126, 12), ub, (5126, 8), 1.0)
        }
    };
    let ib: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
    let streams = [
        (pos_bytes, pos_type.1, count, "ATTRIBUTES"),
        (uv_bytes, uv_type.1, count, "ATTRIBUTES"),
        (ib, 4, idx.len(), "TRIANGLES"),
    ];
    let mut data = Vec::new();
    let mut views = Vec::new();
    let mut fallback_at = 0;
    for (raw, stride, n, mode) in &streams {
        let mut view = json!({"buffer": 0, "byteOffset": data.len(), "byteLength": raw.len()});
        if *mode == "ATTRIBUTES" {
            view["byteStride"] = json!(stride);
        }
        if let Storage::Meshopt(ext) = storage {
            let packed = if *mode == "TRIANGLES" {
                ::meshopt::encode_index_buffer(&idx, count).unwrap()
            } else {
                let words: Vec<u32> = raw
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                match stride {
                    12 => vertex_stream::<3>(&words),
                    _ => vertex_stream::<2>(&words),
                }
            };
            view = json!({"buffer": 1, "byteOffset": fallback_at, "byteLength": raw.len(),
                "extensions": {ext: {"buffer": 0, "byteOffset": data.len(),
                    "byteLength": packed.len(), "byteStride": stride, "count": n, "mode": mode}}});
            if *mode == "ATTRIBUTES" {
                view["byteStride"] = json!(stride);
            }
            fallback_at += raw.len();
            data.extend(packed);
        } else {
            data.extend(raw);
        }
        while !data.len().is_multiple_of(4) {
            data.push(0);
        }
        views.push(view);
    }
    let bin = format!("{name}.bin");
    std::fs::write(dir.join(&bin), &data).unwrap();
    let mut buffers = vec![json!({"uri": bin, "byteLength": data.len()})];
    let mut used: Vec<&str> = Vec::new();
    match storage {
        Storage::Meshopt(ext) => {
            buffers.push(json!({"byteLength": fallback_at,
                "extensions": {ext: {"fallback": true}}}));
            used.push(ext);
        }
        Storage::Quantized => used.push("KHR_mesh_quantization"),
        Storage::Plain => {}
    }
    let doc = json!({
        "asset": {"version": "2.0"},
        "extensionsUsed": used, "extensionsRequired": used,
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Grid", "mesh": 0, "scale": [scale, scale, scale],
                   "extras": {"drape_role": "garment"}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_0": 1},
                                    "indices": 2}]}],
        "accessors": [
            {"bufferView": 0, "componentType": pos_type.0, "normalized": scale != 1.0,
             "count": count, "type": "VEC3", "min": min, "max": max},
            {"bufferView": 1, "componentType": uv_type.0, "normalized": scale != 1.0,
             "count": count, "type": "VEC2"},
            {"bufferView": 2, "componentType": 5125, "count": idx.len(), "type": "SCALAR"},
        ],
        "bufferViews": views,
        "buffers": buffers,
    });
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `words` (K 32-bit words per vertex) encoded with meshopt's vertex codec.
fn vertex_stream<const K: usize>(words: &[u32]) -> Vec<u8> {
    let v: Vec<[u32; K]> = words
        .chunks_exact(K)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect();
    ::meshopt::encode_vertex_buffer(&v).unwrap()
}

#[test]
fn quantized_and_meshopt_compressed_grids_read_as_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let plain = read(&write_grid(dir.path(), "plain.gltf", Storage::Plain)).unwrap();
    let g = &plain.garments[0];
    assert_eq!(
        (g.positions.len(), g.triangles.len()),
        ((N + 1) * (N + 1), 2 * N * N)
    );
    for ext in ["EXT_meshopt_compression", "KHR_meshopt_compression"] {
        let path = write_grid(dir.path(), "packed.gltf", Storage::Meshopt(ext));
        let packed = read(&path).unwrap();
        // Lossless: the very same garment (the index codec may start a triangle at another
        // of its corners).
        assert_eq!(packed.garments[0].positions, g.positions, "{ext}");
        assert_eq!(corners(&packed.garments[0]), corners(g), "{ext}");
    }
    let quantized = read(&write_grid(dir.path(), "q.gltf", Storage::Quantized)).unwrap();
    let q = &quantized.garments[0];
    assert_eq!(q.triangles, g.triangles);
    // World positions within half a quantization step (0.5 m / 32767 / 2) of the plain ones.
    for (a, b) in q.world_positions().iter().zip(g.world_positions()) {
        assert!((a - b).amax() <= 0.5 / 32767.0, "{a} vs {b}");
    }
    for (a, b) in q
        .corner_uvs
        .iter()
        .flatten()
        .zip(g.corner_uvs.iter().flatten())
    {
        assert!((a - b).amax() <= 0.5 / 65535.0 + 1e-7, "{a} vs {b}");
    }
}

/// Each triangle's corners as (particle, UV), rotated to start at its lowest particle.
fn corners(g: &Garment) -> Vec<[(usize, [f64; 2]); 3]> {
    g.triangles
        .iter()
        .zip(&g.corner_uvs)
        .map(|(t, uv)| {
            let first = (0..3).min_by_key(|&k| t[k]).unwrap();
            std::array::from_fn(|k| {
                let c = (first + k) % 3;
                (t[c], [uv[c].x, uv[c].y])
            })
        })
        .collect()
}

#[test]
fn a_damaged_meshopt_stream_is_an_error_naming_the_view() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_grid(
        dir.path(),
        "packed.gltf",
        Storage::Meshopt("EXT_meshopt_compression"),
    );
    let bin = dir.path().join("packed.gltf.bin");
    let len = std::fs::read(&bin).unwrap().len();
    std::fs::write(&bin, vec![0xffu8; len]).unwrap();
    let (object, msg) = input_message(read(&path));
    assert!(object.unwrap().starts_with("buffer view"), "{msg}");
    // A count the compressed bytes cannot hold is refused before allocating.
    let path = write_grid(
        dir.path(),
        "huge.gltf",
        Storage::Meshopt("EXT_meshopt_compression"),
    );
    edit_json(&path, |d| {
        d["bufferViews"][0]["extensions"]["EXT_meshopt_compression"]["count"] = json!(1u64 << 40)
    });
    let (_, msg) = input_message(read(&path));
    assert!(
        msg.contains("more than meshopt compression can hold"),
        "{msg}"
    );
}

#[test]
fn appearance_extensions_are_ignored_and_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_grid(dir.path(), "tt.gltf", Storage::Plain);
    edit_json(&path, |d| {
        d["extensionsUsed"] = json!([
            "KHR_texture_transform",
            "KHR_materials_unlit",
            "KHR_texture_transform"
        ]);
        d["extensionsRequired"] = json!(["KHR_texture_transform", "KHR_materials_unlit"]);
    });
    let (scene, notes) = inspect(&path, &Selection::default()).unwrap();
    assert_eq!(scene.garments.len(), 1);
    assert_eq!(
        notes.ignored_extensions,
        ["KHR_texture_transform", "KHR_materials_unlit"]
    );
}

#[test]
fn undecodable_draco_and_unknown_required_extensions_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_grid(dir.path(), "draco.gltf", Storage::Plain);
    edit_json(&path, |d| {
        d["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
        d["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
        d["meshes"][0]["name"] = json!("Cape");
        d["meshes"][0]["primitives"][0]["extensions"] = json!({"KHR_draco_mesh_compression":
            {"bufferView": 2, "attributes": {"POSITION": 0, "TEXCOORD_0": 1}}});
        d["accessors"][0]
            .as_object_mut()
            .unwrap()
            .remove("bufferView");
    });
    // Buffer view 2 holds the plain grid's floats, not a Draco mesh.
    let (object, msg) = input_message(read(&path));
    assert_eq!(object.as_deref(), Some("mesh 'Cape' primitive 0"));
    assert!(
        msg.contains("Draco") && msg.contains("Compression"),
        "{msg}"
    );
    edit_json(&path, |d| {
        d["extensionsRequired"] = json!(["EXT_mesh_gpu_instancing"])
    });
    let (_, msg) = input_message(read(&path));
    assert!(msg.contains("EXT_mesh_gpu_instancing"), "{msg}");
}

/// fixtures/draco: the scene of tests/python/test_gltf_draco.py (a 6 × 6 garment grid
/// with a UV seam, a box skinned to a bone that lifts it over frames 1–24) as Blender's
/// glTF exporter writes it without and with Draco (positions quantised to 14 bits,
/// texture coordinates and weights to 12, compression level 6).
const DRACO_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/draco");

/// Draco's quantisation step of `bits` bits over the largest side of the bounding box of
/// `points` (`dims` coordinates each): a decoded value is within half of it.
fn quantisation_step(points: impl Iterator<Item = Vec<f64>> + Clone, bits: u32) -> f64 {
    let side = |k: usize| {
        let c = points.clone().map(|p| p[k]);
        c.clone().fold(f64::MIN, f64::max) - c.fold(f64::MAX, f64::min)
    };
    let dims = points.clone().next().map_or(0, |p| p.len());
    (0..dims).map(side).fold(0.0, f64::max) / f64::from((1u32 << bits) - 1)
}

#[test]
fn blender_draco_scene_reads_like_its_uncompressed_export() {
    let dir = Path::new(DRACO_FIXTURES);
    let plain = GltfFile::open(&dir.join("scene_plain.glb")).unwrap();
    let draco = GltfFile::open(&dir.join("scene_draco.glb")).unwrap();
    assert!(draco.ignored_extensions().is_empty());
    assert_eq!(plain.instances().len(), 2);
    let names = |f: &GltfFile| {
        f.instances()
            .iter()
            .map(|i| i.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&plain), names(&draco));
    // Frames 1..=24 at 24 fps, as Blender sampled the bone.
    let times: Vec<f64> = (1..=24).map(|f| f64::from(f) / 24.0).collect();
    for i in 0..2 {
        let (a, b) = (plain.mesh(i), draco.mesh(i));
        let name = &plain.instances()[i].name;
        assert_eq!(a.positions.len(), b.positions.len(), "{name}");
        assert_eq!(a.triangles.len(), b.triangles.len(), "{name}");
        let step = quantisation_step(a.positions.iter().map(|p| vec![p.x, p.y, p.z]), 14);
        let uv_of = |m: &MeshData, v: usize| m.uvs.as_ref().map_or(Vec2::zeros(), |u| u[v]);
        let uv_step = quantisation_step(
            (0..a.positions.len()).map(|v| vec![uv_of(a, v).x, uv_of(a, v).y]),
            12,
        );
        // Draco reorders vertices: pair each with the plain vertex of nearest position and
        // UV (the seam's split vertices share a position, not a UV).
        let pair: Vec<usize> = (0..b.positions.len())
            .map(|v| {
                let d = |w: usize| {
                    (b.positions[v] - a.positions[w]).norm() + (uv_of(b, v) - uv_of(a, w)).norm()
                };
                (0..a.positions.len())
                    .min_by(|&x, &y| d(x).total_cmp(&d(y)))
                    .unwrap()
            })
            .collect();
        let mut seen = pair.clone();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            a.positions.len(),
            "{name}: a one-to-one pairing"
        );
        for (v, &w) in pair.iter().enumerate() {
            // f32 rounding of the dequantised value on top of half a step.
            let slack = 1e-6;
            let d = (b.positions[v] - a.positions[w]).norm();
            assert!(
                d <= 0.5 * step * 3f64.sqrt() + slack,
                "{name} vertex {v}: {d}"
            );
            let d = (uv_of(b, v) - uv_of(a, w)).norm();
            assert!(
                d <= 0.5 * uv_step * 2f64.sqrt() + slack,
                "{name} uv {v}: {d}"
            );
            let inf =
                |m: &MeshData, v: usize| m.influences.as_ref().map(|f| f.of(v).collect::<Vec<_>>());
            assert_eq!(inf(a, w), inf(b, v), "{name} skin of vertex {v}");
        }
        // The same triangles, corners in the same cyclic order.
        let canonical = |t: [usize; 3]| {
            let k = (0..3).min_by_key(|&k| t[k]).unwrap();
            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
        };
        let mut ta: Vec<_> = a.triangles.iter().map(|&t| canonical(t)).collect();
        let mut tb: Vec<_> = (b.triangles.iter())
            .map(|t| canonical(t.map(|v| pair[v])))
            .collect();
        ta.sort_unstable();
        tb.sort_unstable();
        assert_eq!(ta, tb, "{name}");
        // World positions over the frames: the skinned body moves, within half a step.
        for &t in &times {
            let (pa, pb) = (
                plain.world_positions(i, &plain.pose(t)),
                draco.world_positions(i, &draco.pose(t)),
            );
            for (v, &w) in pair.iter().enumerate() {
                let d = (pb[v] - pa[w]).norm();
                assert!(
                    d <= 0.5 * step * 3f64.sqrt() + 1e-6,
                    "{name} t {t} vertex {v}: {d}"
                );
            }
        }
    }
    let body = names(&plain).iter().position(|n| n == "Body").unwrap();
    assert!(draco.is_skinned(body) && draco.is_animated(body));
}

/// The grid as a body moved by two clips: `Up` raises it 1 m over 1 s, `Side` moves it
/// 2 m along x over 0.5 s.
fn two_clip_file(dir: &Path) -> PathBuf {
    let path = write_grid(dir, "clips.gltf", Storage::Plain);
    let times: Vec<f32> = vec![0.0, 1.0, 0.0, 0.5];
    let values: Vec<f32> = vec![0., 0., 0., 0., 1., 0., 0., 0., 0., 2., 0., 0.];
    let mut data: Vec<u8> = times.iter().flat_map(|x| x.to_le_bytes()).collect();
    data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
    std::fs::write(dir.join("clips.bin2"), &data).unwrap();
    edit_json(&path, |d| {
        d["nodes"][0].as_object_mut().unwrap().remove("extras");
        d["buffers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"uri": "clips.bin2", "byteLength": 64}));
        d["bufferViews"]
            .as_array_mut()
            .unwrap()
            .push(json!({"buffer": 1, "byteLength": 64}));
        let acc = d["accessors"].as_array_mut().unwrap();
        for (offset, count, ty) in [
            (0, 2, "SCALAR"),
            (8, 2, "SCALAR"),
            (16, 2, "VEC3"),
            (40, 2, "VEC3"),
        ] {
            acc.push(
                json!({"bufferView": 3, "byteOffset": offset, "componentType": 5126,
                            "count": count, "type": ty}),
            );
        }
        let clip = |name: &str, input: usize, output: usize| {
            json!({"name": name,
            "samplers": [{"input": input, "output": output}],
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]})
        };
        d["animations"] = json!([clip("Up", 3, 5), clip("Side", 4, 6)]);
    });
    path
}

#[test]
fn the_first_clip_plays_unless_another_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = two_clip_file(dir.path());
    let (scene, notes) = inspect(&path, &Selection::default()).unwrap();
    assert_eq!(
        notes.clips,
        [
            ("Up".to_string(), Some((0, 24))),
            ("Side".to_string(), Some((0, 12)))
        ]
    );
    assert_eq!(notes.playing.as_deref(), Some("Up"));
    let body = &scene.bodies[0].animation;
    assert_eq!(scene.frame_range, Some((0, 24)));
    // At the last frame: raised 1 m, not moved along x.
    let (first, last) = (&body.positions[0][0], body.positions.last().unwrap()[0]);
    assert!((last - first - Vec3::new(0.0, 1.0, 0.0)).norm() < 1e-6);
    let side = Selection {
        animation: Some("Side".into()),
        ..Selection::default()
    };
    let (scene, notes) = inspect(&path, &side).unwrap();
    assert_eq!(notes.playing.as_deref(), Some("Side"));
    assert_eq!(scene.frame_range, Some((0, 12)));
    let body = &scene.bodies[0].animation;
    let (first, last) = (&body.positions[0][0], body.positions.last().unwrap()[0]);
    assert!((last - first - Vec3::new(2.0, 0.0, 0.0)).norm() < 1e-6);
    // By index too; an unknown name lists the clips with their frames.
    let by_index = Selection {
        animation: Some("1".into()),
        ..Selection::default()
    };
    assert_eq!(
        inspect(&path, &by_index).unwrap().1.playing.as_deref(),
        Some("Side")
    );
    let walk = Selection {
        animation: Some("Walk".into()),
        ..Selection::default()
    };
    let (object, msg) = input_message(select_with(&path, &walk));
    assert_eq!(object.as_deref(), Some("Walk"));
    assert!(
        msg.contains("Up (frames 0..24), Side (frames 0..12)"),
        "{msg}"
    );
}
