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

/// Cuts `text` to at most `max_bytes` bytes on a character boundary, ending in `…` when cut:
/// how every text that comes from outside (a remote message, a pointer, echoed arguments) is
/// kept to a size a log or a person can take.
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
