//! From YAML text to a [`Workflow`], reporting every structural problem with its position.
//!
//! The document format is closed: a key it does not have is refused (`UnknownKeyError`, with
//! "did you mean"), since a typo such as `ouputs:` would otherwise switch validation off in
//! silence; keys starting with `x-` are extensions and are ignored. A key written twice in one
//! mapping is refused (`DuplicateKeyError`). `openintent`, `info.name` and each phase's
//! `assign` are required (`MissingKeyError`); a missing `title` is made from the phase name.

use serde_json::Value;

use crate::errors::ValidationError;
use crate::model::{InputDecl, InputSource, OutputDecl, Phase, TypeDef, TypeRef, Workflow};
use crate::validate::closest;
use crate::yaml::{self, Kind, Node, Position};

const TOP_KEYS: &[&str] = &["openintent", "info", "types", "workflow"];
const INFO_KEYS: &[&str] = &["name", "version", "description"];
const PHASE_KEYS: &[&str] = &[
    "title",
    "description",
    "assign",
    "depends_on",
    "inputs",
    "outputs",
];
const OUTPUT_KEYS: &[&str] = &["type", "required", "description"];
/// The longest name a document may give a phase, a type, a field or an input or output key.
const MAX_NAME_CHARS: usize = 128;

/// The largest workflow file [`Workflow::from_file`] reads: 16 MiB.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A workflow file's text (see [`Workflow::from_file`]); the error says why it cannot be had.
fn read_document(path: &std::path::Path) -> Result<String, String> {
    let bytes = agentio_core::limits::read_file_bounded(path, MAX_FILE_BYTES)
        .map_err(|err| err.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".into())
}

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

/// A key as shown in a message: its text, or its YAML form when it is not a scalar.
fn key_text(node: &Node) -> String {
    text(node).unwrap_or_else(|| clip(&node.to_json().to_string()))
}

/// The entries of a mapping, each key once: a repeated key is a `DuplicateKeyError`, and only
/// its first occurrence counts. With `allowed`, a key outside it (and not an `x-` extension) is
/// an `UnknownKeyError` and is left out too.
fn entries<'a>(
    node: &'a Node,
    location: &str,
    allowed: Option<&[&str]>,
    problems: &mut Vec<ValidationError>,
) -> Vec<(String, &'a Node, &'a Node)> {
    let mut seen: Vec<(String, &'a Node, &'a Node)> = Vec::new();
    for (key, value) in node.entries().unwrap_or_default() {
        let name = key_text(key);
        if let Some((_, first, _)) = seen.iter().find(|(k, _, _)| *k == name) {
            problems.push(duplicate(location, &name, first.at, key.at));
            continue;
        }
        if allowed.is_none() && name.chars().count() > MAX_NAME_CHARS {
            problems.push(document_error(
                key.at,
                format!(
                    "`{}` is too long for a name in {location} (at most {MAX_NAME_CHARS} characters)",
                    clip(&name)
                ),
            ));
            continue;
        }
        if let Some(allowed) = allowed
            && !allowed.contains(&name.as_str())
        {
            if !name.starts_with("x-") {
                let suggestion = closest(&name, allowed.iter().copied()).map_or_else(
                    || {
                        format!(
                            "the keys of {location} are {}; extensions start with `x-`",
                            allowed
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    },
                    |close| format!("did you mean `{close}`?"),
                );
                problems.push(ValidationError::UnknownKeyError {
                    location: location.to_owned(),
                    key: name.clone(),
                    suggestion,
                    message: format!("{location} has no key `{}`", clip(&name)),
                    line: key.at.line,
                    column: key.at.column,
                });
            }
            continue;
        }
        seen.push((name, key, value));
    }
    seen
}

fn duplicate(location: &str, key: &str, first: Position, again: Position) -> ValidationError {
    ValidationError::DuplicateKeyError {
        location: location.to_owned(),
        key: key.to_owned(),
        suggestion: format!("`{key}` is first written at line {}; keep one", first.line),
        message: format!("`{key}` is written twice in {location}"),
        line: again.line,
        column: again.column,
    }
}

fn missing(location: &str, key: &str, at: Position, suggestion: &str) -> ValidationError {
    ValidationError::MissingKeyError {
        location: location.to_owned(),
        key: key.to_owned(),
        suggestion: suggestion.to_owned(),
        message: format!("{location} has no `{key}`, which it requires"),
        line: at.line,
        column: at.column,
    }
}

impl Workflow {
    /// Parses a workflow document and validates it, reporting every problem at once (each with
    /// its line and column): YAML syntax, unknown and duplicate keys, missing required keys,
    /// sections of the wrong shape, the four `inputs` checks of RFC-0024 §8, unknown
    /// `depends_on` targets, dependency cycles and unknown types.
    ///
    /// ```
    /// use agentio_workflow::Workflow;
    /// let text = "openintent: \"1.0\"\ninfo:\n  name: demo\nworkflow:\n  b:\n    assign: x\n    inputs:\n      x: a.y\n";
    /// let problems = Workflow::from_yaml(text).unwrap_err();
    /// assert_eq!(problems[0].name(), "InputWiringError");
    /// assert_eq!(problems[0].position(), (8, 10));
    ///
    /// let typo = "openintent: \"1.0\"\ninfo:\n  name: demo\nworkflow:\n  a:\n    assign: x\n    ouputs:\n      n: number\n";
    /// let problems = Workflow::from_yaml(typo).unwrap_err();
    /// assert_eq!(problems[0].to_string(), "7:5: UnknownKeyError: phase 'a' has no key `ouputs` (did you mean `outputs`?)");
    /// ```
    pub fn from_yaml(text: &str) -> Result<Workflow, Vec<ValidationError>> {
        let (workflow, mut problems) = Self::load(text);
        if let Some(workflow) = &workflow {
            problems.extend(workflow.validate());
        }
        problems.sort_by_key(ValidationError::position);
        match workflow {
            Some(workflow) if problems.is_empty() => Ok(workflow),
            _ => Err(problems.into_iter().map(ValidationError::bounded).collect()),
        }
    }

    /// Reads a workflow file; see [`Workflow::from_yaml`].
    ///
    /// The file must be a regular file of at most [`MAX_FILE_BYTES`], in UTF-8. Anything else
    /// is one `DocumentError` naming the path and the reason, and nothing past the limit is
    /// read: a device such as `/dev/zero` or a FIFO is refused before a byte is read (the file
    /// is opened without blocking, so a FIFO with no writer is not waited on), and a larger
    /// file after `MAX_FILE_BYTES + 1` bytes.
    ///
    /// ```
    /// use agentio_workflow::Workflow;
    ///
    /// let problems = Workflow::from_file("/dev/zero").unwrap_err();
    /// assert_eq!(problems[0].name(), "DocumentError");
    /// assert_eq!(problems[0].message(), "/dev/zero: not a regular file");
    /// ```
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Workflow, Vec<ValidationError>> {
        let path = path.as_ref();
        let text = read_document(path).map_err(|err| {
            vec![document_error(
                Position { line: 0, column: 0 },
                format!("{}: {err}", path.display()),
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
        if root.entries().is_none() {
            return (
                None,
                vec![document_error(
                    root.at,
                    "a workflow document is a mapping with `openintent`, `info`, `types` and `workflow`",
                )],
            );
        }
        let mut workflow = Workflow::default();
        let top = entries(&root, "the document", Some(TOP_KEYS), &mut problems);
        let get = |key: &str| top.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| *v);
        match get("openintent") {
            Some(value) => match text(value) {
                Some(version) if !version.is_empty() => workflow.openintent = version,
                _ => problems.push(document_error(
                    value.at,
                    "`openintent` is the format version, like `openintent: \"1.0\"`",
                )),
            },
            None => problems.push(missing(
                "the document",
                "openintent",
                root.at,
                "add `openintent: \"1.0\"` at the top",
            )),
        }
        match get("info") {
            Some(info) if info.entries().is_some() => {
                let fields = entries(info, "info", Some(INFO_KEYS), &mut problems);
                let field =
                    |key: &str| fields.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| *v);
                match field("name").and_then(text) {
                    Some(name) if !name.is_empty() => workflow.name = name,
                    _ => problems.push(missing(
                        "info",
                        "name",
                        info.at,
                        "name the workflow: `info: { name: \"Quarterly report\" }`",
                    )),
                }
                workflow.version = field("version").and_then(text).unwrap_or_default();
            }
            Some(info) => problems.push(document_error(
                info.at,
                "`info` is a mapping with `name` and `version`",
            )),
            None => problems.push(missing(
                "the document",
                "info",
                root.at,
                "add `info:` with the workflow's `name`",
            )),
        }
        if let Some(types) = get("types") {
            workflow.types = load_types(types, &mut problems);
        }
        match get("workflow") {
            Some(phases) => workflow.phases = load_phases(phases, &mut problems),
            None => problems.push(document_error(
                root.at,
                "the document has no `workflow` section",
            )),
        }
        (Some(workflow), problems)
    }
}

fn load_types(node: &Node, problems: &mut Vec<ValidationError>) -> Vec<TypeDef> {
    if node.entries().is_none() {
        problems.push(document_error(
            node.at,
            "`types` maps type names to object shapes or `{ enum: [...] }`",
        ));
        return Vec::new();
    }
    let mut types = Vec::new();
    for (name_text, name, shape) in entries(node, "types", None, problems) {
        let Some(shape_entries) = shape.entries() else {
            problems.push(document_error(
                shape.at,
                format!(
                    "type `{name_text}` must map field names to types, or be `{{ enum: [...] }}`"
                ),
            ));
            continue;
        };
        // `Status: { enum: [approved, rejected] }`: an enum type.
        if let [(key, values)] = shape_entries
            && key.as_str() == Some("enum")
        {
            match values.items() {
                Some(items) if !items.is_empty() => types.push(TypeDef {
                    name: name_text,
                    fields: Vec::new(),
                    values: Some(items.iter().map(Node::to_json).collect()),
                    field_positions: Vec::new(),
                    at: name.at,
                }),
                _ => problems.push(document_error(
                    values.at,
                    format!("the `enum` of type `{name_text}` is a non-empty list of values"),
                )),
            }
            continue;
        }
        let location = format!("types.{name_text}");
        let mut declared = Vec::new();
        let mut positions = Vec::new();
        for (field_name, _, ty) in entries(shape, &location, None, problems) {
            match text(ty).and_then(|written| TypeRef::parse(&written).map(|t| (written, t))) {
                Some((_, parsed)) => {
                    declared.push((field_name, parsed));
                    positions.push(ty.at);
                }
                None => problems.push(type_error(
                    format!("types.{name_text}.{field_name}"),
                    ty,
                    format!("field `{field_name}` of type `{name_text}`"),
                    "use string, number, integer, boolean, object, array, array<T>, any or a name from `types`",
                )),
            }
        }
        types.push(TypeDef {
            name: name_text,
            fields: declared,
            values: None,
            field_positions: positions,
            at: name.at,
        });
    }
    types
}

/// A `TypeDeclarationError` for a type node that is not a type; never with an empty name.
fn type_error(location: String, node: &Node, what: String, suggestion: &str) -> ValidationError {
    let (declared, message) = match text(node) {
        Some(written) if !written.trim().is_empty() => (
            clip(&written),
            format!(
                "{what} has no valid type: `{}` is not a type",
                clip(&written)
            ),
        ),
        Some(_) => (
            String::new(),
            format!("{what} has no type: the type is empty"),
        ),
        None => (
            clip(&node.to_json().to_string()),
            format!("{what} has no type: a type is written as a name, like `string`"),
        ),
    };
    ValidationError::TypeDeclarationError {
        location,
        declared,
        suggestion: suggestion.to_owned(),
        message,
        line: node.at.line,
        column: node.at.column,
    }
}

/// `fetch_financials` -> `Fetch financials`.
fn title_from(name: &str) -> String {
    let words = name.replace(['_', '-'], " ");
    let mut chars = words.trim().chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn load_phases(node: &Node, problems: &mut Vec<ValidationError>) -> Vec<Phase> {
    if node.entries().is_none() {
        problems.push(document_error(
            node.at,
            "`workflow` maps phase names to phase definitions",
        ));
        return Vec::new();
    }
    let mut phases = Vec::new();
    for (name_text, name, body) in entries(node, "workflow", None, problems) {
        let mut phase = Phase::new(name_text.clone(), title_from(&name_text));
        phase.at = name.at;
        if body.entries().is_none() {
            problems.push(document_error(
                body.at,
                format!("phase `{name_text}` must be a mapping (title, assign, ...)"),
            ));
            phases.push(phase);
            continue;
        }
        let location = format!("phase '{name_text}'");
        let fields = entries(body, &location, Some(PHASE_KEYS), problems);
        let field = |key: &str| fields.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| *v);
        if let Some(title) = field("title").and_then(text).filter(|t| !t.is_empty()) {
            phase.title = title;
        }
        match field("assign").and_then(text) {
            Some(assign) if !assign.is_empty() => phase.assign = Some(assign),
            _ => problems.push(missing(
                &location,
                "assign",
                name.at,
                "name the agent that runs it: `assign: data-agent`",
            )),
        }
        if let Some(deps) = field("depends_on") {
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
        if let Some(inputs) = field("inputs") {
            if inputs.entries().is_some() {
                let location = format!("the inputs of phase '{name_text}'");
                for (key, _, value) in entries(inputs, &location, None, problems) {
                    let expression = text(value).unwrap_or_else(|| value.to_json().to_string());
                    phase.inputs.push(InputDecl {
                        key,
                        source: text(value)
                            .map_or(InputSource::Malformed, |e| InputSource::parse(&e)),
                        expression,
                        at: value.at,
                    });
                }
            } else {
                problems.push(document_error(inputs.at, "`inputs` maps input keys to `phase.key`, `$trigger.key` or `$initial_state.key`"));
            }
        }
        if let Some(outputs) = field("outputs") {
            phase.outputs = Some(load_outputs(&name_text, outputs, problems));
        }
        phases.push(phase);
    }
    phases
}

/// `key: type`, `key: { type, required }`, or the legacy list `[key, ...]` (every key
/// required, of any type).
fn load_outputs(phase: &str, node: &Node, problems: &mut Vec<ValidationError>) -> Vec<OutputDecl> {
    let location = format!("the outputs of phase '{phase}'");
    if let Some(items) = node.items() {
        let mut outputs: Vec<OutputDecl> = Vec::new();
        for item in items {
            let Some(key) = text(item).filter(|k| !k.is_empty()) else {
                problems.push(document_error(
                    item.at,
                    "each entry of a list of outputs is an output key",
                ));
                continue;
            };
            if let Some(first) = outputs.iter().find(|o| o.key == key) {
                problems.push(ValidationError::DuplicateKeyError {
                    location: location.clone(),
                    key: key.clone(),
                    suggestion: format!(
                        "`{key}` is first written at line {}; keep one",
                        first.at.line
                    ),
                    message: format!("`{key}` is written twice in {location}"),
                    line: item.at.line,
                    column: item.at.column,
                });
                continue;
            }
            outputs.push(OutputDecl {
                key,
                ty: TypeRef::Any,
                required: true,
                at: item.at,
            });
        }
        return outputs;
    }
    if node.entries().is_none() {
        problems.push(document_error(
            node.at,
            "`outputs` maps output keys to types (or lists output keys)",
        ));
        return Vec::new();
    }
    let mut outputs = Vec::new();
    for (key_text, _, value) in entries(node, &location, None, problems) {
        let (ty_node, required) = match value.entries() {
            Some(_) => {
                let decl_location = format!("output `{key_text}` of phase '{phase}'");
                let fields = entries(value, &decl_location, Some(OUTPUT_KEYS), problems);
                let field =
                    |key: &str| fields.iter().find(|(k, _, _)| k == key).map(|(_, _, v)| *v);
                let required = match field("required").map(Node::to_json) {
                    None => true,
                    Some(Value::Bool(b)) => b,
                    Some(_) => {
                        problems.push(document_error(value.at, "`required` is `true` or `false`"));
                        true
                    }
                };
                match field("type") {
                    Some(ty) => (ty, required),
                    None => {
                        problems.push(missing(
                            &decl_location,
                            "type",
                            value.at,
                            "give its type: `{ type: string, required: false }`",
                        ));
                        continue;
                    }
                }
            }
            None => (value, true),
        };
        match text(ty_node).and_then(|written| TypeRef::parse(&written)) {
            Some(ty) => outputs.push(OutputDecl { key: key_text, ty, required, at: ty_node.at }),
            None => problems.push(type_error(
                format!("workflow.{phase}.outputs.{key_text}"),
                ty_node,
                format!("output `{key_text}` of phase `{phase}`"),
                "use string, number, integer, boolean, object, array, array<T>, any, a name from `types`, or `{ type: ..., required: false }`",
            )),
        }
    }
    outputs
}

/// Text from the document as shown in an error: at most 120 characters, so a hostile value
/// cannot make a message as large as itself.
pub(crate) fn clip(text: &str) -> String {
    let mut shown = text.to_owned();
    crate::errors::cut(&mut shown, 120);
    shown
}

#[cfg(test)]
mod file_tests {
    use super::{MAX_FILE_BYTES, read_document};
    use crate::Workflow;

    const GOOD: &str = "openintent: \"1.0\"\ninfo:\n  name: demo\nworkflow:\n  a:\n    assign: x\n    outputs:\n      n: number\n";

    #[test]
    fn a_regular_file_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.yaml");
        std::fs::write(&path, GOOD).unwrap();
        assert_eq!(read_document(&path).unwrap(), GOOD);
        assert!(Workflow::from_file(&path).is_ok());
    }

    #[test]
    fn the_limit_is_inclusive_and_one_byte_more_is_refused() {
        // The documented limit (16 MiB), which callers plan for.
        assert_eq!(MAX_FILE_BYTES, 16 << 20);
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("at.yaml");
        let file = std::fs::File::create(&at).unwrap();
        file.set_len(MAX_FILE_BYTES).unwrap();
        assert_eq!(read_document(&at).unwrap().len() as u64, MAX_FILE_BYTES);
        let over = dir.path().join("over.yaml");
        let file = std::fs::File::create(&over).unwrap();
        file.set_len(MAX_FILE_BYTES + 1).unwrap();
        assert_eq!(
            read_document(&over).unwrap_err(),
            format!("larger than {MAX_FILE_BYTES} bytes")
        );
        let problems = Workflow::from_file(&over).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].name(), "DocumentError");
        assert_eq!(
            problems[0].message(),
            format!("{}: larger than {MAX_FILE_BYTES} bytes", over.display())
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.yaml");
        std::fs::write(&path, b"openintent: \xff\n").unwrap();
        assert_eq!(read_document(&path).unwrap_err(), "not UTF-8 text");
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_document(dir.path()).unwrap_err(), "not a regular file");
    }
}
