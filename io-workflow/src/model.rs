//! The workflow document (RFC-0024): types, phases, input mappings and output declarations.
//! Loaded from YAML ([`Workflow::from_yaml`]) or built in Rust with the same types.

use std::fmt;

use crate::yaml::Position;

/// A workflow: its `types` and its phases, in document order.
///
/// ```
/// use agentio_workflow::{Phase, TypeRef, Workflow};
/// // Built in Rust ...
/// let built = Workflow::new("report")
///     .with_type("Finding", vec![("text", TypeRef::String)])
///     .with_phase(Phase::new("research", "Research").assign("researcher")
///         .output("findings", TypeRef::parse("array<Finding>").unwrap()))
///     .with_phase(Phase::new("write", "Write").assign("writer")
///         .depends_on(["research"]).input("findings", "research.findings"));
/// assert!(built.validate().is_empty());
/// // ... or loaded from the RFC's YAML, with every problem at once.
/// let yaml = "openintent: \"1.0\"\ninfo:\n  name: report\nworkflow:\n  write:\n    assign: writer\n    inputs:\n      findings: research.findings\n";
/// let problems = Workflow::from_yaml(yaml).unwrap_err();
/// assert_eq!(problems[0].name(), "InputWiringError");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workflow {
    /// The `openintent` version line (`"1.0"`).
    pub openintent: String,
    /// `info.name`.
    pub name: String,
    /// `info.version`.
    pub version: String,
    /// Named object shapes, in document order.
    pub types: Vec<TypeDef>,
    /// The phases, in document order.
    pub phases: Vec<Phase>,
}

/// A named type from `types`: an object shape (each field with its type), or an enum
/// (`Status: { enum: [approved, rejected] }`: a value is one of the listed values).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDef {
    /// The type's name.
    pub name: String,
    /// Its fields, in order (empty for an enum).
    pub fields: Vec<(String, TypeRef)>,
    /// For an enum type, the values it allows (compared as JSON values); `None` for an object
    /// shape.
    pub values: Option<Vec<serde_json::Value>>,
    /// Where each field's type is written (parallel to `fields`; default positions when built
    /// in Rust).
    pub field_positions: Vec<Position>,
    /// Where it is declared.
    pub at: Position,
}

/// A type in an output declaration or a type's field.
///
/// The RFC's primitives (`string`, `number`, `boolean`, `object`, `array`), names from
/// `types` (object shapes and enums), `any`, and two answers to its open questions: `integer`
/// (a number with no fraction, so a Rust `u32` input can be wired safely) and `array<T>`
/// (element typing).
///
/// ```
/// use agentio_workflow::TypeRef;
/// let ty = TypeRef::parse("array<Finding>").unwrap();
/// assert_eq!(ty, TypeRef::Array(Some(Box::new(TypeRef::Named("Finding".into())))));
/// assert_eq!(ty.to_string(), "array<Finding>");
/// assert_eq!(TypeRef::parse("any"), Some(TypeRef::Any));
/// assert_eq!(TypeRef::parse("list of things"), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TypeRef {
    /// `string`.
    String,
    /// `number`: any JSON number (an integer passes).
    Number,
    /// `integer`: a JSON number with no fractional part.
    Integer,
    /// `boolean`.
    Boolean,
    /// `object`: any JSON object.
    Object,
    /// `array`, or `array<T>` with every element of type `T`.
    Array(Option<Box<TypeRef>>),
    /// A name from `types`.
    Named(String),
    /// `any`: the key must be present, and may hold any value (`null` included).
    Any,
}

impl TypeRef {
    /// How deeply `array<...>` may nest.
    pub const MAX_DEPTH: usize = 16;

