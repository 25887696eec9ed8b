//! A small glTF garment written by hand for the hostile cases: a 4 × 4 grid node `Grid`
//! marked as a garment, its data in an external `<name>.bin`, and helpers to add accessors.
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Vertices of the grid.
pub const VERTICES: usize = 25;

/// A glTF document under construction with its binary buffer.
pub struct Doc {
    /// The JSON.
    pub json: Value,
    /// The bytes of buffer 0.
    pub bin: Vec<u8>,
}

impl Doc {
    /// The grid garment: POSITION, TEXCOORD_0 and u32 indices.
    pub fn grid() -> Doc {
        let mut doc = Doc {
            json: json!({
                "asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
                "nodes": [{"name": "Grid", "mesh": 0, "extras": {"drape_role": "garment"}}],
                "meshes": [{"primitives": [{"attributes": {}}]}],
                "accessors": [], "bufferViews": [], "buffers": [],
            }),
            bin: Vec::new(),
        };
        let (mut pos, mut uv, mut idx) = (Vec::new(), Vec::new(), Vec::new());
        for j in 0..5 {
            for i in 0..5 {
                let (u, v) = (i as f32 / 4.0, j as f32 / 4.0);
                pos.extend([u - 0.5, 1.0, v - 0.5]);
                uv.extend([u, v]);
            }
        }
        for j in 0..4u32 {
            for i in 0..4u32 {
                let at = |i: u32, j: u32| j * 5 + i;
                idx.extend([at(i, j), at(i, j + 1), at(i + 1, j)]);
                idx.extend([at(i + 1, j), at(i, j + 1), at(i + 1, j + 1)]);
            }
        }
        let p = doc.add_f32(&pos, "VEC3");
        let t = doc.add_f32(&uv, "VEC2");
        let bytes: Vec<u8> = idx.iter().flat_map(|i| i.to_le_bytes()).collect();
        let i = doc.add_bytes(&bytes, 5125, idx.len(), "SCALAR");
        doc.json["accessors"][p]["min"] = json!([-0.5, 1.0, -0.5]);
        doc.json["accessors"][p]["max"] = json!([0.5, 1.0, 0.5]);
        doc.attribute("POSITION", p);
        doc.attribute("TEXCOORD_0", t);
        doc.json["meshes"][0]["primitives"][0]["indices"] = json!(i);
        doc
    }

    /// Appends `bytes` as a buffer view with an accessor of `count` elements; its index.
    pub fn add_bytes(&mut self, bytes: &[u8], component: u32, count: usize, ty: &str) -> usize {
        let views = self.json["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        let view = views.len() - 1;
        self.bin.extend(bytes);
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let accessors = self.json["accessors"].as_array_mut().unwrap();
        accessors.push(
            json!({"bufferView": view, "componentType": component, "count": count,
                              "type": ty}),
        );
        accessors.len() - 1
    }

    /// Appends float values as an accessor of type `ty`; its index.
    pub fn add_f32(&mut self, values: &[f32], ty: &str) -> usize {
        let width = match ty {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            _ => 4,
        };
        let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.add_bytes(&bytes, 5126, values.len() / width, ty)
    }

    /// Sets attribute `name` of the grid's primitive to accessor `acc`.
    pub fn attribute(&mut self, name: &str, acc: usize) {
        self.json["meshes"][0]["primitives"][0]["attributes"][name] = json!(acc);
    }

    /// Writes `dir/name` with its buffer in `dir/<bin_uri>` (`None`: `<name>.bin`) and
    /// returns the path of the `.gltf`.
    pub fn write(mut self, dir: &Path, name: &str, bin_uri: Option<&str>) -> PathBuf {
        let uri = bin_uri.map_or(format!("{name}.bin"), str::to_string);
        if !uri.starts_with('/') {
            std::fs::write(dir.join(&uri), &self.bin).unwrap();
        }
        self.json["buffers"] = json!([{"uri": uri, "byteLength": self.bin.len()}]);
        let path = dir.join(name);
        std::fs::write(&path, self.json.to_string()).unwrap();
        path
    }
}
