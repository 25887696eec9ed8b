//! glTF extensions (glTF 2.0 §3.12): which drape decodes, which it may ignore and which
//! stop it.
//!
//! A file lists the extensions it uses in `extensionsUsed` and those a reader must
//! understand in `extensionsRequired`. drape reads geometry, skins and animation, so:
//!
//! * **decoded**: `KHR_mesh_quantization` (integer and normalised `POSITION`, `TEXCOORD`,
//!   `WEIGHTS` and morph target accessors, read by `source`'s accessor decoding), and
//!   `EXT_meshopt_compression` / `KHR_meshopt_compression` (buffer views decoded by
//!   `meshopt`);
//! * **ignored**: extensions that change only how the file looks — materials, textures,
//!   lights, cameras, material variants, metadata (`KHR_materials_*`, `KHR_texture_*`,
//!   `EXT_texture_*`, `KHR_lights_*`, ...). `inspect` names them once;
//! * **refused**: any other required extension (its data would be misread), with a message
//!   naming it. `KHR_draco_mesh_compression` is refused where a primitive has no
//!   uncompressed fallback, with a message naming the mesh and how to export without it.
use serde_json::Value;

/// Extensions whose data drape decodes.
pub(crate) const DECODED: &[&str] = &[
    "KHR_mesh_quantization",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
];

/// The Draco mesh compression extension.
pub(crate) const DRACO: &str = "KHR_draco_mesh_compression";

/// Name prefixes of extensions that only change appearance (materials, textures, lights,
/// cameras).
const APPEARANCE_PREFIXES: &[&str] = &[
    "KHR_materials_",
    "KHR_texture_",
    "KHR_lights_",
    "KHR_xmp",
    "EXT_materials_",
    "EXT_texture_",
    "EXT_lights_",
    "MSFT_texture_",
    "MSFT_packing_",
    "ADOBE_materials_",
    "AGI_articulations",
    "AGI_stk_metadata",
    "KHR_cameras_",
    "EXT_cameras_",
];

/// Whether `name` changes only how a file looks, so drape may ignore it when required.
pub(crate) fn appearance_only(name: &str) -> bool {
    APPEARANCE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The extensions of a file drape reads without applying them (used or required,
/// appearance-only or unknown but not required), in the order the file lists them; or the
/// message for the first required extension drape cannot honour.
pub(crate) fn check(json: &Value) -> std::result::Result<Vec<String>, String> {
    let list = |key: &str| -> Vec<String> {
        json.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let required = list("extensionsRequired");
    for name in &required {
        if DECODED.contains(&name.as_str()) || appearance_only(name) || name == DRACO {
            continue;
        }
        return Err(format!(
            "requires the glTF extension {name}, which drape cannot read; export the file \
             without it"
        ));
    }
    check_draco(json)?;
    let mut ignored = Vec::new();
    for name in list("extensionsUsed").into_iter().chain(required) {
        if !DECODED.contains(&name.as_str()) && !ignored.contains(&name) {
            ignored.push(name);
        }
    }
    Ok(ignored)
}

/// Refuses a Draco-compressed primitive whose `POSITION` accessor has no uncompressed
/// buffer view to fall back on, naming the mesh.
fn check_draco(json: &Value) -> std::result::Result<(), String> {
    let accessors = json.get("accessors").and_then(Value::as_array);
    let backed = |index: Option<u64>| {
        let acc = index.and_then(|i| accessors?.get(usize::try_from(i).ok()?));
        acc.is_some_and(|a| a.get("bufferView").is_some())
    };
    let meshes = json.get("meshes").and_then(Value::as_array);
    for (m, mesh) in meshes.into_iter().flatten().enumerate() {
        let prims = mesh.get("primitives").and_then(Value::as_array);
        for (p, prim) in prims.into_iter().flatten().enumerate() {
            let draco = prim.get("extensions").and_then(|e| e.get(DRACO));
            let position = prim
                .get("attributes")
                .and_then(|a| a.get("POSITION"))
                .and_then(Value::as_u64);
            if draco.is_some() && !backed(position) {
                let name = match mesh.get("name").and_then(Value::as_str) {
                    Some(n) => format!("mesh '{n}'"),
                    None => format!("mesh {m}"),
                };
                return Err(format!(
                    "{name} primitive {p} is compressed with Draco ({DRACO}), which drape \
                     cannot decode; export the file without mesh compression (Blender: File \
                     > Export > glTF 2.0, uncheck Data > Compression)"
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn appearance_extensions_are_ignored_and_named() {
        let doc = json!({
            "extensionsUsed": ["KHR_texture_transform", "KHR_mesh_quantization",
                               "KHR_materials_unlit"],
            "extensionsRequired": ["KHR_texture_transform", "KHR_mesh_quantization"],
        });
        assert_eq!(
            check(&doc).unwrap(),
            ["KHR_texture_transform", "KHR_materials_unlit"]
        );
    }

    #[test]
    fn an_unknown_required_extension_is_named() {
        let doc = json!({"extensionsRequired": ["EXT_mesh_gpu_instancing"]});
        let msg = check(&doc).unwrap_err();
        assert!(msg.contains("EXT_mesh_gpu_instancing"), "{msg}");
    }

    #[test]
    fn draco_without_fallback_names_the_mesh_and_the_export_setting() {
        let prim = |view: bool| {
            let mut acc = json!({"componentType": 5126, "count": 3, "type": "VEC3"});
            if view {
                acc["bufferView"] = json!(0);
            }
            json!({
                "extensionsRequired": [DRACO],
                "accessors": [acc],
                "meshes": [{"name": "Cape", "primitives": [{"attributes": {"POSITION": 0},
                    "extensions": {DRACO: {"bufferView": 1, "attributes": {"POSITION": 0}}}}]}],
            })
        };
        let msg = check(&prim(false)).unwrap_err();
        assert!(
            msg.contains("mesh 'Cape'") && msg.contains("Draco") && msg.contains("Compression"),
            "{msg}"
        );
        // An uncompressed fallback is read instead.
        assert!(check(&prim(true)).is_ok());
    }
}
