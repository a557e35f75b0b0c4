//! Bounds on untrusted JSON: how deep a value may nest, and how much of it an error may show.
//!
//! Every recursive walk over a value that came from outside (schema validation, serde
//! decoding, error formatting, even dropping it) uses the call stack, so a deep enough value
//! would overflow it. The boundary refuses values nested deeper than [`MAX_DEPTH`] before any
//! such walk, with an `input_invalid` / `output_invalid` error naming where; [`check_depth`]
//! measures without recursing and [`dismantle`] drops a value of any depth without recursing.
//! Error texts are bounded too: a pointer shows at most [`MAX_POINTER_BYTES`] bytes and a
//! message at most 240 characters, however large the offending key or value.

use std::fmt;

use serde_json::Value;

use crate::violation::Violation;

/// How deep a JSON value crossing a boundary may nest (the same limit serde_json's parser
/// applies to text).
pub const MAX_DEPTH: usize = 128;
/// The longest JSON pointer an error shows, in bytes; a longer one is cut and ends in `…`.
pub const MAX_POINTER_BYTES: usize = 512;

/// Checks that `value` nests at most `limit` levels, without recursion: a scalar has no
/// level, `[]` and `[1]` one, `{"a": [1]}` two. On failure, the violation points at the first array or object that goes
/// past the limit.
///
/// ```
/// use agentio_schema::limits::check_depth;
/// use serde_json::json;
/// assert!(check_depth(&json!({ "a": [1, 2] }), 2).is_ok());
/// let err = check_depth(&json!({ "a": [[1]] }), 2).unwrap_err();
/// assert_eq!(err.pointer, "/a/0");
/// assert_eq!(err.keyword, "depth");
/// ```
pub fn check_depth(value: &Value, limit: usize) -> Result<(), Violation> {
    // Every boundary crossing runs this, so the common case allocates nothing: a recursion
    // that stops at `limit` (bounded, so safe on any stack) answers "within". Only a value
    // that goes past it is walked again, without recursion, to say where. The fast path only
    // saves work: a mutation that makes it answer "not within" more often leaves every
    // answer the same, since the full walk decides then (excluded in .cargo/mutants.toml).
    if limit <= MAX_RECURSIVE_LIMIT && within(value, limit) {
        return Ok(());
    }
    locate_too_deep(value, limit)
}

/// The largest `limit` [`check_depth`] checks by (bounded) recursion.
const MAX_RECURSIVE_LIMIT: usize = 256;

fn within(value: &Value, levels: usize) -> bool {
    match value {
        Value::Array(items) => levels > 0 && items.iter().all(|item| within(item, levels - 1)),
        Value::Object(map) => levels > 0 && map.values().all(|item| within(item, levels - 1)),
        _ => true,
    }
}

