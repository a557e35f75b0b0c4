//! Alternatives and types: unions on either side, and the type-by-type comparison that hands
//! each type to its concern.

use serde_json::{Map, Value};

use super::checker::*;
use super::numbers::{Numbers, exact};
use crate::types::{ALL, ARRAY, FRACTION, INTEGER, OBJECT, STRING, Types, type_name};

impl<'a> Checker<'a> {
    pub(super) fn check_alternatives(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        key: &str,
        branches: &'a [Value],
        depth: usize,
        level: usize,
    ) -> Outcome {
        let Some(c_map) = c.map() else {
            return unknown(&p, &c, "malformed consumer");
        };
        let rest = without(c_map, &[key]);
        if constraints(&rest).next().is_some() {
            // `{"type": ..., "anyOf": [...]}`: both must hold.
            match self.check(p.clone(), built(self.arena, &c, rest), depth + 1, level) {
                Outcome::Ok => {}
                other => return other,
            }
        }
        // For `oneOf` the value must match exactly one branch: the branches must be disjoint
        // (by type, or by a constant property) for "one includes it" to be enough.
        if key == "oneOf" && !pairwise_disjoint(branches) {
            return unknown(&p, &c, "the consumer's `oneOf` branches may overlap");
        }
        let mut first_fail = None;
        let mut first_unknown = None;
        for (i, branch) in branches.iter().enumerate() {
            let branch = c.child(branch, &[key, &i.to_string()]);
            match self.check(p.clone(), branch, depth + 1, level) {
                Outcome::Ok => return Outcome::Ok,
                Outcome::Fail(local) => {
                    first_fail.get_or_insert(local);
                }
                Outcome::Unknown(u) => {
                    first_unknown.get_or_insert(u);
                }
            }
        }
        // Several branches may cover the producer together: split it by type, which schemars'
        // alternatives (`Option<T>`: T or null) almost always separate.
        if let Some(p_map) = p.map() {
            let types = Types::of_schema(p_map).unwrap_or(ALL);
            if types.count_ones() > 1 {
                let mut all_ok = true;
                for t in split(types) {
                    let narrowed = built(self.arena, &p, with_type(p_map, t));
                    match self.check(narrowed, c.clone(), depth + 1, level) {
                        Outcome::Ok => {}
                        Outcome::Fail(local) => return Outcome::Fail(local),
                        Outcome::Unknown(u) => {
                            first_unknown.get_or_insert(u);
                            all_ok = false;
                        }
                    }
                }
                if all_ok {
                    return Outcome::Ok;
                }
            }
        }
        if let Some(mut local) = first_fail {
            // Reported only if the final check confirms the consumer refuses it as a whole.
            local.reason = format!(
                "no branch of the consumer's `{key}` accepts it: {}",
                local.reason
            );
            return Outcome::Fail(local);
        }
        match first_unknown {
            Some(u) => Outcome::Unknown(u),
            None => unknown(&p, &c, "the consumer's alternatives are empty"),
        }
    }

    pub(super) fn check_simple(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        p_map: &'a Map<String, Value>,
        c_map: &'a Map<String, Value>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        if let Some((k, _)) = constraints(c_map).find(|(k, _)| !UNDERSTOOD.contains(&k.as_str())) {
            return unknown(
                &p,
                &c,
                format!("the consumer's `{k}` is not reasoned about"),
            );
        }
        if let Some(problem) = malformed(c_map) {
            return unknown(&p, &c, format!("the consumer's {problem}"));
        }
        let (Some(p_types), Some(c_types)) = (Types::of_schema(p_map), Types::of_schema(c_map))
        else {
            return unknown(&p, &c, "a malformed `type`");
        };
        if let Some(Value::Array(values)) = c_map.get("enum") {
            return self.against_finite(&p, &c, values);
        }
        if let Some(value) = c_map.get("const") {
            return self.against_finite(&p, &c, std::slice::from_ref(value));
        }
        let mut undecided = None;
        for t in split(p_types) {
            // A numeric type whose range holds no number of it: the producer allows none.
            if matches!(t, INTEGER | FRACTION) && exact(p_map) && Numbers::of(p_map, t).is_empty() {
                continue;
            }
            if c_types & t == 0 {
                let reason = format!(
                    "the producer allows a {}, the consumer does not",
                    type_name(t)
                );
                return match self.example_typed(&p, Some(t), depth) {
                    Some(v) => fail(&p, &c, v, reason),
                    // The producer may allow no value of that type at all (empty bounds).
                    None => unknown(&p, &c, reason),
                };
            }
            let outcome = match t {
                INTEGER | FRACTION => self.numbers(&p, &c, p_map, c_map, t),
                STRING => self.strings(&p, &c, p_map, c_map),
                ARRAY => self.arrays(&p, &c, p_map, c_map, depth, level),
                OBJECT => self.objects(&p, &c, p_map, c_map, depth, level),
                _ => Outcome::Ok,
            };
            match outcome {
                Outcome::Ok => {}
                // A type left undecided does not hide a later type's witness.
                Outcome::Unknown(_) => {
                    undecided.get_or_insert(outcome);
                }
                Outcome::Fail(_) => return outcome,
            }
        }
        undecided.unwrap_or(Outcome::Ok)
    }

    /// An infinite producer against a finite consumer: find a producer value it lacks.
    pub(super) fn against_finite(
        &mut self,
        p: &Node<'a>,
        c: &Node<'a>,
        values: &[Value],
    ) -> Outcome {
        let Some(p_map) = p.map() else {
            return unknown(p, c, "malformed producer");
        };
        for candidate in candidates(p_map) {
            if !values.contains(&candidate)
                && self.valid(Side::Producer, p, &candidate) == Some(true)
            {
                return fail(p, c, candidate, "the consumer allows only some values");
            }
        }
        unknown(
            p,
            c,
            "the consumer allows only some values, and the producer does not list its own",
        )
    }
}
