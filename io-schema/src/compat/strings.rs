//! Strings: lengths, `pattern` and `format`.

use serde_json::{Map, Value};

use super::checker::*;

impl<'a> Checker<'a> {
    pub(super) fn strings(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &Map<String, Value>,
        c_map: &Map<String, Value>,
    ) -> Outcome {
        let len = |map: &Map<String, Value>, k: &str| map.get(k).and_then(Value::as_u64);
        let (p_min, p_max) = (
            len(p_map, "minLength").unwrap_or(0),
            len(p_map, "maxLength"),
        );
        let (c_min, c_max) = (
            len(c_map, "minLength").unwrap_or(0),
            len(c_map, "maxLength"),
        );
        let lengths_ok = p_min >= c_min
            && match (p_max, c_max) {
                (_, None) => true,
                (Some(p), Some(c)) => p <= c,
                (None, Some(_)) => false,
            };
        let same = |k: &str| match (p_map.get(k), c_map.get(k)) {
            (_, None) => true,
            (Some(a), Some(b)) => a == b,
            (None, Some(_)) => false,
        };
        let (pattern_ok, format_ok) = (same("pattern"), same("format"));
        if lengths_ok && pattern_ok && format_ok {
            return Outcome::Ok;
        }
        let mut tries: Vec<String> = Vec::new();
        for n in [
            Some(p_min),
            c_min.checked_sub(1),
            c_max.map(|m| m + 1),
            p_max,
        ] {
            if let Some(n) = n.filter(|n| *n <= 4096) {
                tries.push("a".repeat(n as usize));
            }
        }
        for s in [
            "",
            "a",
            "A",
            "0",
            " ",
            "-",
            "é",
            "a b",
            "example",
            "x@y",
            "1970-01-01",
        ] {
            tries.push(s.to_owned());
        }
        for s in tries {
            let v = Value::String(s);
            if self.valid(Side::Producer, p, &v) == Some(true)
                && self.valid(Side::Consumer, c, &v) == Some(false)
            {
                let why = if !lengths_ok {
                    "the producer allows strings of lengths the consumer refuses"
                } else if !pattern_ok {
                    "the consumer's `pattern` is not the producer's"
                } else {
                    "the consumer's `format` is not the producer's"
                };
                return fail(p, c, v, why);
            }
        }
        let why = if !pattern_ok {
            "the consumer has a `pattern` the producer does not share"
        } else if !format_ok {
            "the consumer has a `format` the producer does not share"
        } else {
            "string lengths differ and no value showing it was found"
        };
        unknown(p, c, why)
    }
}
