//! Schema inclusion: can every value one schema allows be given to another?
//!
//! [`schema_compatible`] answers for a producer's output schema and a consumer's input schema
//! with one of three answers:
//!
//! - [`Compatibility::Compatible`]: proven: every instance of the producer is valid for the
//!   consumer. The check is **sound**: it never says so when a counter-example exists.
//! - [`Compatibility::Incompatible`]: with a [`Counterexample`]: a concrete JSON value that the
//!   producer's schema accepts and the consumer's refuses (both checked by the real validator
//!   before it is reported), and the pointers on both sides where they part.
//! - [`Compatibility::Unknown`]: what stopped the proof (a consumer `pattern` the producer does
//!   not share, a keyword the checker does not reason about, a budget).
//!
//! # How
//!
//! Structural rules over what schemars emits, in the manner of `jsonsubschema` (Habib et al.,
//! ISSTA 2021): `type` sets (`integer` ⊂ `number`), numeric bounds (inclusive and exclusive,
//! `multipleOf`), string lengths, `pattern` and `format` (equal, or absent on the consumer),
//! `enum` / `const` (each producer value is checked for membership), arrays (`items`,
//! `prefixItems`, `minItems`, `maxItems`, `uniqueItems`), objects (`properties`, `required`,
//! `additionalProperties`), `anyOf` / `oneOf` / `allOf`, `$ref` / `$defs` including recursive
//! types (a pair of references already being compared is assumed included, which is sound for
//! inclusion of recursive types), and boolean schemas.
//!
//! Numeric constraints alone (a numeric type with `minimum`, `maximum`, the exclusive ones and
//! `multipleOf`, all below 2^53) are decided exactly: compatible, or incompatible with a
//! witness, never unknown, with one exception the validator forces: past 2^53 it rounds a
//! number to `f64` before dividing it by a fractional (or larger than 2^53) `multipleOf`, so a
//! producer whose numbers reach past 2^53 is proven against such a `multipleOf` only number by
//! number (a bounded few), and is otherwise unknown. Which numbers are multiples is the validator's own answer (it reads
//! numbers as their shortest decimals, so `0.3` is a multiple of `0.1`), and the multiples tried
//! are made on those decimals. A producer holding at most 256 multiples is
//! checked number by number; a larger one is compatible when its range lies within the
//! consumer's and the consumer's `multipleOf` divides its step (its `multipleOf`, or for integers
//! the least integer multiple of it), and otherwise has a refused number near one of the ends
//! or zero, which is searched for and reported.
//!
//! Two principles keep it sound. A keyword the checker does not reason about is ignored on the
//! producer side only when it can only *narrow* the producer (`not`, `if`, `propertyNames`, ...),
//! since a wider producer proven included is still included; on the consumer side, or when it
//! would widen the producer (`patternProperties`), the answer is unknown. And a witness is
//! reported only after the producer's and the consumer's validators agree on it; a candidate that
//! fails that check turns the answer into unknown, never into a wrong "incompatible".
//!
//! ```
//! use agentio_core::compat::{Compatibility, schema_compatible};
//! use serde_json::json;
//!
//! let produced = json!({ "type": "object", "properties": { "n": { "type": "integer", "minimum": 1, "maximum": 10 } }, "required": ["n"] });
//! let wider = json!({ "type": "object", "properties": { "n": { "type": "number", "maximum": 100 } }, "required": ["n"] });
//! assert!(schema_compatible(&produced, &wider).is_compatible());
//!
//! let Compatibility::Incompatible(why) = schema_compatible(&wider, &produced) else { panic!() };
//! assert_eq!(why.consumer_pointer, "/properties/n");
//! // The witness is a real value: the producer accepts it and the consumer refuses it.
//! assert!(why.witness.is_object());
//! ```

mod alternatives;
mod answer;
mod arrays;
mod checker;
mod membership;
mod numbers;
mod objects;
mod references;
mod strings;
#[cfg(test)]
mod tests;
mod witness;

use std::collections::HashMap;

use serde_json::{Map, Value};

pub use answer::{Compatibility, Counterexample, Undecided};
pub use checker::same_instance;
use checker::*;
#[doc(hidden)]
pub use references::keep_root_refs;
pub use references::schema_at;

/// Whether every instance of `producer` is valid for `consumer` (both Draft 2020-12 schema
/// documents; `$ref`s resolve within each document). See the [module](self) documentation.
pub fn schema_compatible(producer: &Value, consumer: &Value) -> Compatibility {
    let arena = typed_arena::Arena::new();
    let mut checker = Checker {
        arena: &arena,
        p_root: producer,
        c_root: consumer,
        assumed: HashMap::new(),
        steps: 0,
        validators: HashMap::new(),
    };
    match checker.check(Node::root(producer), Node::root(consumer), 0, 0) {
        Outcome::Ok => Compatibility::Compatible,
        Outcome::Unknown(u) => Compatibility::Unknown(u),
        Outcome::Fail(local) => {
            // The local witness sits at `local.at` in the producer; the parents built the
            // whole document around it. Report it only if both validators agree.
            let witness = local.value;
            let producer_ok = checker.valid(Side::Producer, &Node::root(producer), &witness);
            let consumer_ok = checker.valid(Side::Consumer, &Node::root(consumer), &witness);
            if producer_ok == Some(true) && consumer_ok == Some(false) {
                Compatibility::Incompatible(Counterexample {
                    witness,
                    producer_pointer: local.p_ptr,
                    consumer_pointer: local.c_ptr,
                    reason: local.reason,
                })
            } else {
                Compatibility::Unknown(Undecided {
                    producer_pointer: local.p_ptr,
                    consumer_pointer: local.c_ptr,
                    reason: format!(
                        "{}, but no value showing it was confirmed by both validators",
                        local.reason
                    ),
                })
            }
        }
    }
}

