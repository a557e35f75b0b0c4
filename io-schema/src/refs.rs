//! References to a schema's root, and the copy of the root that a schema assembled from parts
//! keeps under `$defs` so that they still resolve: shared by the residual schemas and the
//! schema comparison, kept below both.

use serde_json::Value;

/// Where a residual document keeps the full root, for references to it.
pub(crate) const ROOT_DEF: &str = "__agent_io_root";

/// Points every `$ref` to the root (`#`, `#/properties/...`; not `#/$defs/...`) at the root's
/// copy under `$defs`. Returns whether it changed any.
pub(crate) fn rewrite_root_refs(schema: &mut Value) -> bool {
    rewrite_root_refs_to(schema, ROOT_DEF)
}

/// [`rewrite_root_refs`], the copy being `$defs/<name>`.
pub(crate) fn rewrite_root_refs_to(schema: &mut Value, name: &str) -> bool {
    let mut changed = false;
    match schema {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some(rest) = reference.strip_prefix('#')
                && !rest.starts_with("/$defs/")
            {
                *reference = format!("#/$defs/{name}{rest}");
                changed = true;
            }
            for value in map.values_mut() {
                changed |= rewrite_root_refs_to(value, name);
            }
        }
        Value::Array(items) => {
            for value in items {
                changed |= rewrite_root_refs_to(value, name);
            }
        }
        _ => {}
    }
    changed
}
