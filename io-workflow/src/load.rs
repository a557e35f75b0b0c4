//! From YAML text to a [`Workflow`], reporting every structural problem with its position.

use crate::errors::ValidationError;
use crate::model::{InputDecl, InputSource, OutputDecl, Phase, TypeDef, TypeRef, Workflow};
use crate::yaml::{self, Kind, Node, Position};

fn document_error(at: Position, message: impl Into<String>) -> ValidationError {
    ValidationError::DocumentError {
        message: message.into(),
        line: at.line,
        column: at.column,
    }
}

fn text(node: &Node) -> Option<String> {
    match &node.kind {
        Kind::Scalar(text, _) => Some(text.clone()),
        _ => None,
    }
}

impl Workflow {
    /// Parses a workflow document and validates it, reporting every problem at once (each with
    /// its line and column): YAML syntax, sections of the wrong shape, the four `inputs` checks
    /// of RFC-0024 §8, unknown `depends_on` targets, dependency cycles and unknown types.
    ///
    /// ```
    /// use io_workflow::Workflow;
    /// let problems = Workflow::from_yaml("workflow:\n  b:\n    title: B\n    inputs:\n      x: a.y\n").unwrap_err();
    /// assert_eq!(problems[0].to_json()["error"], "InputWiringError");
    /// assert_eq!(problems[0].position(), (5, 10));
    /// ```
    pub fn from_yaml(text: &str) -> Result<Workflow, Vec<ValidationError>> {
        let (workflow, mut problems) = Self::load(text);
        if let Some(workflow) = &workflow {
            problems.extend(workflow.validate());
        }
        problems.sort_by_key(ValidationError::position);
        match workflow {
            Some(workflow) if problems.is_empty() => Ok(workflow),
            _ => Err(problems),
        }
    }

    /// Reads a workflow file; see [`Workflow::from_yaml`].
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Workflow, Vec<ValidationError>> {
        let text = std::fs::read_to_string(path.as_ref()).map_err(|err| {
            vec![document_error(
                Position { line: 0, column: 0 },
                format!("{}: {err}", path.as_ref().display()),
            )]
        })?;
        Workflow::from_yaml(&text)
    }

    /// Structure only: builds what can be built and lists what cannot.
    fn load(source: &str) -> (Option<Workflow>, Vec<ValidationError>) {
        let root = match yaml::parse(source) {
            Ok(root) => root,
            Err(err) => {
                return (
                    None,
                    vec![document_error(
                        err.at,
                        format!("the document is not valid YAML: {}", err.message),
                    )],
                );
            }
        };
        let mut problems = Vec::new();
        let Some(entries) = root.entries() else {
            return (
                None,
                vec![document_error(
                    root.at,
                    "a workflow document is a mapping with `workflow`, `types` and `info`",
                )],
            );
        };
        let mut workflow = Workflow::default();
        for (key, value) in entries {
            match key.as_str() {
                Some("openintent") => workflow.openintent = text(value).unwrap_or_default(),
                Some("info") => {
                    workflow.name = value.get("name").and_then(text).unwrap_or_default();
                    workflow.version = value.get("version").and_then(text).unwrap_or_default();
                }
                Some("types") => workflow.types = load_types(value, &mut problems),
                Some("workflow") => workflow.phases = load_phases(value, &mut problems),
                // Other top-level sections (descriptions, extensions) belong to other RFCs.
                _ => {}
            }
        }
        if root.get("workflow").is_none() {
            problems.push(document_error(
                root.at,
                "the document has no `workflow` section",
            ));
        }
        (Some(workflow), problems)
    }
}

fn load_types(node: &Node, problems: &mut Vec<ValidationError>) -> Vec<TypeDef> {
    let Some(entries) = node.entries() else {
        problems.push(document_error(
            node.at,
            "`types` maps type names to object shapes",
        ));
        return Vec::new();
    };
    let mut types = Vec::new();
    for (name, shape) in entries {
        let name_text = text(name).unwrap_or_default();
        let Some(fields) = shape.entries() else {
            problems.push(document_error(
                shape.at,
                format!("type `{name_text}` must map field names to types"),
            ));
            continue;
        };
        let mut declared = Vec::new();
        let mut positions = Vec::new();
        for (field, ty) in fields {
            let field_name = text(field).unwrap_or_default();
            let written = text(ty).unwrap_or_default();
            match TypeRef::parse(&written) {
                Some(parsed) => {
                    declared.push((field_name, parsed));
                    positions.push(ty.at);
                }
                None => problems.push(ValidationError::TypeDeclarationError {
                    location: format!("types.{name_text}.{field_name}"),
                    declared: clip(&written),
                    suggestion: "use string, number, integer, boolean, object, array, array<T> or a name from `types`".into(),
                    message: format!("`{}` is not a type", clip(&written)),
                    line: ty.at.line,
                    column: ty.at.column,
                }),
            }
        }
        types.push(TypeDef {
            name: name_text,
            fields: declared,
            field_positions: positions,
            at: name.at,
        });
    }
    types
}

