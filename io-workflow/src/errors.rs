//! The named errors of RFC-0024 (and the RFC-0026 patch), serialized as the RFC's event
//! payloads: `{ "error": "<Name>", <fields>, "message": "..." }`.
//!
//! Runtime errors carry exactly the RFC's fields. Load-time errors add `line` and `column`
//! (where in the document), which the RFC leaves open and a reader needs.

use serde::Serialize;
use serde_json::Value;

/// A problem found when a workflow document is loaded and validated, before anything runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "error")]
pub enum ValidationError {
    /// RFC-0024 §4.4 / §8: an `inputs` mapping is structurally invalid.
    InputWiringError {
        /// The phase with the invalid `inputs`.
        phase_name: String,
        /// The invalid mapping expressions.
        invalid_refs: Vec<String>,
        /// How to fix it.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line of the first invalid mapping.
        line: usize,
        /// Column of the first invalid mapping.
        column: usize,
    },
    /// A `depends_on` entry names no phase.
    UnknownDependencyError {
        /// The phase whose `depends_on` is wrong.
        phase_name: String,
        /// The unknown name.
        dependency: String,
        /// How to fix it.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// `depends_on` forms a cycle: no phase of it could ever start.
    DependencyCycleError {
        /// The phases of the cycle, in order, the first repeated at the end.
        cycle: Vec<String>,
        /// What is wrong.
        message: String,
        /// Line of the first phase of the cycle.
        line: usize,
        /// Column.
        column: usize,
    },
    /// A type in `types` or an output declaration is unknown or malformed.
    TypeDeclarationError {
        /// Where: `types.<Name>.<field>` or `workflow.<phase>.outputs.<key>`.
        location: String,
        /// The type as written.
        declared: String,
        /// How to fix it.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// A wired value cannot fit the bound typed core or tool (found at load time).
    TypedWiringError {
        /// The phase.
        phase_name: String,
        /// The input or output key.
        key: String,
        /// What the typed unit needs there.
        expected: String,
        /// What the workflow provides there.
        actual: String,
        /// How to fix it.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
    /// A key the document format does not have (a typo such as `ouputs:` would otherwise
    /// silently switch off validation). Keys starting with `x-` are extensions and allowed.
    UnknownKeyError {
        /// Where: `workflow.<phase>`, `info`, `types.<name>.<field>`, ...
        location: String,
        /// The key as written.
        key: String,
        /// "did you mean ...?", or the keys allowed there.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
    },
    /// A key written twice in one mapping (YAML parses it; the document must not mean two
    /// things).
    DuplicateKeyError {
        /// Where.
        location: String,
        /// The key.
        key: String,
        /// Where the first one is.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line of the second one, from 1.
        line: usize,
        /// Column of the second one, from 1.
        column: usize,
    },
    /// A key the format requires is missing (`openintent`, `info.name`, a phase's `assign`).
    MissingKeyError {
        /// Where it is missing.
        location: String,
        /// The key.
        key: String,
        /// What to add.
        suggestion: String,
        /// What is wrong.
        message: String,
        /// Line of the mapping that lacks it, from 1.
        line: usize,
        /// Column of the mapping that lacks it, from 1.
        column: usize,
    },
    /// The document is not a workflow (syntax, or a section of the wrong shape).
    DocumentError {
        /// What is wrong.
        message: String,
        /// Line.
        line: usize,
        /// Column.
        column: usize,
    },
}

impl ValidationError {
    /// The payload as JSON: the RFC's fields, with `line` and `column`.
    ///
    /// ```
    /// use agentio_workflow::Workflow;
    ///
    /// let text = "openintent: \"1.0\"\ninfo:\n  name: demo\nworkflow:\n  a:\n    assign: x\n    depends_on: [b]\n";
    /// let problems = Workflow::from_yaml(text).unwrap_err();
    /// let first = &problems[0];
    /// assert_eq!(first.name(), "UnknownDependencyError");
    /// assert_eq!(first.position(), (7, 18)); // at `b`
    /// assert!(first.suggestion().is_some());
    /// let json = first.to_json();
    /// assert_eq!(json["error"], "UnknownDependencyError");
    /// assert_eq!((json["line"].as_u64(), json["column"].as_u64()), (Some(7), Some(18)));
    /// ```
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Line and column.
    pub fn position(&self) -> (usize, usize) {
        match self {
            ValidationError::InputWiringError { line, column, .. }
            | ValidationError::UnknownDependencyError { line, column, .. }
            | ValidationError::DependencyCycleError { line, column, .. }
            | ValidationError::TypeDeclarationError { line, column, .. }
            | ValidationError::TypedWiringError { line, column, .. }
            | ValidationError::UnknownKeyError { line, column, .. }
            | ValidationError::DuplicateKeyError { line, column, .. }
            | ValidationError::MissingKeyError { line, column, .. }
            | ValidationError::DocumentError { line, column, .. } => (*line, *column),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            ValidationError::InputWiringError { message, .. }
            | ValidationError::UnknownDependencyError { message, .. }
            | ValidationError::DependencyCycleError { message, .. }
            | ValidationError::TypeDeclarationError { message, .. }
            | ValidationError::TypedWiringError { message, .. }
            | ValidationError::UnknownKeyError { message, .. }
            | ValidationError::DuplicateKeyError { message, .. }
            | ValidationError::MissingKeyError { message, .. }
            | ValidationError::DocumentError { message, .. } => message,
        }
    }
}

/// The most characters an error's texts (message, suggestion, quoted document text) show: a
/// hostile document cannot make an error as large as itself.
pub(crate) const MAX_ERROR_TEXT: usize = 1_000;

/// `text`, cut to [`MAX_ERROR_TEXT`] characters on a character boundary, saying how long it was.
pub(crate) fn bound(text: &mut String) {
    cut(text, MAX_ERROR_TEXT);
}

/// Cuts `text` to `chars` characters on a character boundary, saying how long it was.
pub(crate) fn cut(text: &mut String, chars: usize) {
    if let Some((end, _)) = text.char_indices().nth(chars) {
        let total = text.len();
        text.truncate(end);
        text.push_str(&format!("… ({total} bytes)"));
    }
}

impl ValidationError {
    /// The same error with every text bounded ([`MAX_ERROR_TEXT`] characters each).
    pub(crate) fn bounded(mut self) -> Self {
        match &mut self {
            ValidationError::InputWiringError {
                phase_name,
                invalid_refs,
                suggestion,
                message,
                ..
            } => {
                bound(phase_name);
                invalid_refs.iter_mut().for_each(bound);
                invalid_refs.truncate(64);
                bound(suggestion);
                bound(message);
            }
            ValidationError::UnknownDependencyError {
                phase_name,
                dependency,
                suggestion,
                message,
                ..
            } => {
                for text in [phase_name, dependency, suggestion, message] {
                    bound(text);
                }
            }
            ValidationError::DependencyCycleError { cycle, message, .. } => {
                cycle.iter_mut().for_each(bound);
                bound(message);
            }
            ValidationError::TypeDeclarationError {
                location,
                declared,
                suggestion,
                message,
                ..
            }
            | ValidationError::UnknownKeyError {
                location,
                key: declared,
                suggestion,
                message,
                ..
            }
            | ValidationError::DuplicateKeyError {
                location,
                key: declared,
                suggestion,
                message,
                ..
            }
            | ValidationError::MissingKeyError {
                location,
                key: declared,
                suggestion,
                message,
                ..
            } => {
                for text in [location, declared, suggestion, message] {
                    bound(text);
                }
            }
            ValidationError::TypedWiringError {
                phase_name,
                key,
                expected,
                actual,
                suggestion,
                message,
                ..
            } => {
                for text in [phase_name, key, expected, actual, suggestion, message] {
                    bound(text);
                }
            }
            ValidationError::DocumentError { message, .. } => bound(message),
        }
        self
    }

    /// The error's name, as in its JSON payload (`InputWiringError`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ValidationError::InputWiringError { .. } => "InputWiringError",
            ValidationError::UnknownDependencyError { .. } => "UnknownDependencyError",
            ValidationError::DependencyCycleError { .. } => "DependencyCycleError",
            ValidationError::TypeDeclarationError { .. } => "TypeDeclarationError",
            ValidationError::TypedWiringError { .. } => "TypedWiringError",
            ValidationError::UnknownKeyError { .. } => "UnknownKeyError",
            ValidationError::DuplicateKeyError { .. } => "DuplicateKeyError",
            ValidationError::MissingKeyError { .. } => "MissingKeyError",
            ValidationError::DocumentError { .. } => "DocumentError",
        }
    }

    /// What to do about it, when the error carries a suggestion.
    pub fn suggestion(&self) -> Option<&str> {
        match self {
            ValidationError::InputWiringError { suggestion, .. }
            | ValidationError::UnknownDependencyError { suggestion, .. }
            | ValidationError::TypeDeclarationError { suggestion, .. }
            | ValidationError::TypedWiringError { suggestion, .. }
            | ValidationError::UnknownKeyError { suggestion, .. }
            | ValidationError::DuplicateKeyError { suggestion, .. }
            | ValidationError::MissingKeyError { suggestion, .. } => {
                Some(suggestion.as_str()).filter(|s| !s.is_empty())
            }
            ValidationError::DependencyCycleError { .. }
            | ValidationError::DocumentError { .. } => None,
        }
    }
}

/// `line:column: Name: message (suggestion)`, e.g.
/// `12:5: UnknownKeyError: phase 'a' has no key 'ouputs' (did you mean `outputs`?)`.
impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (line, column) = self.position();
        write!(f, "{line}:{column}: {}: {}", self.name(), self.message())?;
        if let Some(suggestion) = self.suggestion() {
            write!(f, " ({suggestion})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

/// An error of a running workflow, as the RFC names it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "error")]
pub enum RunError {
    /// §4.1: required output keys are absent from the returned output.
    MissingOutputError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// Every declared required key that was not returned.
        missing_keys: Vec<String>,
        /// What happened.
        message: String,
    },
    /// §4.2: a returned value does not have its declared type (no coercion).
    OutputTypeMismatchError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// The output key.
        key: String,
        /// The declared type.
        expected_type: String,
        /// The JSON type returned (`string`, `integer`, `number`, `boolean`, `object`, `array`, `null`).
        actual_type: String,
        /// What happened (with the place inside the value, for nested types).
        message: String,
    },
    /// §4.3: declared inputs cannot be resolved at claim time.
    UnresolvableInputError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// The expressions that could not be resolved.
        unresolvable_refs: Vec<String>,
        /// What happened.
        message: String,
    },
    /// RFC-0026 patch: an upstream phase the inputs refer to is suspended awaiting input.
    UpstreamIntentSuspendedError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// The suspended upstream intent.
        suspended_intent_id: String,
        /// When it is expected to resume (ISO-8601), if known.
        expected_resume_at: Option<String>,
        /// What happened.
        message: String,
    },
    /// The phase's agent failed (its error envelope), or no agent is bound to it.
    PhaseFailedError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// The agent's error, as the AIP-14 `error` object.
        cause: Value,
        /// What happened.
        message: String,
    },
    /// A durable run was reopened and found the phase claimed but not completed (its process
    /// stopped while its agent worked), and the phase may not run twice
    /// ([`crate::Executor::at_most_once`], or a tool whose contract is not `idempotent`): the
    /// run stops at it.
    PhaseInterruptedError {
        /// The task.
        task_id: String,
        /// Its phase.
        phase_name: String,
        /// What happened.
        message: String,
    },
    /// A programming error of the host: an operation on a phase the workflow does not have.
    /// Not an RFC event; never logged as one.
    UnknownPhaseError {
        /// The name asked for.
        phase_name: String,
        /// The operation (`claim`, `complete`, `fail`, `suspend`, `resume`).
        operation: String,
        /// What went wrong, in words.
        message: String,
    },
    /// An operation the task's state does not allow (see the state table on
    /// [`crate::WorkflowRun`]): claiming a running task, completing one never claimed, ...
    /// The task is left as it was. Not an RFC event; never logged as one.
    InvalidTransitionError {
        /// The task.
        task_id: String,
        /// The phase.
        phase_name: String,
        /// The operation refused.
        operation: String,
        /// The task's state (`pending`, `ready`, `running`, `completed`, `failed`,
        /// `suspended_awaiting_input`).
        state: String,
        /// What went wrong, in words.
        message: String,
    },
}

