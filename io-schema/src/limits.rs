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

/// Measures how large `schema` becomes once its local references (`#/...` pointers and
/// `#name` anchors) are expanded, in schema nodes, and refuses it past `limit`.
///
/// A schema a few kilobytes long can stand for an exponential one: each definition referring
/// to the next twice doubles the work of checking a value against it (and of every analysis
/// that walks it). This walk weighs each referenced definition once (memoized), so its own
/// cost follows the text; a reference back into a definition being weighed (recursion) counts
/// one node, since recursion is bounded by the value checked, not by the schema. References
/// elsewhere (other documents, which agent-io never fetches) count one node.
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
        root: schema,
        anchors: None,
        weights: std::collections::HashMap::new(),
        active: Vec::new(),
        limit,
    };
    walk.weigh(schema, 0).map_err(|message| Violation {
        pointer: String::new(),
        keyword: "expansion".into(),
        message,
    })
}

struct Expansion<'a> {
    root: &'a Value,
    /// `$anchor` name -> its schema, collected on the first anchor reference.
    anchors: Option<std::collections::HashMap<&'a str, &'a Value>>,
    /// The weight of each reference target weighed so far.
    weights: std::collections::HashMap<&'a str, usize>,
    /// The references being weighed, innermost last.
    active: Vec<&'a str>,
    limit: usize,
}

impl<'a> Expansion<'a> {
    fn weigh(&mut self, node: &'a Value, levels: usize) -> Result<usize, String> {
        if levels > MAX_DEPTH {
            return Err(format!("the schema nests deeper than {MAX_DEPTH} levels"));
        }
        let mut total = 1usize;
        let children: Box<dyn Iterator<Item = &'a Value>> = match node {
            Value::Object(map) => {
                for key in ["$ref", "$dynamicRef"] {
                    if let Some(Value::String(reference)) = map.get(key) {
                        total = total.saturating_add(self.reference(reference, levels)?);
                    }
                }
                Box::new(map.values())
            }
            Value::Array(items) => Box::new(items.iter()),
            _ => return Ok(1),
        };
        for child in children {
            total = total.saturating_add(self.weigh(child, levels + 1)?);
            self.within(total)?;
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

    fn reference(&mut self, reference: &'a str, levels: usize) -> Result<usize, String> {
        let Some(fragment) = reference.strip_prefix('#') else {
            return Ok(1);
        };
        if self.active.contains(&fragment) {
            return Ok(1);
        }
        if let Some(&weight) = self.weights.get(fragment) {
            return Ok(weight);
        }
        let target = if fragment.is_empty() || fragment.starts_with('/') {
            self.root.pointer(fragment)
        } else {
            self.anchor(fragment)
        };
        let Some(target) = target else {
            return Ok(1);
        };
        if self.active.len() >= MAX_REFERENCE_HOPS {
            return Err(format!(
                "the schema chains more than {MAX_REFERENCE_HOPS} references inside one another"
            ));
        }
        self.active.push(fragment);
        let weight = self.weigh(target, levels + 1);
        self.active.pop();
        let weight = weight?;
        self.weights.insert(fragment, weight);
        Ok(weight)
    }

    fn anchor(&mut self, name: &str) -> Option<&'a Value> {
        let root = self.root;
        let anchors = self.anchors.get_or_insert_with(|| {
            let mut anchors = std::collections::HashMap::new();
            let mut stack = vec![root];
            while let Some(node) = stack.pop() {
                match node {
                    Value::Object(map) => {
                        if let Some(Value::String(anchor)) = map.get("$anchor") {
                            anchors.entry(anchor.as_str()).or_insert(node);
                        }
                        stack.extend(map.values());
                    }
                    Value::Array(items) => stack.extend(items),
                    _ => {}
                }
            }
            anchors
        });
        anchors.get(name).copied()
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
