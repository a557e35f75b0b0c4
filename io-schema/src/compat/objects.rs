//! Objects: `properties`, `required` and `additionalProperties`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::checker::*;

impl<'a> Checker<'a> {
    pub(super) fn objects(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        let empty = &*EMPTY_MAP;
        let p_props = p_map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let c_props = c_map
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(empty);
        let p_required = required(p_map);
        let c_required = required(c_map);
        let p_additional = p_map.get("additionalProperties").unwrap_or(&TRUE);
        let c_additional = c_map.get("additionalProperties").unwrap_or(&TRUE);
        for r in &c_required {
            if !p_required.contains(r) {
                let reason = format!("the consumer requires `{r}`, the producer may leave it out");
                return match self.object_example(p, p_map, None, depth) {
                    Some(v) if v.get(*r).is_none() => fail(p, c, v, reason),
                    _ => unknown(p, c, reason),
                };
            }
        }
        if let Some(min) = c_map.get("minProperties").and_then(Value::as_u64) {
            let distinct: HashSet<&&str> = p_required.iter().collect();
            if (distinct.len() as u64) < min {
                return unknown(
                    p,
                    c,
                    "the consumer's `minProperties` is more than the producer requires",
                );
            }
        }
        // Named properties, then any other name.
        let mut keys: Vec<&'a str> = p_props.keys().map(String::as_str).collect();
        keys.extend(
            c_props
                .keys()
                .map(String::as_str)
                .filter(|k| !p_props.contains_key(*k)),
        );
        let mut other = String::from("extra");
        while p_props.contains_key(&other) || c_props.contains_key(&other) {
            other.push('_');
        }
        for key in keys.into_iter().map(Some).chain([None]) {
            let (p_k, c_k) = match key {
                Some(key) => (
                    match p_props.get(key) {
                        Some(s) => p.child(s, &["properties", key]),
                        None => p.child(p_additional, &["additionalProperties"]),
                    },
                    match c_props.get(key) {
                        Some(s) => c.child(s, &["properties", key]),
                        None => c.child(c_additional, &["additionalProperties"]),
                    },
                ),
                None => (
                    p.child(p_additional, &["additionalProperties"]),
                    c.child(c_additional, &["additionalProperties"]),
                ),
            };
            if p_k.schema == &Value::Bool(false) {
                continue;
            }
            match self.check(p_k, c_k, depth + 1, level + 1) {
                Outcome::Ok => {}
                Outcome::Fail(mut local) => {
                    let name = key.unwrap_or(&other);
                    let set = Some((name, local.value.clone()));
                    return match self.object_example(p, p_map, set, depth) {
                        Some(v) => {
                            local.value = v;
                            Outcome::Fail(local)
                        }
                        None => unknown(
                            p,
                            c,
                            format!("`{name}` differs, but no object around it could be built"),
                        ),
                    };
                }
                other => return other,
            }
        }
        Outcome::Ok
    }
}
