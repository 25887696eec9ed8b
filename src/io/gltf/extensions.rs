//! glTF extensions (glTF 2.0 §3.12): which drape decodes, which it may ignore and which
//! stop it.
//!
//! A file lists the extensions it uses in `extensionsUsed` and those a reader must
//! understand in `extensionsRequired`. drape reads geometry, skins and animation, so:
//!
//! * **decoded**: `KHR_mesh_quantization` (integer and normalised `POSITION`, `TEXCOORD`,
//!   `WEIGHTS` and morph target accessors, read by `source`'s accessor decoding), and
//!   `EXT_meshopt_compression` / `KHR_meshopt_compression` (buffer views decoded by
//!   `meshopt`), `KHR_draco_mesh_compression` (primitives decoded by `draco`);
//! * **ignored**: extensions that change only how the file looks — materials, textures,
//!   lights, cameras, material variants, metadata (`KHR_materials_*`, `KHR_texture_*`,
//!   `EXT_texture_*`, `KHR_lights_*`, ...). `inspect` names them once;
//! * **refused**: any other required extension (its data would be misread), with a message
//!   naming it.
use serde_json::Value;

/// Extensions whose data drape decodes.
pub(crate) const DECODED: &[&str] = &[
    "KHR_mesh_quantization",
    "EXT_meshopt_compression",
    "KHR_meshopt_compression",
    super::draco::NAME,
];

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
        if DECODED.contains(&name.as_str()) || appearance_only(name) {
            continue;
        }
        return Err(format!(
            "requires the glTF extension {name}, which drape cannot read; export the file \
             without it"
        ));
    }
    let mut ignored = Vec::new();
    for name in list("extensionsUsed").into_iter().chain(required) {
        if !DECODED.contains(&name.as_str()) && !ignored.contains(&name) {
            ignored.push(name);
        }
    }
    Ok(ignored)
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
}