    /// Parses `string`, `number`, `integer`, `boolean`, `object`, `array`, `array<T>` or a
    /// type name (an identifier). Whether a name is declared is checked by validation.
    ///
    /// `array<...>` may nest at most [`TypeRef::MAX_DEPTH`] levels; deeper (or malformed) text
    /// is not a type. Parsing is iterative, so no input can exhaust the stack.
    ///
    /// ```
    /// use agentio_workflow::TypeRef;
    /// assert_eq!(TypeRef::parse("number"), Some(TypeRef::Number));
    /// let findings = TypeRef::parse("array<Finding>").unwrap();
    /// assert_eq!(findings, TypeRef::Array(Some(Box::new(TypeRef::Named("Finding".into())))));
    /// assert_eq!(findings.names(), ["Finding"]);
    /// assert_eq!(TypeRef::parse("array<"), None);
    /// assert_eq!(TypeRef::parse("9lives"), None);
    /// ```
    pub fn parse(text: &str) -> Option<TypeRef> {
        let mut text = text.trim();
        let mut depth = 0;
        while let Some(inner) = text
            .strip_prefix("array<")
            .and_then(|rest| rest.strip_suffix('>'))
        {
            depth += 1;
            if depth > Self::MAX_DEPTH {
                return None;
            }
            text = inner.trim();
        }
        let mut parsed = match text {
            "string" => TypeRef::String,
            "number" => TypeRef::Number,
            "integer" => TypeRef::Integer,
            "boolean" => TypeRef::Boolean,
            "object" => TypeRef::Object,
            "array" => TypeRef::Array(None),
            "any" => TypeRef::Any,
            _ => {
                let valid = text.len() <= 128
                    && text
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && text
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !valid {
                    return None;
                }
                TypeRef::Named(text.to_owned())
            }
        };
        for _ in 0..depth {
            parsed = TypeRef::Array(Some(Box::new(parsed)));
        }
        Some(parsed)
    }

    /// Every type name this reference uses (for `array<Finding>`, `Finding`; an example is on
    /// [`Self::parse`]).
    pub fn names(&self) -> Vec<&str> {
        match self {
            TypeRef::Named(name) => vec![name.as_str()],
            TypeRef::Array(Some(inner)) => inner.names(),
            _ => Vec::new(),
        }
    }
}

impl fmt::Display for TypeRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeRef::String => f.write_str("string"),
            TypeRef::Number => f.write_str("number"),
            TypeRef::Integer => f.write_str("integer"),
            TypeRef::Boolean => f.write_str("boolean"),
            TypeRef::Object => f.write_str("object"),
            TypeRef::Array(None) => f.write_str("array"),
            TypeRef::Array(Some(inner)) => write!(f, "array<{inner}>"),
            TypeRef::Named(name) => f.write_str(name),
            TypeRef::Any => f.write_str("any"),
        }
    }
}

/// One declared output: its type, and whether it must be returned.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputDecl {
    /// The output key.
    pub key: String,
    /// The declared type.
    pub ty: TypeRef,
    /// `required` (default true).
    pub required: bool,
    /// Where it is declared.
    pub at: Position,
}

/// Where an input value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum InputSource {
    /// `{phase}.{key}`: an output of an upstream phase.
    Phase {
        /// The upstream phase.
        phase: String,
        /// Its output key.
        key: String,
    },
    /// `$trigger.{key}`.
    Trigger(String),
    /// `$initial_state.{key}`.
    InitialState(String),
    /// Anything else; validation reports it.
    Malformed,
}

