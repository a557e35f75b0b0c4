//! References: `$ref` and `$defs` on either side, recursive types, a root copied into an
//! assembled document, and percent-decoded JSON pointers.

use serde_json::{Map, Value, json};

use super::checker::*;

impl<'a> Checker<'a> {
    pub(super) fn root(&self, side: Side) -> &'a Value {
        match side {
            Side::Producer => self.p_root,
            Side::Consumer => self.c_root,
        }
    }

    /// Whether `value` is valid for `node` of one side, by the real validator (`None`: it
    /// cannot be built). A node built here is checked against its own text; a node of the
    /// document against the document at its pointer.
    pub(super) fn valid(&mut self, side: Side, node: &Node<'a>, value: &Value) -> Option<bool> {
        let root = self.root(side);
        let key = if node.synthetic {
            format!("text:{}", node.schema)
        } else {
            node.ptr.clone()
        };
        let (ptr, synthetic, schema) = (node.ptr.clone(), node.synthetic, node.schema);
        let validator = self.validators.entry((side, key)).or_insert_with(|| {
            let document = if synthetic {
                with_root(root, schema)?
            } else if ptr.is_empty() {
                root.clone()
            } else {
                at_pointer(root, &ptr)?
            };
            let built = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&document);
            built.ok()
        });
        validator.as_ref().map(|v| v.is_valid(value))
    }

    pub(super) fn resolve(&self, side: Side, node: &Node<'a>) -> Option<Node<'a>> {
        let reference = node.get("$ref")?.as_str()?;
        let pointer = crate::pointer::local_pointer(reference)?.into_owned();
        let root = self.root(side);
        let target = if pointer.is_empty() {
            root
        } else {
            root.pointer(&pointer)?
        };
        Some(Node {
            schema: target,
            ptr: pointer,
            synthetic: false,
        })
    }

    pub(super) fn check_refs(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        if p_map.contains_key("$ref") {
            // Keywords beside the `$ref` only narrow the producer: the target alone is wider.
            let Some(target) = self.resolve(Side::Producer, &p) else {
                return unknown(
                    &p,
                    &c,
                    "a producer `$ref` does not resolve within its document",
                );
            };
            return self.check(target, c, depth + 1, level);
        }
        let Some(target) = self.resolve(Side::Consumer, &c) else {
            return unknown(
                &p,
                &c,
                "a consumer `$ref` does not resolve within its document",
            );
        };
        // Keywords beside the `$ref` must hold too.
        let rest = without(c_map, &["$ref"]);
        if constraints(&rest).next().is_some() {
            match self.check(p.clone(), built(self.arena, &c, rest), depth + 1, level) {
                Outcome::Ok => {}
                other => return other,
            }
        }
        self.check(p, target, depth + 1, level)
    }
}

/// Points `document`'s references to `root`'s root (`#`, `#/properties/...`) at a copy of that
/// root under `$defs`, for a document assembled from parts of `root` (a mapped skill input).
#[doc(hidden)]
pub fn keep_root_refs(root: &Value, document: &mut Value) {
    let name = fresh_root_name(root);
    if !crate::refs::rewrite_root_refs_to(document, &name) {
        return;
    }
    let Some(defs) = defs_with_root(root, &name) else {
        return;
    };
    if let Some(map) = document.as_object_mut() {
        map.insert("$defs".into(), defs);
    }
}

/// A `$defs` name for a copy of `root` that `root` does not use.
pub(super) fn fresh_root_name(root: &Value) -> String {
    let defs = root.get("$defs").and_then(Value::as_object);
    let mut name = crate::refs::ROOT_DEF.to_owned();
    while defs.is_some_and(|d| d.contains_key(&name)) {
        name.push('_');
    }
    name
}

/// `root`'s `$defs`, with a copy of `root` itself under `name`, every reference to the root
/// re-pointed at that copy.
pub(super) fn defs_with_root(root: &Value, name: &str) -> Option<Value> {
    let mut defs = root.get("$defs").cloned().unwrap_or_else(|| json!({}));
    let mut copy = root.clone();
    if let Value::Object(copy) = &mut copy {
        copy.remove("$defs");
    }
    crate::refs::rewrite_root_refs_to(&mut defs, name);
    crate::refs::rewrite_root_refs_to(&mut copy, name);
    defs.as_object_mut()?.insert(name.to_owned(), copy);
    Some(defs)
}

/// A document for a schema built here, in the context of its side's root (whose `$defs` and
/// root references it may use).
pub(super) fn with_root(root: &Value, schema: &Value) -> Option<Value> {
    let name = fresh_root_name(root);
    let defs = defs_with_root(root, &name)?;
    let mut document = match schema {
        Value::Bool(_) => return Some(schema.clone()),
        Value::Object(map) => map.clone(),
        _ => return None,
    };
    document.remove("$defs");
    let mut document = Value::Object(document);
    crate::refs::rewrite_root_refs_to(&mut document, &name);
    let map = document.as_object_mut()?;
    map.insert("$defs".into(), defs);
    map.insert(
        "$schema".into(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    Some(document)
}

/// A standalone document for the subschema at `ptr` (a JSON pointer) of `root`: the root is
/// kept under `$defs`, every reference to it re-pointed, and the document refers to the
/// subschema. `None` when nothing is there.
///
/// ```
/// use serde_json::json;
/// let root = json!({ "$defs": { "N": { "type": "integer" } }, "properties": { "n": { "$ref": "#/$defs/N" } } });
/// let n = agentio_core::compat::schema_at(&root, "/properties/n").unwrap();
/// assert!(agentio_core::compat::schema_compatible(&json!({ "type": "integer", "minimum": 0 }), &n).is_compatible());
/// ```
pub fn schema_at(root: &Value, ptr: &str) -> Option<Value> {
    at_pointer(root, ptr)
}

pub(super) fn at_pointer(root: &Value, ptr: &str) -> Option<Value> {
    root.pointer(ptr)?;
    let name = fresh_root_name(root);
    let defs = defs_with_root(root, &name)?;
    let target = match ptr.strip_prefix("/$defs/") {
        Some(rest) => format!("#/$defs/{rest}"),
        None => format!("#/$defs/{name}{ptr}"),
    };
    // A `$ref` is a URI: `%` in a pointer token is escaped.
    let target = target.replace('%', "%25");
    Some(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": target,
    }))
}
