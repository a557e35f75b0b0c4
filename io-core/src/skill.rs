//! Skills: ordered chains of tool or core steps, checked before anything runs.
//!
//! A [`SkillManifest`] lists steps by id. Each step after the first receives the previous
//! step's output, whole, or built from [`SkillStep::inputs`]: a map from a field of this step's
//! input to a JSON pointer into the previous step's output. [`check_skill`] proves, for every
//! link, that whatever the previous step can produce is a valid input for the next one
//! ([`crate::compat::schema_compatible`]) and reports every broken link at once.
//! `ToolRegistry::validate_skill` (agentio-tools) and [`AgentRuntime::validate_skill`](crate::AgentRuntime::validate_skill) call it.
//!
//! Decisions:
//! - A link the checker can neither prove nor refute (a consumer `pattern` the producer does
//!   not share, say) is reported too, as [`SkillProblem::Unproven`]: a chain is accepted only
//!   when every link is proven. A caller that accepts unproven links can filter them out.
//! - The producer side of a link is what the step can produce: for a typed step, its output
//!   schema with its derived structs closed ([`crate::BoundarySchema::produced_schema`]).
//! - A mapped input is an object of exactly the mapped fields; a mapped field is present when
//!   every property on its pointer's path is required (and every array index is within
//!   `minItems`), otherwise it may be absent.
//!
//! ```
//! use agentio_core::skill::{SkillManifest, check_skill};
//! use serde_json::json;
//!
//! let skill = SkillManifest::from_yaml_or_json(r#"
//! name: research
//! steps:
//!   - tool: kb.search
//!   - tool: kb.summarize
//!     inputs: { text: /hits/0/title }
//! "#).unwrap();
//! let search_out = json!({ "type": "object", "required": ["hits"], "additionalProperties": false, "properties": {
//!     "hits": { "type": "array", "minItems": 1, "items": { "type": "object", "required": ["title"], "properties": { "title": { "type": "string" } } } } } });
//! let summarize_in = json!({ "type": "object", "required": ["text"], "properties": { "text": { "type": "string" } } });
//! let lookup = |id: &str| match id {
//!     "kb.search" => Some((json!({ "type": "object" }), search_out.clone())),
//!     "kb.summarize" => Some((summarize_in.clone(), json!({ "type": "object" }))),
//!     _ => None,
//! };
//! assert!(check_skill(&skill, lookup).is_ok());
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::compat::{Compatibility, Counterexample, Undecided, schema_compatible};

/// An ordered chain of steps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillManifest {
    /// The skill's name, for errors.
    #[serde(default)]
    pub name: String,
    /// The steps, in order.
    pub steps: Vec<SkillStep>,
}

/// One step of a [`SkillManifest`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillStep {
    /// The tool's id (`id` or `id@major`), or a core's type.
    #[serde(alias = "core")]
    pub tool: String,
    /// This step's input built from the previous output: input field → JSON pointer into the
    /// previous step's output (for the first step, into the skill's input). Empty: the previous
    /// output is the input, whole. A first step's mapping is applied when the skill runs but
    /// not checked by [`check_skill`], which knows no schema for the skill's input.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, String>,
}

impl SkillManifest {
    /// A skill of these steps, each taking the previous output whole.
    ///
    /// ```
    /// let skill = agentio_core::skill::SkillManifest::new("triage", ["ticket.read", "ticket.classify"]);
    /// assert_eq!(skill.steps[1].tool, "ticket.classify");
    /// ```
    pub fn new<S: Into<String>>(
        name: impl Into<String>,
        steps: impl IntoIterator<Item = S>,
    ) -> Self {
        SkillManifest {
            name: name.into(),
            steps: steps
                .into_iter()
                .map(|tool| SkillStep {
                    tool: tool.into(),
                    inputs: BTreeMap::new(),
                })
                .collect(),
        }
    }

    /// Parses a manifest from YAML or JSON (JSON is YAML). Errors say where.
    pub fn from_yaml_or_json(text: &str) -> Result<Self, SkillError> {
        serde_norway::from_str(text).map_err(|err| SkillError {
            skill: String::new(),
            problems: vec![SkillProblem::Malformed {
                reason: crate::limits::bounded_display(&err, 400),
            }],
        })
    }