impl InputSource {
    /// Parses a mapping expression (RFC-0024 §8.4).
    ///
    /// ```
    /// use agentio_workflow::InputSource;
    /// assert_eq!(
    ///     InputSource::parse("research.summary"),
    ///     InputSource::Phase { phase: "research".into(), key: "summary".into() },
    /// );
    /// assert_eq!(InputSource::parse("$trigger.quarter"), InputSource::Trigger("quarter".into()));
    /// assert_eq!(InputSource::parse("$initial_state.source"), InputSource::InitialState("source".into()));
    /// assert_eq!(InputSource::parse("research"), InputSource::Malformed);
    /// ```
    pub fn parse(expression: &str) -> InputSource {
        let key_ok =
            |key: &str| !key.is_empty() && !key.contains(char::is_whitespace) && !key.contains('.');
        let name_ok = |name: &str| {
            name.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        if let Some(key) = expression.strip_prefix("$trigger.") {
            return if key_ok(key) {
                InputSource::Trigger(key.to_owned())
            } else {
                InputSource::Malformed
            };
        }
        if let Some(key) = expression.strip_prefix("$initial_state.") {
            return if key_ok(key) {
                InputSource::InitialState(key.to_owned())
            } else {
                InputSource::Malformed
            };
        }
        match expression.split_once('.') {
            Some((phase, key)) if name_ok(phase) && key_ok(key) => InputSource::Phase {
                phase: phase.to_owned(),
                key: key.to_owned(),
            },
            _ => InputSource::Malformed,
        }
    }
}

/// One declared input: the `ctx.input` key and the expression that fills it.
#[derive(Clone, Debug, PartialEq)]
pub struct InputDecl {
    /// The key in `ctx.input`.
    pub key: String,
    /// The expression as written (`research.findings`, `$trigger.quarter`).
    pub expression: String,
    /// What the expression refers to.
    pub source: InputSource,
    /// Where it is declared.
    pub at: Position,
}

/// One phase of the workflow.
///
/// ```
/// use agentio_workflow::{InputSource, Phase, TypeRef};
/// let phase = Phase::new("analysis", "Run the analysis")
///     .assign("analytics-agent")
///     .depends_on(["fetch"])
///     .input("revenue", "fetch.revenue")
///     .input("quarter", "$trigger.quarter")
///     .output("risk", TypeRef::String)
///     .optional_output("notes", TypeRef::String);
/// assert_eq!(phase.inputs[1].source, InputSource::Trigger("quarter".into()));
/// assert!(!phase.output_decl_for("notes").unwrap().required);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// The phase name (its key under `workflow`).
    pub name: String,
    /// `title`.
    pub title: String,
    /// `assign`: the agent (core or tool binding) that runs it.
    pub assign: Option<String>,
    /// `depends_on`, each with its position.
    pub depends_on: Vec<(String, Position)>,
    /// `inputs`, in order.
    pub inputs: Vec<InputDecl>,
    /// `outputs`; `None` when the phase declares none (validation is skipped).
    pub outputs: Option<Vec<OutputDecl>>,
    /// Where the phase is declared.
    pub at: Position,
}

impl Phase {
    /// A phase with a name and a title, and nothing else (an example is on the type).
    pub fn new(name: impl Into<String>, title: impl Into<String>) -> Self {
        Phase {
            name: name.into(),
            title: title.into(),
            assign: None,
            depends_on: Vec::new(),
            inputs: Vec::new(),
            outputs: None,
            at: Position::default(),
        }
    }

    /// Sets `assign` (an example is on the type).
    #[must_use]
    pub fn assign(mut self, agent: impl Into<String>) -> Self {
        self.assign = Some(agent.into());
        self
    }

    /// Adds `depends_on` entries (an example is on the type).
    #[must_use]
    pub fn depends_on<I: IntoIterator<Item = S>, S: Into<String>>(mut self, phases: I) -> Self {
        self.depends_on
            .extend(phases.into_iter().map(|p| (p.into(), Position::default())));
        self
    }

    /// Adds an input mapping (`key: expression`; an example is on the type). A malformed
    /// expression is kept and reported by validation, with its position.
    ///
    /// ```
    /// use agentio_workflow::{InputSource, Phase, Workflow};
    ///
    /// let phase = Phase::new("b", "B").assign("x").input("q", "no dot here");
    /// assert_eq!(phase.inputs[0].source, InputSource::Malformed);
    /// let problems = Workflow::new("w").with_phase(phase).validate();
    /// assert!(!problems.is_empty());
    /// ```
    #[must_use]
    pub fn input(mut self, key: impl Into<String>, expression: impl Into<String>) -> Self {
        let expression = expression.into();
        let source = InputSource::parse(&expression);
        self.inputs.push(InputDecl {
            key: key.into(),
            expression,
            source,
            at: Position::default(),
        });
        self
    }

    /// Adds a required output (an example is on the type).
    #[must_use]
    pub fn output(self, key: impl Into<String>, ty: TypeRef) -> Self {
        self.output_decl(key, ty, true)
    }

