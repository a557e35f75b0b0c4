//! Arrays: `items`, `prefixItems`, lengths and `uniqueItems`.

use serde_json::{Map, Value};

use super::checker::*;

impl<'a> Checker<'a> {
    pub(super) fn arrays(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        let count = |map: &Map<String, Value>, k: &str| map.get(k).and_then(Value::as_u64);
        let (p_min, p_max) = (
            count(p_map, "minItems").unwrap_or(0),
            count(p_map, "maxItems"),
        );
        let (c_min, c_max) = (
            count(c_map, "minItems").unwrap_or(0),
            count(c_map, "maxItems"),
        );
        let p_prefix: &'a [Value] = p_map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        let c_prefix: &'a [Value] = c_map
            .get("prefixItems")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice);
        // The producer's longest array, when bounded.
        let p_len_max = match (p_max, p_map.get("items")) {
            (Some(m), Some(Value::Bool(false))) => Some(m.min(p_prefix.len() as u64)),
            (Some(m), _) => Some(m),
            (None, Some(Value::Bool(false))) => Some(p_prefix.len() as u64),
            _ => None,
        };
        let counts_ok =
            p_min >= c_min && c_max.is_none_or(|cm| p_len_max.is_some_and(|pm| pm <= cm));
        if !counts_ok {
            let mut lengths = vec![p_min];
            lengths.extend(c_min.checked_sub(1));
            lengths.extend(c_max.map(|m| m + 1));
            for n in lengths {
                if n > 64 || n < p_min || p_len_max.is_some_and(|pm| n > pm) {
                    continue;
                }
                if let Some(v) = self.array_example(p, p_map, p_prefix, n as usize, None, depth)
                    && self.valid(Side::Consumer, c, &v) == Some(false)
                {
                    return fail(
                        p,
                        c,
                        v,
                        "the producer allows more or fewer items than the consumer",
                    );
                }
            }
            return unknown(p, c, "item counts differ and no value showing it was found");
        }
        // Positions: each producer item that can exist must fit the consumer's schema there.
        let positions = p_prefix.len().max(c_prefix.len());
        for i in 0..=positions {
            if p_len_max.is_some_and(|m| (i as u64) >= m) {
                break;
            }
            let p_i = match p_prefix.get(i) {
                Some(s) => p.child(s, &["prefixItems", &i.to_string()]),
                None => p.child(p_map.get("items").unwrap_or(&TRUE), &["items"]),
            };
            let c_i = match c_prefix.get(i) {
                Some(s) => c.child(s, &["prefixItems", &i.to_string()]),
                None => c.child(c_map.get("items").unwrap_or(&TRUE), &["items"]),
            };
            match self.check(p_i, c_i, depth + 1, level + 1) {
                Outcome::Ok => {}
                Outcome::Fail(mut local) => {
                    let len = (i + 1).max(p_min as usize);
                    let at = Some((i, local.value.clone()));
                    return match self.array_example(p, p_map, p_prefix, len, at, depth) {
                        Some(v) => {
                            local.value = v;
                            Outcome::Fail(local)
                        }
                        None => unknown(
                            p,
                            c,
                            "an item differs, but no array around it could be built",
                        ),
                    };
                }
                other => return other,
            }
        }
        if c_map.get("uniqueItems") == Some(&Value::Bool(true))
            && p_map.get("uniqueItems") != Some(&Value::Bool(true))
            && p_len_max.is_none_or(|m| m >= 2)
        {
            let len = 2.max(p_min as usize);
            if let Some(Value::Array(items)) =
                self.array_example(p, p_map, p_prefix, len, None, depth)
                && let Some(first) = items.first()
            {
                let dup = Value::Array(vec![first.clone(); len]);
                return fail(
                    p,
                    c,
                    dup,
                    "the consumer requires unique items, the producer does not",
                );
            }
            return unknown(
                p,
                c,
                "the consumer requires unique items, the producer does not",
            );
        }
        Outcome::Ok
    }
}