    /// The input of step `index` (≥ 1) given the previous step's output: the output itself,
    /// or the object its [`SkillStep::inputs`] mapping builds (a pointer that finds nothing
    /// leaves its field out).
    ///
    /// ```
    /// use agentio_core::skill::SkillManifest;
    /// use serde_json::json;
    /// let mut skill = SkillManifest::new("s", ["a", "b"]);
    /// skill.steps[1].inputs.insert("q".into(), "/hits/0".into());
    /// assert_eq!(skill.next_input(1, json!({ "hits": ["x"] })), json!({ "q": "x" }));
    /// ```
    pub fn next_input(&self, index: usize, previous: Value) -> Value {
        let Some(step) = self.steps.get(index) else {
            return previous;
        };
        if step.inputs.is_empty() {
            return previous;
        }
        let mut input = Map::new();
        for (field, pointer) in &step.inputs {
            if let Some(value) = previous.pointer(pointer) {
                input.insert(field.clone(), value.clone());
            }
        }
        Value::Object(input)
    }
}

/// Every problem of one skill.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SkillError {
    /// The skill's name.
    pub skill: String,
    /// Every problem found, in step order.
    pub problems: Vec<SkillProblem>,
}

/// One problem of a skill.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkillProblem {
    /// The manifest could not be read.
    Malformed {
        /// Why, with the place.
        reason: String,
    },
    /// The skill has no steps.
    Empty,
    /// A step names no known tool or core.
    UnknownStep {
        /// The step's index.
        step: usize,
        /// The id it names.
        id: String,
    },
    /// A mapping's pointer is not a JSON pointer, or leads nowhere in the producer's schema.
    BadMapping {
        /// The step's index.
        step: usize,
        /// The input field.
        field: String,
        /// The pointer.
        pointer: String,
        /// Why.
        reason: String,
    },
    /// The previous step can produce a value the step refuses (the spec's `IncompatibleChain`).
    IncompatibleChain {
        /// The index of the consuming step.
        step: usize,
        /// The producing step's id.
        from: String,
        /// The consuming step's id.
        to: String,
        /// The value that breaks it, and where.
        counterexample: Counterexample,
    },
    /// The link could not be proven either way.
    Unproven {
        /// The index of the consuming step.
        step: usize,
        /// The producing step's id.
        from: String,
        /// The consuming step's id.
        to: String,
        /// What stopped the proof.
        undecided: Undecided,
    },
}

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = if self.skill.is_empty() {
            "the skill"
        } else {
            &self.skill
        };
        write!(
            f,
            "{name} cannot run as written ({} problem(s))",
            self.problems.len()
        )?;
        for problem in &self.problems {
            write!(f, "; {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for SkillError {}

impl fmt::Display for SkillProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkillProblem::Malformed { reason } => write!(f, "the manifest is malformed: {reason}"),
            SkillProblem::Empty => f.write_str("it has no steps"),
            SkillProblem::UnknownStep { step, id } => {
                write!(f, "step {step}: no tool or core `{id}`")
            }
            SkillProblem::BadMapping {
                step,
                field,
                pointer,
                reason,
            } => write!(f, "step {step}: input `{field}` from `{pointer}`: {reason}"),
            SkillProblem::IncompatibleChain {
                step,
                from,
                to,
                counterexample,
            } => write!(
                f,
                "step {step}: `{from}` can produce what `{to}` refuses: {}",
                Compatibility::Incompatible(counterexample.clone())
            ),
            SkillProblem::Unproven {
                step,
                from,
                to,
                undecided,
            } => write!(
                f,
                "step {step}: `{from}` feeding `{to}` could not be proven: {}",
                Compatibility::Unknown(undecided.clone())
            ),
        }
    }
}