    /// Adds an optional output (`required: false`; an example is on the type).
    #[must_use]
    pub fn optional_output(self, key: impl Into<String>, ty: TypeRef) -> Self {
        self.output_decl(key, ty, false)
    }

    fn output_decl(mut self, key: impl Into<String>, ty: TypeRef, required: bool) -> Self {
        self.outputs.get_or_insert_with(Vec::new).push(OutputDecl {
            key: key.into(),
            ty,
            required,
            at: Position::default(),
        });
        self
    }

    /// The declared output `key`, if the phase declares outputs and that one.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef};
    ///
    /// let phase = Phase::new("a", "A").output("n", TypeRef::Number);
    /// assert!(phase.output_decl_for("n").unwrap().required);
    /// assert!(phase.output_decl_for("m").is_none());
    /// assert!(Phase::new("b", "B").output_decl_for("n").is_none());
    /// ```
    pub fn output_decl_for(&self, key: &str) -> Option<&OutputDecl> {
        self.outputs.as_ref()?.iter().find(|o| o.key == key)
    }
}

impl Workflow {
    /// An empty workflow called `name`; phases and types are added with the `with_*` methods.
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow};
    ///
    /// let workflow = Workflow::new("quarterly")
    ///     .with_type("Finding", vec![("title", TypeRef::String)])
    ///     .with_phase(Phase::new("fetch", "Fetch").assign("fetcher").output("findings", TypeRef::parse("array<Finding>").unwrap()));
    /// assert!(workflow.validate().is_empty());
    /// assert_eq!(workflow.phase("fetch").unwrap().title, "Fetch");
    /// assert_eq!(workflow.type_def("Finding").unwrap().fields[0].0, "title");
    /// assert!(workflow.phase("missing").is_none());
    /// ```
    pub fn new(name: impl Into<String>) -> Self {
        Workflow {
            openintent: "1.0".into(),
            name: name.into(),
            version: "1.0.0".into(),
            ..Workflow::default()
        }
    }

    /// Adds a named type: an object with these fields.
    ///
    /// ```
    /// use agentio_workflow::{TypeRef, Workflow};
    /// use serde_json::json;
    ///
    /// let workflow = Workflow::new("w").with_type("Finding", vec![("title", TypeRef::String), ("score", TypeRef::Number)]);
    /// assert_eq!(workflow.type_def("Finding").unwrap().fields.len(), 2);
    /// let findings = TypeRef::parse("array<Finding>").unwrap();
    /// assert!(workflow.check_value(&json!([{ "title": "a", "score": 1 }]), &findings).is_ok());
    /// let wrong = workflow.check_value(&json!([{ "title": "a", "score": "high" }]), &findings).unwrap_err();
    /// assert_eq!((wrong.path.as_str(), wrong.expected.as_str(), wrong.actual.as_str()), ("/0/score", "number", "string"));
    /// ```
    #[must_use]
    pub fn with_type(mut self, name: impl Into<String>, fields: Vec<(&str, TypeRef)>) -> Self {
        let fields: Vec<(String, TypeRef)> =
            fields.into_iter().map(|(k, t)| (k.to_owned(), t)).collect();
        let field_positions = vec![Position::default(); fields.len()];
        self.types.push(TypeDef {
            name: name.into(),
            fields,
            values: None,
            field_positions,
            at: Position::default(),
        });
        self
    }

    /// Adds an enum type: a value of it is one of `values`.
    ///
    /// ```
    /// use agentio_workflow::{TypeRef, Workflow};
    /// let workflow = Workflow::new("w").with_enum_type("Status", vec!["approved".into(), "rejected".into()]);
    /// let status = TypeRef::Named("Status".into());
    /// assert!(workflow.check_value(&"approved".into(), &status).is_ok());
    /// assert!(workflow.check_value(&"maybe".into(), &status).is_err());
    /// ```
    #[must_use]
    pub fn with_enum_type(
        mut self,
        name: impl Into<String>,
        values: Vec<serde_json::Value>,
    ) -> Self {
        self.types.push(TypeDef {
            name: name.into(),
            fields: Vec::new(),
            values: Some(values),
            field_positions: Vec::new(),
            at: Position::default(),
        });
        self
    }

    /// Adds a phase (an example is on [`Self::new`]).
    #[must_use]
    pub fn with_phase(mut self, phase: Phase) -> Self {
        self.phases.push(phase);
        self
    }

    /// The phase called `name` (an example is on [`Self::new`]).
    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The type called `name` (an example is on [`Self::new`]).
    pub fn type_def(&self, name: &str) -> Option<&TypeDef> {
        self.types.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_references_parse_including_array_element_types() {
        assert_eq!(TypeRef::parse("number"), Some(TypeRef::Number));
        assert_eq!(
            TypeRef::parse("array<Finding>"),
            Some(TypeRef::Array(Some(Box::new(TypeRef::Named(
                "Finding".into()
            )))))
        );
        assert_eq!(
            TypeRef::parse("array<array<string>>").unwrap().to_string(),
            "array<array<string>>"
        );
        assert_eq!(TypeRef::parse("list of things"), None);
    }

    #[test]
    fn every_builtin_name_is_its_type_and_other_names_are_identifiers() {
        for (text, ty) in [
            ("string", TypeRef::String),
            ("number", TypeRef::Number),
            ("integer", TypeRef::Integer),
            ("boolean", TypeRef::Boolean),
            ("object", TypeRef::Object),
            ("array", TypeRef::Array(None)),
            ("any", TypeRef::Any),
        ] {
            assert_eq!(TypeRef::parse(text), Some(ty), "{text}");
        }
        for name in ["_private", "Finding", "risk-level", "snake_case", "a1"] {
            assert_eq!(TypeRef::parse(name), Some(TypeRef::Named(name.into())));
        }
        for bad in ["1abc", "-x", "a.b", "a b", "é", ""] {
            assert_eq!(TypeRef::parse(bad), None, "{bad}");
        }
        assert!(TypeRef::parse(&"a".repeat(128)).is_some());
        assert_eq!(TypeRef::parse(&"a".repeat(129)), None);
    }

    #[test]
    fn arrays_nest_up_to_the_limit() {
        let nested =
            |levels: usize| format!("{}string{}", "array<".repeat(levels), ">".repeat(levels));
        let deepest = TypeRef::parse(&nested(TypeRef::MAX_DEPTH)).unwrap();
        assert_eq!(deepest.to_string(), nested(TypeRef::MAX_DEPTH));
        assert_eq!(TypeRef::parse(&nested(TypeRef::MAX_DEPTH + 1)), None);
    }

    #[test]
    fn the_names_a_type_uses_are_found_inside_arrays() {
        assert_eq!(
            TypeRef::parse("array<array<Finding>>").unwrap().names(),
            ["Finding"]
        );
        assert_eq!(TypeRef::parse("Finding").unwrap().names(), ["Finding"]);
        assert!(TypeRef::parse("array<string>").unwrap().names().is_empty());
    }

    #[test]
    fn input_expressions_parse_per_section_8() {
        assert_eq!(
            InputSource::parse("research.findings"),
            InputSource::Phase {
                phase: "research".into(),
                key: "findings".into()
            }
        );
        assert_eq!(
            InputSource::parse("$trigger.quarter"),
            InputSource::Trigger("quarter".into())
        );
        assert_eq!(
            InputSource::parse("$initial_state.source"),
            InputSource::InitialState("source".into())
        );
        assert_eq!(
            InputSource::parse("_prep-1.key"),
            InputSource::Phase {
                phase: "_prep-1".into(),
                key: "key".into()
            }
        );
        for bad in [
            "1research.findings",
            "research",
            "research.",
            ".findings",
            "$env.HOME",
            "$trigger.",
            "a.b.c",
            "re search.x",
            "$trigger.a.b",
        ] {
            assert_eq!(InputSource::parse(bad), InputSource::Malformed, "{bad}");
        }
    }
}
