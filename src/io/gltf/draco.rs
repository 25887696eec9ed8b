//! Primitives compressed with `KHR_draco_mesh_compression`, decoded by the `draco-core`
//! crate (a Rust port of Google's Draco decoder).
//!
//! A compressed primitive carries, in its extension object, the buffer view holding one
//! Draco mesh and the Draco attribute of each glTF attribute:
//!
//! ```text
//! "extensions": {"KHR_draco_mesh_compression": {
//!     "bufferView": 5,
//!     "attributes": {"POSITION": 0, "TEXCOORD_0": 1, "JOINTS_0": 2, "WEIGHTS_0": 3}}}
//! ```
//!
//! where each number is the Draco attribute's unique id. The primitive's own accessors
//! (`attributes`, `indices`) keep their `count`, `type`, `componentType` and `min`/`max`
//! but usually no buffer view; their data is the decoded mesh's (extension spec,
//! "Conformance"): Draco point `i` is glTF vertex `i`, and the faces, three points each,
//! are the index list. The decoded values are written as the bytes a tightly packed buffer
//! view of the accessor would hold, and read by `source`'s accessor decoding like any
//! other view. Draco dequantises positions, texture coordinates and generic attributes
//! itself; the values are those the exporter quantised (Blender: 14 bits over the
//! bounding box for positions, 12 for texture coordinates and generic attributes).
//!
//! Morph targets are not compressed by the extension and keep their own buffer views.
use draco_core::decoder_buffer::DecoderBuffer;
use draco_core::mesh::Mesh;
use draco_core::mesh_decoder::MeshDecoder;
use serde_json::Value;

/// The extension's name.
pub(crate) const NAME: &str = "KHR_draco_mesh_compression";

/// The accessors whose data Draco-compressed primitives of `json` supply (their `indices`
/// and the attributes their extension lists), so that they need no buffer view.
pub(crate) fn accessors(json: &Value) -> Vec<usize> {
    let meshes = json.get("meshes").and_then(Value::as_array);
    let prims = meshes
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("primitives"));
    let mut out = Vec::new();
    for prim in prims.filter_map(Value::as_array).flatten() {
        let Some(ext) = prim.get("extensions").and_then(|e| e.get(NAME)) else {
            continue;
        };
        let listed = ext.get("attributes").and_then(Value::as_object);
        let attributes = listed
            .into_iter()
            .flatten()
            .filter_map(|(name, _)| prim.get("attributes").and_then(|a| a.get(name)));
        let ids = prim.get("indices").into_iter().chain(attributes);
        out.extend(
            ids.filter_map(Value::as_u64)
                .filter_map(|i| usize::try_from(i).ok()),
        );
    }
    out
}

/// Decoded accessor bytes (indexed by accessor; `None` where no Draco primitive supplies
/// the data), from the Draco primitives of `json`; `view(i)` gives buffer view `i`'s bytes.
/// An error names the primitive (`mesh 'Name' primitive p`) and says why.
pub(crate) fn decode_accessors<'a>(
    json: &Value,
    view: impl Fn(usize) -> std::result::Result<&'a [u8], String>,
) -> std::result::Result<Vec<Option<Vec<u8>>>, (String, String)> {
    let accessors = json.get("accessors").and_then(Value::as_array);
    let mut out: Vec<Option<Vec<u8>>> = vec![None; accessors.map_or(0, Vec::len)];
    let meshes = json.get("meshes").and_then(Value::as_array);
    for (m, mesh) in meshes.into_iter().flatten().enumerate() {
        let prims = mesh.get("primitives").and_then(Value::as_array);
        for (p, prim) in prims.into_iter().flatten().enumerate() {
            let Some(ext) = prim.get("extensions").and_then(|e| e.get(NAME)) else {
                continue;
            };
            let object = match mesh.get("name").and_then(Value::as_str) {
                Some(n) => format!("mesh '{n}' primitive {p}"),
                None => format!("mesh {m} primitive {p}"),
            };
            decode_primitive(prim, ext, accessors, &view, &mut out).map_err(|why| {
                let why = format!(
                    "is compressed with Draco ({NAME}) and {why}; export the file again, or \
                     without mesh compression (Blender: File > Export > glTF 2.0, uncheck \
                     Data > Compression)"
                );
                (object, why)
            })?;
        }
    }
    Ok(out)
}