/// Checks every link of `skill`. `lookup` gives a step's (input schema, produced output schema)
/// by id, or `None` for an unknown id. Every problem is reported, not only the first.
pub fn check_skill<F>(skill: &SkillManifest, lookup: F) -> Result<(), SkillError>
where
    F: Fn(&str) -> Option<(Value, Value)>,
{
    let mut problems = Vec::new();
    if skill.steps.is_empty() {
        problems.push(SkillProblem::Empty);
    }
    let schemas: Vec<Option<(Value, Value)>> = skill
        .steps
        .iter()
        .enumerate()
        .map(|(step, s)| {
            let found = lookup(&s.tool);
            if found.is_none() {
                problems.push(SkillProblem::UnknownStep {
                    step,
                    id: s.tool.clone(),
                });
            }
            found
        })
        .collect();
    for step in 1..skill.steps.len() {
        let (Some((_, produced)), Some((consumer, _))) = (&schemas[step - 1], &schemas[step])
        else {
            continue;
        };
        let (from, to) = (&skill.steps[step - 1].tool, &skill.steps[step].tool);
        let producer = match mapped_producer(produced, &skill.steps[step].inputs) {
            Ok(p) => p,
            Err((field, pointer, reason)) => {
                problems.push(SkillProblem::BadMapping {
                    step,
                    field,
                    pointer,
                    reason,
                });
                continue;
            }
        };
        match schema_compatible(&producer, consumer) {
            Compatibility::Compatible => {}
            Compatibility::Incompatible(counterexample) => {
                problems.push(SkillProblem::IncompatibleChain {
                    step,
                    from: from.clone(),
                    to: to.clone(),
                    counterexample,
                })
            }
            Compatibility::Unknown(undecided) => problems.push(SkillProblem::Unproven {
                step,
                from: from.clone(),
                to: to.clone(),
                undecided,
            }),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(SkillError {
            skill: skill.name.clone(),
            problems,
        })
    }
}

/// The schema of the input a mapping builds from a producer: an object of the mapped fields.
fn mapped_producer(
    produced: &Value,
    inputs: &BTreeMap<String, String>,
) -> Result<Value, (String, String, String)> {
    if inputs.is_empty() {
        return Ok(produced.clone());
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (field, pointer) in inputs {
        let bad = |reason: &str| (field.clone(), pointer.clone(), reason.to_owned());
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(bad("a JSON pointer starts with `/`"));
        }
        let (schema, always) = follow(produced, pointer).map_err(|r| bad(&r))?;
        properties.insert(field.clone(), schema);
        if always {
            required.push(Value::from(field.as_str()));
        }
    }
    let mut document = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    });
    if let Some(defs) = produced.get("$defs") {
        document["$defs"] = defs.clone();
    }
    // A reference to the producer's root (`#`) keeps meaning its root.
    crate::compat::keep_root_refs(produced, &mut document);
    Ok(document)
}

/// The producer's subschema at `pointer`, and whether a value is always there.
fn follow(root: &Value, pointer: &str) -> Result<(Value, bool), String> {
    let tokens: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer[1..]
            .split('/')
            .map(crate::pointer::unescape_token)
            .collect()
    };
    let mut node = root;
    let mut always = true;
    let mut hops = 0;
    let mut next = 0;
    loop {
        hops += 1;
        if hops > 256 {
            return Err("the producer's schema goes round in circles here".into());
        }
        if let Some(Value::String(reference)) = node.get("$ref") {
            node = crate::pointer::resolve_local(root, reference)
                .ok_or_else(|| format!("the producer's `$ref` `{reference}` does not resolve"))?;
            continue;
        }
        let Some(token) = tokens.get(next) else {
            return Ok((node.clone(), always));
        };
        let map = node
            .as_object()
            .ok_or_else(|| format!("nothing in the producer's output has `{token}`"))?;
        if let Some(key) = ["anyOf", "oneOf"]
            .into_iter()
            .find(|k| map.contains_key(*k))
        {
            // An `Option<T>`: follow the one branch that is not null; the value may be null.
            let branches: Vec<&Value> = map[key]
                .as_array()
                .map(|b| {
                    b.iter()
                        .filter(|s| s.get("type") != Some(&json!("null")))
                        .collect()
                })
                .unwrap_or_default();
            let [branch] = branches.as_slice() else {
                return Err(format!(
                    "`{token}` is inside alternatives the mapping cannot choose between"
                ));
            };
            always = false;
            node = branch;
            continue;
        }
        next += 1;
        let is_array = map.get("type") == Some(&json!("array"))
            || map.contains_key("items")
            || map.contains_key("prefixItems");
        if is_array {
            let index: usize = token
                .parse()
                .map_err(|_| format!("`{token}` is not an index into the producer's array"))?;
            if (index as u64) >= map.get("minItems").and_then(Value::as_u64).unwrap_or(0) {
                always = false;
            }
            node = match map
                .get("prefixItems")
                .and_then(Value::as_array)
                .and_then(|p| p.get(index))
            {
                Some(s) => s,
                None => map
                    .get("items")
                    .ok_or_else(|| format!("the producer's array has no item `{token}`"))?,
            };
        } else {
            let required = map
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.contains(&json!(token)));
            if !required {
                always = false;
            }
            node = match map.get("properties").and_then(|p| p.get(token.as_str())) {
                Some(s) => s,
                None => match map.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        return Err(format!("the producer's output never has `{token}`"));
                    }
                    Some(s) => s,
                    None => &TRUE,
                },
            };
        }
    }
}

static TRUE: Value = Value::Bool(true);