impl RunError {
    /// The payload as JSON, the RFC's event (its fields and nothing more).
    ///
    /// ```
    /// use agentio_workflow::{Phase, TypeRef, Workflow, WorkflowRun};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let workflow = Workflow::new("w").with_phase(Phase::new("a", "A").output("n", TypeRef::Number));
    /// let mut run = WorkflowRun::new(Arc::new(workflow), "r1", json!({}), json!({})).unwrap();
    /// run.claim("a").unwrap();
    /// let errors = run.complete("a", json!({ "n": "seven" })).unwrap_err();
    /// assert_eq!(errors[0].name(), "OutputTypeMismatchError");
    /// let event = errors[0].to_json();
    /// assert_eq!(event["error"], "OutputTypeMismatchError");
    /// assert_eq!(event["actual_type"], "string");
    /// ```
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The error's name (`MissingOutputError`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            RunError::MissingOutputError { .. } => "MissingOutputError",
            RunError::OutputTypeMismatchError { .. } => "OutputTypeMismatchError",
            RunError::UnresolvableInputError { .. } => "UnresolvableInputError",
            RunError::UpstreamIntentSuspendedError { .. } => "UpstreamIntentSuspendedError",
            RunError::PhaseFailedError { .. } => "PhaseFailedError",
            RunError::PhaseInterruptedError { .. } => "PhaseInterruptedError",
            RunError::UnknownPhaseError { .. } => "UnknownPhaseError",
            RunError::InvalidTransitionError { .. } => "InvalidTransitionError",
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = match self {
            RunError::MissingOutputError { message, .. }
            | RunError::OutputTypeMismatchError { message, .. }
            | RunError::UnresolvableInputError { message, .. }
            | RunError::UpstreamIntentSuspendedError { message, .. }
            | RunError::PhaseFailedError { message, .. }
            | RunError::PhaseInterruptedError { message, .. }
            | RunError::UnknownPhaseError { message, .. }
            | RunError::InvalidTransitionError { message, .. } => message,
        };
        write!(f, "{}: {message}", self.name())
    }
}

impl std::error::Error for RunError {}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
pub(crate) fn quoted_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_ERROR_TEXT, bound, cut};

    #[test]
    fn texts_are_cut_on_a_character_boundary_saying_how_long_they_were() {
        let mut short = "é".repeat(3);
        cut(&mut short, 3);
        assert_eq!(short, "ééé");
        let mut long = "é".repeat(4);
        cut(&mut long, 3);
        assert_eq!(long, "ééé… (8 bytes)");
    }

    #[test]
    fn error_texts_are_bounded_at_the_limit() {
        let mut at = "x".repeat(MAX_ERROR_TEXT);
        bound(&mut at);
        assert_eq!(at.len(), MAX_ERROR_TEXT);
        let mut over = "x".repeat(MAX_ERROR_TEXT + 1);
        bound(&mut over);
        assert_eq!(
            over,
            format!(
                "{}… ({} bytes)",
                "x".repeat(MAX_ERROR_TEXT),
                MAX_ERROR_TEXT + 1
            )
        );
    }
}