/// Decodes one primitive's Draco mesh into the bytes of its accessors in `out`.
fn decode_primitive<'a>(
    prim: &Value,
    ext: &Value,
    accessors: Option<&Vec<Value>>,
    view: &impl Fn(usize) -> std::result::Result<&'a [u8], String>,
    out: &mut [Option<Vec<u8>>],
) -> std::result::Result<(), String> {
    let index = |v: Option<&Value>| {
        v.and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
    };
    let view_index = index(ext.get("bufferView"))
        .ok_or_else(|| "has no valid 'bufferView' in the extension".to_string())?;
    let bytes = view(view_index).map_err(|why| format!("its buffer view {why}"))?;
    // The decoder reports malformed data as errors; a panic inside it on a hostile file is
    // caught and becomes an input error too.
    let mesh = crate::io::foreign::catch(|| {
        let mut mesh = Mesh::new();
        MeshDecoder::new()
            .decode(&mut DecoderBuffer::new(bytes), &mut mesh)
            .map(|_| mesh)
    })
    .ok_or_else(|| "its data is malformed".to_string())?
    .map_err(|e| format!("its data does not decode ({e})"))?;
    let points = mesh.num_points();
    let accessor = |i: usize| -> std::result::Result<(&Value, usize), String> {
        let acc = accessors
            .and_then(|a| a.get(i))
            .ok_or_else(|| format!("uses accessor {i}, which does not exist"))?;
        Ok((acc, index(acc.get("count")).unwrap_or(0)))
    };
    if let Some(i) = index(prim.get("indices")) {
        let (acc, count) = accessor(i)?;
        let corners: Vec<f64> = (mesh.faces().iter().flatten())
            .map(|p| f64::from(p.0))
            .collect();
        if corners.len() != count {
            return Err(format!(
                "decodes to {} indices, but accessor {i} declares {count}",
                corners.len()
            ));
        }
        out[i] = Some(encode(&corners, acc).map_err(|why| format!("accessor {i} {why}"))?);
    }
    let attributes = ext.get("attributes").and_then(Value::as_object);
    for (name, id) in attributes.into_iter().flatten() {
        let Some(i) = index(prim.get("attributes").and_then(|a| a.get(name))) else {
            continue; // a Draco attribute the primitive does not use
        };
        let (acc, count) = accessor(i)?;
        let id = index(Some(id)).and_then(|id| u32::try_from(id).ok());
        let attr = id
            .and_then(|id| mesh.attribute_by_unique_id(id))
            .ok_or_else(|| format!("its {name} names a Draco attribute it does not hold"))?;
        let comps = components(acc);
        if points != count || usize::from(attr.num_components()) != comps {
            return Err(format!(
                "its {name} decodes to {points} values of {} components, but accessor {i} \
                 declares {count} of {comps}",
                attr.num_components()
            ));
        }
        let values: Vec<f64> = (attr.read_f32s(points, comps).into_iter())
            .map(f64::from)
            .collect();
        out[i] = Some(encode(&values, acc).map_err(|why| format!("accessor {i} {why}"))?);
    }
    Ok(())
}

/// Components of one element of accessor `acc` (scalar and vector types; 0 for others).
fn components(acc: &Value) -> usize {
    match acc.get("type").and_then(Value::as_str) {
        Some("SCALAR") => 1,
        Some("VEC2") => 2,
        Some("VEC3") => 3,
        Some("VEC4") => 4,
        _ => 0,
    }
}

/// `values` as little-endian components of `acc`'s `componentType`, tightly packed; an
/// integer type takes integers within its range (what Draco decodes for it).
fn encode(values: &[f64], acc: &Value) -> std::result::Result<Vec<u8>, String> {
    let kind = acc
        .get("componentType")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let (min, max, size) = match kind {
        5120 => (-128.0, 127.0, 1),
        5121 => (0.0, 255.0, 1),
        5122 => (-32768.0, 32767.0, 2),
        5123 => (0.0, 65535.0, 2),
        5125 => (0.0, f64::from(u32::MAX), 4),
        5126 => {
            return Ok(values
                .iter()
                .flat_map(|&v| (v as f32).to_le_bytes())
                .collect())
        }
        _ => return Err(format!("has an unknown componentType {kind}")),
    };
    let mut out = Vec::with_capacity(values.len() * size);
    for &v in values {
        if v.fract() != 0.0 || !(min..=max).contains(&v) {
            return Err(format!(
                "has integer components, but Draco decodes the value {v} for it"
            ));
        }
        out.extend_from_slice(&(v as i64).to_le_bytes()[..size]);
    }
    Ok(out)
}