impl<'a> Checker<'a> {
    /// Whether every value of `p` (at value depth `level`) is valid for `c`.
    pub(super) fn check(
        &mut self,
        p: Node<'a>,
        c: Node<'a>,
        depth: usize,
        level: usize,
    ) -> Outcome {
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > MAX_DEPTH {
            return unknown(&p, &c, "the schemas are too large or too deep to compare");
        }
        // Boolean schemas and the trivial consumer.
        if p.schema == &Value::Bool(false) || is_true(c.schema) {
            return Outcome::Ok;
        }
        if c.schema == &Value::Bool(false) {
            return match self.example(&p, depth) {
                Some(v) => fail(&p, &c, v, "the consumer accepts nothing here"),
                None => unknown(&p, &c, "the consumer accepts nothing here"),
            };
        }
        if p.schema == &Value::Bool(true) {
            return self.check(built(self.arena, &p, Map::new()), c, depth + 1, level);
        }
        let (Some(p_map), Some(c_map)) = (p.map(), c.map()) else {
            return unknown(&p, &c, "a schema is neither an object nor a boolean");
        };
        for (side, map) in [("producer", p_map), ("consumer", c_map)] {
            if let Some(k) = map.keys().find(|k| OPAQUE.contains(&k.as_str())) {
                return unknown(&p, &c, format!("the {side}'s `{k}` is not reasoned about"));
            }
        }

        // References: a pair already being compared at a shallower value is assumed included
        // (guarded recursion); at the same value it would be circular, and is not assumed.
        if p_map.contains_key("$ref") || c_map.contains_key("$ref") {
            let pair = (p.identity(), c.identity());
            match self.assumed.get(&pair) {
                Some(at) if *at < level => return Outcome::Ok,
                Some(_) => {
                    return unknown(
                        &p,
                        &c,
                        "a reference refers to itself without consuming any value",
                    );
                }
                None => {}
            }
            self.assumed.insert(pair.clone(), level);
            let outcome = self.check_refs(p, c, p_map, c_map, depth, level);
            self.assumed.remove(&pair);
            return outcome;
        }
        // A consumer conjunction: every part must hold.
        if let Some(Value::Array(all)) = c_map.get("allOf") {
            let rest = without(c_map, &["allOf"]);
            let mut parts: Vec<Node<'a>> = all
                .iter()
                .enumerate()
                .map(|(i, s)| c.child(s, &["allOf", &i.to_string()]))
                .collect();
            parts.push(built(self.arena, &c, rest));
            for part in parts {
                match self.check(p.clone(), part, depth + 1, level) {
                    Outcome::Ok => {}
                    other => return other,
                }
            }
            return Outcome::Ok;
        }
        // A producer conjunction is included if any of its parts is.
        if let Some(Value::Array(all)) = p_map.get("allOf") {
            let rest = built(self.arena, &p, without(p_map, &["allOf"]));
            let mut first_unknown = None;
            for part in std::iter::once(rest).chain(
                all.iter()
                    .enumerate()
                    .map(|(i, s)| p.child(s, &["allOf", &i.to_string()])),
            ) {
                match self.check(part, c.clone(), depth + 1, level) {
                    Outcome::Ok => return Outcome::Ok,
                    Outcome::Unknown(u) => {
                        first_unknown.get_or_insert(u);
                    }
                    // A part's witness may break another part: not reported.
                    Outcome::Fail(_) => {}
                }
            }
            return Outcome::Unknown(first_unknown.unwrap_or_else(|| Undecided {
                producer_pointer: p.ptr.clone(),
                consumer_pointer: c.ptr.clone(),
                reason: "no part of the producer's `allOf` is included on its own".into(),
            }));
        }
        // Producer alternatives: each must be included.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = p_map.get(key) {
                let rest = without(p_map, &[key]);
                for (i, branch) in branches.iter().enumerate() {
                    let branch = p.child(branch, &[key, &i.to_string()]);
                    let narrowed = if constraints(&rest).next().is_none() {
                        branch
                    } else {
                        built(self.arena, &branch, merge(&rest, branch.schema))
                    };
                    match self.check(narrowed, c.clone(), depth + 1, level) {
                        Outcome::Ok => {}
                        Outcome::Fail(mut local) => {
                            local.reason =
                                format!("in the producer's `{key}` branch {i}: {}", local.reason);
                            return Outcome::Fail(local);
                        }
                        other => return other,
                    }
                }
                return Outcome::Ok;
            }
        }
        // A finite producer: each of its values is checked by the consumer's validator.
        if let Some(values) = finite(p_map) {
            for value in values {
                let quick = self.quick_member(c.schema, &value, 0);
                match quick.or_else(|| self.valid(Side::Consumer, &c, &value)) {
                    Some(true) => {}
                    Some(false) => {
                        return fail(&p, &c, value, "the consumer does not accept this value");
                    }
                    None => return unknown(&p, &c, "a consumer validator could not be built"),
                }
            }
            return Outcome::Ok;
        }
        // Consumer alternatives.
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = c_map.get(key) {
                return self.check_alternatives(p, c, key, branches, depth, level);
            }
        }
        self.check_simple(p, c, p_map, c_map, depth, level)
    }
}