/// The first array or object past `limit`, found without recursion.
fn locate_too_deep(value: &Value, limit: usize) -> Result<(), Violation> {
    // (value, its depth, its pointer token index in `path`)
    let mut stack: Vec<(&Value, usize, Option<Token<'_>>)> = vec![(value, 0, None)];
    let mut path: Vec<Token<'_>> = Vec::new();
    while let Some((value, depth, token)) = stack.pop() {
        path.truncate(depth.saturating_sub(1));
        if let Some(token) = token {
            path.push(token);
        }
        if !matches!(value, Value::Array(_) | Value::Object(_)) {
            continue;
        }
        if depth >= limit {
            return Err(Violation {
                pointer: pointer_of(&path),
                keyword: "depth".into(),
                message: format!("the value nests deeper than {limit} levels"),
            });
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((item, depth + 1, Some(Token::Index(i))));
                }
            }
            Value::Object(map) => {
                for (key, item) in map.iter().rev() {
                    stack.push((item, depth + 1, Some(Token::Key(key))));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Token<'a> {
    Index(usize),
    Key(&'a str),
}

fn pointer_of(path: &[Token<'_>]) -> String {
    let mut pointer = String::new();
    for token in path {
        pointer.push('/');
        match token {
            Token::Index(i) => pointer.push_str(&i.to_string()),
            Token::Key(key) => pointer.push_str(&crate::pointer::escape_token(key)),
        }
        if pointer.len() > MAX_POINTER_BYTES {
            break;
        }
    }
    clip_pointer(pointer)
}

/// Drops `value` without recursion, so a value nested deeper than the stack allows can be
/// released. Values within [`MAX_DEPTH`] can simply be dropped.
///
/// ```
/// let mut deep = serde_json::json!(1);
/// for _ in 0..200_000 {
///     deep = serde_json::Value::Array(vec![deep]);
/// }
/// agentio_schema::limits::dismantle(deep);
/// ```
pub fn dismantle(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Cuts `text` to at most `max_bytes` bytes on a character boundary, then adds `…` when it
/// cut (three bytes more: a clipped text is at most `max_bytes + 3` bytes): how every text that
/// comes from outside (a remote message, a pointer, echoed arguments) is kept to a size a log
/// or a person can take.
///
/// ```
/// let mut text = "é".repeat(10);
/// agentio_schema::limits::clip(&mut text, 5);
/// assert_eq!(text, "éé…");
/// let mut short = String::from("fits");
/// agentio_schema::limits::clip(&mut short, 4);
/// assert_eq!(short, "fits");
/// ```
pub fn clip(text: &mut String, max_bytes: usize) {
    if text.len() > max_bytes {
        let mut cut = max_bytes;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
}

/// A pointer cut to [`MAX_POINTER_BYTES`] (on a character boundary, ending in `…`).
#[doc(hidden)]
pub fn clip_pointer(mut pointer: String) -> String {
    clip(&mut pointer, MAX_POINTER_BYTES);
    pointer
}

/// At most `max_chars` characters of `shown`'s `Display`, ending in `…` when cut. Formatting
/// stops at the bound: a huge value is never written out whole.
#[doc(hidden)]
pub fn bounded_display(shown: &dyn fmt::Display, max_chars: usize) -> String {
    struct Bounded {
        out: String,
        chars: usize,
        max: usize,
        cut: bool,
    }
    impl fmt::Write for Bounded {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for ch in s.chars() {
                if self.chars == self.max {
                    self.cut = true;
                    return Err(fmt::Error);
                }
                self.out.push(ch);
                self.chars += 1;
            }
            Ok(())
        }
    }
    let mut bounded = Bounded {
        out: String::new(),
        chars: 0,
        max: max_chars,
        cut: false,
    };
    let _ = fmt::write(&mut bounded, format_args!("{shown}"));
    if bounded.cut {
        bounded.out.push('…');
    }
    bounded.out
}

/// How many `$ref` hops [`check_expansion`] follows inside one another.
pub const MAX_REFERENCE_HOPS: usize = 32;

/// The base URI jsonschema gives a schema without a `$id` of its own.
const DEFAULT_BASE_URI: &str = "json-schema:///";

/// The draft agent-io validates with.
const DRAFT: referencing::Draft = referencing::Draft::Draft202012;

/// Measures how large `schema` becomes once its references are expanded, in schema nodes, and
/// refuses it past `limit`.
///
/// A schema a few kilobytes long can stand for an exponential one: each definition referring
/// to the next twice doubles the work of checking a value against it (and of every analysis
/// that walks it). This walk weighs each referenced schema once (memoized), so its own cost
/// follows the text; a reference back into a schema being weighed (recursion) counts one node,
/// since recursion is bounded by the value checked, not by the schema.
///
/// References are resolved by the validator's own resolver (jsonschema's `referencing`, Draft
/// 2020-12, nothing fetched), so every reference the validator will follow is weighed: `#/...`
/// pointers however they are percent-encoded (`#/%24defs/a` is `#/$defs/a`), `#name` anchors,
/// and the URIs of resources embedded with a `$id` (`{"$ref": "urn:a"}` and a
/// `{"$id": "urn:a", ...}` anywhere in the document), each inside its resource's base URI.
/// References that resolve to nothing in the document (other documents, which agent-io never
/// fetches, and which the validator then refuses to compile) count one node.
///
/// Run [`check_depth`] first: the walk recurses along the schema's nesting, and refuses
/// chains of more than [`MAX_REFERENCE_HOPS`] references.
///
/// ```
/// use agentio_schema::limits::check_expansion;
/// use serde_json::json;
///
/// let small = json!({ "type": "object", "properties": { "a": { "$ref": "#/$defs/n" } }, "$defs": { "n": { "type": "integer" } } });
/// assert!(check_expansion(&small, 100).is_ok());
///
/// // Thirty definitions, each referring to the next twice: 2^30 nodes once expanded.
/// let mut defs = serde_json::Map::new();
/// for i in 0..30 {
///     let next = json!({ "$ref": format!("#/$defs/d{}", i + 1) });
///     defs.insert(format!("d{i}"), json!({ "anyOf": [next.clone(), next] }));
/// }
/// defs.insert("d30".into(), json!({ "type": "string" }));
/// let bomb = json!({ "$ref": "#/$defs/d0", "$defs": defs });
/// assert!(serde_json::to_string(&bomb).unwrap().len() < 4_000);
/// let err = check_expansion(&bomb, 100_000).unwrap_err();
/// assert_eq!(err.keyword, "expansion");
/// ```
pub fn check_expansion(schema: &Value, limit: usize) -> Result<usize, Violation> {
    let mut walk = Expansion {
        weights: std::collections::HashMap::new(),
        active: Vec::new(),
        limit,
    };
    // A document the validator's resolver cannot index (a `$id` that is not a URI, say) is one
    // the validator cannot compile either: its references are weighed as unresolved.
    let registry = referencing::Registry::new()
        .draft(DRAFT)
        .retrieve_known_draft_meta_schemas(false)
        .add(DEFAULT_BASE_URI, DRAFT.create_resource_ref(schema))
        .and_then(referencing::RegistryBuilder::prepare);
    let base = referencing::uri::from_str(DEFAULT_BASE_URI);
    let resolver = match (&registry, base) {
        (Ok(registry), Ok(base)) => Some(registry.resolver(base)),
        _ => None,
    };
    walk.weigh(schema, resolver.as_ref(), false, 0)
        .map_err(|message| Violation {
            pointer: String::new(),
            keyword: "expansion".into(),
            message,
        })
}

struct Expansion {
    /// The weight of each referenced schema weighed so far, by its address in the document.
    weights: std::collections::HashMap<*const Value, usize>,
    /// The referenced schemas being weighed, innermost last.
    active: Vec<*const Value>,
    limit: usize,
}

impl Expansion {
    /// `node`'s weight; references inside it resolve with `resolver` (`None`: to nothing),
    /// which is already based at `node` when `entered` (a reference's target), and otherwise
    /// enters `node`'s `$id`, as the validator does when it descends into a subschema.
    fn weigh<'r>(
        &mut self,
        node: &'r Value,
        resolver: Option<&referencing::Resolver<'r>>,
        entered: bool,
        levels: usize,
    ) -> Result<usize, String> {
        if levels > MAX_DEPTH {
            return Err(format!("the schema nests deeper than {MAX_DEPTH} levels"));
        }
        let mut total = 1usize;
        match node {
            Value::Object(map) => {
                let inside;
                let resolver = match resolver {
                    Some(outer) if !entered && map.get("$id").is_some_and(Value::is_string) => {
                        inside = outer.in_subresource(DRAFT.create_resource_ref(node)).ok();
                        inside.as_ref()
                    }
                    _ => resolver,
                };
                for key in ["$ref", "$dynamicRef"] {
                    if let Some(Value::String(reference)) = map.get(key) {
                        total = total.saturating_add(self.reference(reference, resolver, levels)?);
                    }
                }
                for child in map.values() {
                    total = total.saturating_add(self.weigh(child, resolver, false, levels + 1)?);
                    self.within(total)?;
                }
            }
            Value::Array(items) => {
                for child in items {
                    total = total.saturating_add(self.weigh(child, resolver, false, levels + 1)?);
                    self.within(total)?;
                }
            }
            _ => return Ok(1),
        }
        self.within(total)?;
        Ok(total)
    }

    fn within(&self, total: usize) -> Result<(), String> {
        if total > self.limit {
            Err(format!(
                "the schema expands to more than {} nodes once its references are followed",
                self.limit
            ))
        } else {
            Ok(())
        }
    }

    fn reference<'r>(
        &mut self,
        reference: &str,
        resolver: Option<&referencing::Resolver<'r>>,
        levels: usize,
    ) -> Result<usize, String> {
        let Some(resolved) = resolver.and_then(|resolver| resolver.lookup(reference).ok()) else {
            return Ok(1);
        };
        let (target, inner, _) = resolved.into_inner();
        let key = std::ptr::from_ref(target);
        if self.active.contains(&key) {
            return Ok(1);
        }
        if let Some(&weight) = self.weights.get(&key) {
            return Ok(weight);
        }
        if self.active.len() >= MAX_REFERENCE_HOPS {
            return Err(format!(
                "the schema chains more than {MAX_REFERENCE_HOPS} references inside one another"
            ));
        }
        self.active.push(key);
        let weight = self.weigh(target, Some(&inner), true, levels + 1);
        self.active.pop();
        let weight = weight?;
        self.weights.insert(key, weight);
        Ok(weight)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expansion_counts_nodes_exactly_and_holds_its_limit_exactly() {
        // The object, and its one value.
        assert_eq!(check_expansion(&json!({ "type": "string" }), 10), Ok(2));
        // The object, the array, its two items.
        let listed = json!({ "enum": [1, 2] });
        assert_eq!(check_expansion(&listed, 4), Ok(4));
        assert_eq!(
            check_expansion(&listed, 3).unwrap_err().keyword,
            "expansion"
        );
        // A reference counts its target's weight beside itself: the root (1), `$ref`'s string
        // (1), the target `{"type": "string"}` (2) through the reference, and `$defs` with
        // its entry (1 + 2).
        let referring = json!({ "$ref": "#/$defs/s", "$defs": { "s": { "type": "string" } } });
        assert_eq!(check_expansion(&referring, 100), Ok(7));
        assert!(check_expansion(&referring, 6).is_err());
    }

    #[test]
    fn an_anchor_anywhere_is_followed_by_its_weight() {
        // The anchored schema sits in an array (`anyOf`); the reference is elsewhere.
        let anchored = json!({
            "anyOf": [{ "$anchor": "name", "type": "string" }],
            "x": { "$ref": "#name" }
        });
        // Root 1; `anyOf` 1 + its object 3; `x` 1 + `$ref`'s string 1 + the anchored 3.
        assert_eq!(check_expansion(&anchored, 100), Ok(10));
        let nested_in_object = json!({
            "properties": { "a": { "$anchor": "name", "type": "string" } },
            "x": { "$ref": "#name" }
        });
        assert_eq!(check_expansion(&nested_in_object, 100), Ok(10));
        // An anchor nobody defines weighs 1, as the reference alone: root 1, `x` 1 + 1 + 1.
        let dangling = json!({ "x": { "$ref": "#nobody" } });
        assert_eq!(check_expansion(&dangling, 100), Ok(4));
    }

    #[test]
    fn a_percent_encoded_reference_is_weighed_as_the_validator_follows_it() {
        // Each definition refers to the next twice, the pointer percent-encoded (`%24` is
        // `$`, `%64` is `d`): the validator follows it, so the bound must, or 30 definitions
        // would pass for 2^30 nodes.
        let spelled = |spell: &dyn Fn(usize) -> String| {
            let mut defs = serde_json::Map::new();
            for i in 0..30 {
                let next = json!({ "$ref": spell(i + 1) });
                defs.insert(format!("d{i}"), json!({ "anyOf": [next.clone(), next] }));
            }
            defs.insert("d30".into(), json!({ "type": "string" }));
            json!({ "$ref": spell(0), "$defs": defs })
        };
        for spell in [
            &(|i| format!("#/%24defs/d{i}")) as &dyn Fn(usize) -> String,
            &|i| format!("#/$defs/%64{i}"),
            // Every digit encoded: `d%31%35` is `d15`.
            &|i| {
                let digits: String = i.to_string().bytes().map(|b| format!("%{b:02X}")).collect();
                format!("#/$defs/d{digits}")
            },
        ] {
            let bomb = spelled(spell);
            let err = check_expansion(&bomb, 100_000).unwrap_err();
            assert_eq!(err.keyword, "expansion", "{bomb}");
        }
        // One definition under two spellings is weighed once: the root 1, `a` and `b` 1 each
        // with their references' strings 1 each, the target 2 through each, `$defs` 1 + 2.
        let both = json!({
            "a": { "$ref": "#/$defs/s" },
            "b": { "$ref": "#/%24defs/s" },
            "$defs": { "s": { "type": "string" } }
        });
        assert_eq!(check_expansion(&both, 100), Ok(12));
        // A reference back into the definition being weighed, in another spelling, is
        // recursion (one node), not a chain: through the root's reference, `r` weighs 1 +
        // `items` (1 + the recursion 1 + its string 1) = 4; under `$defs` its inner reference
        // is no longer recursion and weighs `r`'s 4, so `r` there is 1 + (1 + 4 + 1) = 7. The
        // root: 1 + 4 + its `$ref` string 1 + `$defs` (1 + 7).
        let recursive = json!({
            "$ref": "#/$defs/r",
            "$defs": { "r": { "items": { "$ref": "#/%24defs/r" } } }
        });
        assert_eq!(check_expansion(&recursive, 100), Ok(14));
        // A pointer that decodes to bytes that are not text, or that names nothing, weighs 1.
        let dangling = json!({ "x": { "$ref": "#/%ff" }, "y": { "$ref": "#/%24defs/none" } });
        assert_eq!(check_expansion(&dangling, 100), Ok(7));
    }

    /// Thirty schemas, each referring to the next twice through `next(i + 1)`; schema `i`
    /// is `defs(i)` under `$defs`: 2^30 nodes once expanded.
    fn doubling(name: impl Fn(usize) -> Value, next: impl Fn(usize) -> String) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..=30 {
            let mut schema = if i == 30 {
                json!({ "type": "string" })
            } else {
                let next = json!({ "$ref": next(i + 1) });
                json!({ "anyOf": [next.clone(), next] })
            };
            if let (Value::Object(schema), Value::Object(named)) = (&mut schema, name(i)) {
                schema.extend(named);
            }
            defs.insert(format!("d{i}"), schema);
        }
        json!({ "$ref": next(0), "$defs": defs })
    }

    #[test]
    fn a_resource_embedded_with_an_id_is_weighed_where_the_validator_finds_it() {
        // Each schema a resource of its own, referred to by its URI: absolute, relative to the
        // document's base, or a fragment of one.
        let bombs = [
            doubling(
                |i| json!({ "$id": format!("urn:d{i}") }),
                |i| format!("urn:d{i}"),
            ),
            doubling(
                |i| json!({ "$id": format!("d{i}.json") }),
                |i| format!("d{i}.json"),
            ),
            doubling(
                |i| json!({ "$id": format!("https://example.com/d{i}") }),
                |i| format!("https://example.com/d{i}#"),
            ),
            // Anchors, as a second way in.
            doubling(
                |i| json!({ "$anchor": format!("d{i}") }),
                |i| format!("#d{i}"),
            ),
        ];
        for bomb in &bombs {
            let err = check_expansion(bomb, 100_000).unwrap_err();
            assert_eq!(err.keyword, "expansion", "{bomb}");
            // The validator follows these references: a string is valid, a number is not.
            let validator = jsonschema::draft202012::new(bomb).unwrap();
            assert!(validator.is_valid(&json!("x")), "{bomb}");
        }
        // Inside a resource, `#/...` is that resource's pointer, not the document's.
        let two_bases = json!({
            "$defs": {
                "x": { "type": "string" },
                "r": {
                    "$id": "urn:r",
                    "$ref": "#/$defs/x",
                    "$defs": { "x": { "enum": ["a", "b"] } }
                }
            },
            "$ref": "urn:r"
        });
        // `r`'s own `x` (1 + the array 1 + two strings 2 = 4) is what its `$ref` weighs; the
        // root's `x` ({"type": "string"}, 2) would make this 4 less (2 less in `r`, twice).
        // `r` = 1 + its reference 4 + `$id` 1 + `$ref` 1 + `$defs` (1 + 4) = 12; the root =
        // 1 + its reference 12 + its `$ref` 1 + `$defs` (1 + x 2 + r 12) = 29.
        assert_eq!(check_expansion(&two_bases, 1_000), Ok(29));
        // A document, or a resource in it, naming a meta-schema of its own, which nothing
        // here fetches: the validator compiles it all the same (Draft 2020-12 is set), so the
        // bound must hold too.
        let mut with_meta = bombs[0].clone();
        with_meta["$schema"] = json!("https://example.com/meta");
        let mut inner_meta = bombs[0].clone();
        inner_meta["$defs"]["d0"]["$schema"] = json!("https://example.com/meta");
        for bomb in [with_meta, inner_meta] {
            assert!(jsonschema::draft202012::new(&bomb).is_ok(), "{bomb}");
            assert_eq!(
                check_expansion(&bomb, 100_000).unwrap_err().keyword,
                "expansion"
            );
        }
        // A reference's target is already in its resource: its own relative `$id` is not
        // applied again (`dir/r.json` against `json-schema:///dir/r.json` would be
        // `dir/dir/r.json`, and its `x.json` the decoy `y`, not `x`).
        let relative = json!({
            "$defs": {
                "r": { "$id": "dir/r.json", "$ref": "x.json" },
                "x": { "$id": "dir/x.json", "enum": [1, 2, 3] },
                "y": { "$id": "dir/dir/x.json", "type": "string" }
            },
            "$ref": "dir/r.json"
        });
        let validator = jsonschema::draft202012::new(&relative).unwrap();
        assert!(validator.is_valid(&json!(1)) && !validator.is_valid(&json!("s")));
        // `x` = 1 + `$id` 1 + `enum` (1 + 3) = 6, `y` = 3; `r` = 1 + x 6 + `$id` 1 +
        // `$ref` 1 = 9 through either way in. The root = 1 + r 9 + its `$ref` 1 + `$defs`
        // (1 + 9 + 6 + 3) = 30; the decoy in place of `x` would make it 27.
        assert_eq!(check_expansion(&relative, 1_000), Ok(30));
        // A reference to a document that is not there weighs 1, as does one in a document
        // the resolver cannot index (a `$id` that is no URI reference): the validator
        // compiles neither.
        let elsewhere =
            json!({ "properties": { "x": { "$ref": "https://example.com/other.json" } } });
        assert_eq!(check_expansion(&elsewhere, 100), Ok(5));
        assert!(jsonschema::draft202012::new(&elsewhere).is_err());
        let unindexed = json!({
            "$id": "http://[::1",
            "properties": { "x": { "$ref": "#/$defs/a" } },
            "$defs": { "a": { "type": "string" } }
        });
        assert!(jsonschema::draft202012::new(&unindexed).is_err());
        // 1 + `$id` 1 + properties (1 + x 3: its reference weighs 1) + `$defs` (1 + 2); a
        // followed reference would make `x` 4.
        assert_eq!(check_expansion(&unindexed, 100), Ok(9));
    }

    #[test]
    fn a_reference_counts_one_level_of_nesting() {
        // `d` nests 100 levels; the reference to it sits k arrays deep: 102 + k levels in all.
        let schema = |k: usize| {
            let mut deep = json!(1);
            for _ in 0..100 {
                deep = json!([deep]);
            }
            let mut reference = json!({ "$ref": "#/$defs/d" });
            for _ in 0..k {
                reference = json!([reference]);
            }
            json!({ "$defs": { "d": deep }, "x": reference })
        };
        assert!(check_expansion(&schema(MAX_DEPTH - 102), usize::MAX).is_ok());
        let err = check_expansion(&schema(MAX_DEPTH - 101), usize::MAX).unwrap_err();
        assert!(err.message.contains("nests deeper"), "{}", err.message);
    }

    #[test]
    fn references_inside_references_are_bounded() {
        // A chain of distinct references, each target referring to the next.
        let chain = |hops: usize| {
            let mut defs = serde_json::Map::new();
            for i in 0..hops {
                defs.insert(
                    format!("d{i}"),
                    json!({ "$ref": format!("#/$defs/d{}", i + 1) }),
                );
            }
            defs.insert(format!("d{hops}"), json!({ "type": "string" }));
            json!({ "$ref": "#/$defs/d0", "$defs": defs })
        };
        assert!(check_expansion(&chain(MAX_REFERENCE_HOPS - 1), usize::MAX).is_ok());
        let err = check_expansion(&chain(MAX_REFERENCE_HOPS + 1), usize::MAX).unwrap_err();
        assert!(err.message.contains("chains more than"), "{}", err.message);
    }

    #[test]
    fn expansion_refuses_nesting_past_the_depth_limit_exactly() {
        let nested = |levels: usize| {
            let mut value = json!(1);
            for _ in 0..levels {
                value = json!([value]);
            }
            value
        };
        assert!(check_expansion(&nested(MAX_DEPTH), usize::MAX).is_ok());
        let err = check_expansion(&nested(MAX_DEPTH + 1), usize::MAX).unwrap_err();
        assert!(err.message.contains("nests deeper"), "{}", err.message);
    }

    /// Above 256 levels the check does not recurse (a host may allow deep values): a value
    /// nested 100,000 deep under a limit of a million is walked without recursion, on a
    /// thread whose stack a recursive walk of it would overflow.
    #[test]
    fn a_limit_above_256_levels_is_checked_without_recursion() {
        let checked = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let mut deep = json!(1);
                for _ in 0..100_000 {
                    deep = Value::Array(vec![deep]);
                }
                let within = check_depth(&deep, 1_000_000).is_ok();
                let refused = check_depth(&deep, 99_999).map_err(|v| v.keyword);
                dismantle(deep);
                (within, refused)
            })
            .expect("a thread")
            .join()
            .expect("no stack overflow");
        assert_eq!(checked, (true, Err("depth".to_owned())));
        // 256 and 257: each side of the guard answers the same.
        let mut at = json!(1);
        for _ in 0..257 {
            at = Value::Array(vec![at]);
        }
        assert!(check_depth(&at, 257).is_ok());
        assert!(check_depth(&at, 256).is_err());
        dismantle(at);
    }

    #[test]
    fn depth_is_measured_exactly() {
        assert!(check_depth(&json!(1), 0).is_ok());
        assert_eq!(check_depth(&json!([]), 0).unwrap_err().pointer, "");
        assert!(check_depth(&json!({}), 1).is_ok());
        assert!(check_depth(&json!([1]), 1).is_ok());
        assert!(check_depth(&json!([1, "x", null]), 1).is_ok());
        assert_eq!(
            check_depth(&json!([1, [], {}]), 1).unwrap_err().pointer,
            "/1"
        );
        assert_eq!(
            check_depth(&json!([1, 2, {}]), 1).unwrap_err().pointer,
            "/2"
        );
        assert_eq!(
            check_depth(&json!({ "a": { "b/c": [1] }, "z": 1 }), 2)
                .unwrap_err()
                .pointer,
            "/a/b~1c"
        );
        assert!(check_depth(&json!({ "a": { "b": [1] }, "z": 1 }), 3).is_ok());
    }

    #[test]
    fn both_walks_agree_above_and_below_the_recursive_bound() {
        let mut deep = json!(1);
        for _ in 0..300 {
            deep = Value::Array(vec![deep]);
        }
        // Above the bound the walk is iterative only; below it, recursive first.
        assert!(check_depth(&deep, 300).is_ok());
        assert!(check_depth(&deep, 1_000).is_ok());
        let err = check_depth(&deep, 299).unwrap_err();
        assert!(err.pointer.starts_with("/0/0") && err.pointer.ends_with('…'));
        let err = check_depth(&deep, 128).unwrap_err();
        assert_eq!(err.pointer, "/0".repeat(128));
        assert!(check_depth(&json!({ "a": [1, { "b": 2 }] }), 3).is_ok());
        assert!(check_depth(&json!({ "a": [1, { "b": 2 }] }), 2).is_err());
    }

    #[test]
    fn long_pointers_and_displays_are_cut() {
        let pointer = clip_pointer(format!("/{}", "é".repeat(600)));
        assert!(pointer.len() <= MAX_POINTER_BYTES + '…'.len_utf8());
        assert!(pointer.ends_with('…'));
        assert_eq!(clip_pointer("/a".into()), "/a");
        // Exactly at the bound a pointer is kept whole; one byte more and it is cut.
        let at_bound = format!("/{}", "p".repeat(MAX_POINTER_BYTES - 1));
        assert_eq!(clip_pointer(at_bound.clone()), at_bound);
        let over = format!("{at_bound}p");
        assert_eq!(clip_pointer(over), format!("{at_bound}…"));
        assert_eq!(bounded_display(&"abcdef", 3), "abc…");
        assert_eq!(bounded_display(&"abc", 3), "abc");
    }
}