fn load_phases(node: &Node, problems: &mut Vec<ValidationError>) -> Vec<Phase> {
    let Some(entries) = node.entries() else {
        problems.push(document_error(
            node.at,
            "`workflow` maps phase names to phase definitions",
        ));
        return Vec::new();
    };
    let mut phases = Vec::new();
    for (name, body) in entries {
        let name_text = text(name).unwrap_or_default();
        let mut phase = Phase::new(name_text.clone(), "");
        phase.at = name.at;
        if body.entries().is_none() {
            problems.push(document_error(
                body.at,
                format!("phase `{name_text}` must be a mapping (title, assign, ...)"),
            ));
            phases.push(phase);
            continue;
        }
        phase.title = body.get("title").and_then(text).unwrap_or_default();
        phase.assign = body.get("assign").and_then(text);
        if let Some(deps) = body.get("depends_on") {
            match (&deps.kind, deps.items()) {
                (_, Some(items)) => {
                    for item in items {
                        match text(item) {
                            Some(dep) => phase.depends_on.push((dep, item.at)),
                            None => problems.push(document_error(
                                item.at,
                                "a `depends_on` entry is a phase name",
                            )),
                        }
                    }
                }
                (Kind::Scalar(dep, _), None) => phase.depends_on.push((dep.clone(), deps.at)),
                _ => problems.push(document_error(
                    deps.at,
                    "`depends_on` is a list of phase names",
                )),
            }
        }
        if let Some(inputs) = body.get("inputs") {
            match inputs.entries() {
                Some(entries) => {
                    for (key, value) in entries {
                        let expression = text(value).unwrap_or_else(|| value.to_json().to_string());
                        phase.inputs.push(InputDecl {
                            key: text(key).unwrap_or_default(),
                            source: text(value).map_or(InputSource::Malformed, |e| InputSource::parse(&e)),
                            expression,
                            at: value.at,
                        });
                    }
                }
                None => problems.push(document_error(inputs.at, "`inputs` maps input keys to `phase.key`, `$trigger.key` or `$initial_state.key`")),
            }
        }
        if let Some(outputs) = body.get("outputs") {
            phase.outputs = Some(load_outputs(&name_text, outputs, problems));
        }
        phases.push(phase);
    }
    phases
}

/// `key: type`, or `key: { type, required }`.
fn load_outputs(phase: &str, node: &Node, problems: &mut Vec<ValidationError>) -> Vec<OutputDecl> {
    let Some(entries) = node.entries() else {
        problems.push(document_error(
            node.at,
            "`outputs` maps output keys to types",
        ));
        return Vec::new();
    };
    let mut outputs = Vec::new();
    for (key, value) in entries {
        let key_text = text(key).unwrap_or_default();
        let (written, required, at) = match (&value.kind, value.entries()) {
            (Kind::Scalar(t, _), _) => (t.clone(), true, value.at),
            (_, Some(_)) => {
                let ty = value.get("type");
                let required = match value.get("required").map(|r| r.to_json()) {
                    None => true,
                    Some(serde_json::Value::Bool(b)) => b,
                    Some(_) => {
                        problems.push(document_error(value.at, "`required` is `true` or `false`"));
                        true
                    }
                };
                (
                    ty.and_then(text).unwrap_or_default(),
                    required,
                    ty.map_or(value.at, |t| t.at),
                )
            }
            _ => (String::new(), true, value.at),
        };
        match TypeRef::parse(&written) {
            Some(ty) => outputs.push(OutputDecl { key: key_text, ty, required, at }),
            None => problems.push(ValidationError::TypeDeclarationError {
                location: format!("workflow.{phase}.outputs.{key_text}"),
                declared: clip(&written),
                suggestion: "use string, number, integer, boolean, object, array, array<T>, a name from `types`, or `{ type: ..., required: false }`".into(),
                message: format!("output `{key_text}` of phase `{phase}` has no valid type (`{}`)", clip(&written)),
                line: at.line,
                column: at.column,
            }),
        }
    }
    outputs
}

/// Text from the document as shown in an error: at most 120 characters, so a hostile value
/// cannot make a message as large as itself.
pub(crate) fn clip(text: &str) -> String {
    const SHOWN: usize = 120;
    match text.char_indices().nth(SHOWN) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
    }
}
