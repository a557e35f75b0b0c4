//! `define_io_handle`: the four IO blocks of AIP-16 in canonical form, with the input check.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{AgentError, ErrorCode, Violation};
use crate::files::path::{PathError, check_key, check_template};
use crate::io::{AgentInput, AgentOutput};
use crate::{BoundarySchema, Direction};

/// The reserved input property through which the host hands a body its scratch root.
pub const FS_ROOT_FIELD: &str = "_workflowFsRoot";

/// Refuses an input that carries [`FS_ROOT_FIELD`] when the host will not set it.
///
/// AIP-16 has the host overwrite a caller's `_workflowFsRoot` when a unit declares files. A
/// unit that declares none gets no scratch root, so a caller's value would reach the body
/// unchanged and name any directory it likes; agent-io refuses it instead (`input_invalid` at
/// `/_workflowFsRoot`), on every contract: the field is the host's, never a caller's.
///
/// ```
/// use agentio_core::files::refuse_caller_fs_root;
/// use serde_json::json;
///
/// assert!(refuse_caller_fs_root(&json!({ "city": "Oslo" })).is_ok());
/// let err = refuse_caller_fs_root(&json!({ "_workflowFsRoot": "/etc" })).unwrap_err();
/// assert_eq!(err.code().as_str(), "input_invalid");
/// assert_eq!(err.violations()[0].pointer, "/_workflowFsRoot");
/// ```
pub fn refuse_caller_fs_root(input: &Value) -> Result<(), AgentError> {
    match input.as_object() {
        Some(object) if object.contains_key(FS_ROOT_FIELD) => Err(AgentError::new(
            ErrorCode::InputInvalid,
            "`_workflowFsRoot` is set by the host, never by a caller",
        )
        .with_violations(vec![Violation {
            pointer: format!("/{FS_ROOT_FIELD}"),
            keyword: "reserved".into(),
            message: "the host's scratch root; a caller may not supply it".into(),
        }])),
        _ => Ok(()),
    }
}

/// `ro` or `rw`: a convention AIP-16 records but does not enforce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileMode {
    /// Read-only (typical for inputs).
    Ro,
    /// Read-write (typical for outputs).
    Rw,
}

/// One declared file: `key => { path, mode, contentType }`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    /// Workspace-relative path; may use `<runId>`, `<workflowId>`, `<toolId>`, `<isoDate>`.
    pub path: String,
    /// `ro` or `rw`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FileMode>,
    /// Informational MIME type.
    #[serde(
        rename = "contentType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub content_type: Option<String>,
}

impl FileEntry {
    /// An entry for `path` with no mode and no content type.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, FileMode};
    ///
    /// let entry = FileEntry::new("reports/<isoDate>.csv");
    /// assert_eq!((entry.mode, entry.content_type), (None, None));
    /// // The other fields by struct update:
    /// let csv = FileEntry { mode: Some(FileMode::Rw), content_type: Some("text/csv".into()), ..entry };
    /// assert_eq!(serde_json::to_value(&csv).unwrap()["contentType"], "text/csv");
    /// ```
    pub fn new(path: impl Into<String>) -> Self {
        FileEntry {
            path: path.into(),
            mode: None,
            content_type: None,
        }
    }
}

/// What `define_io_handle` takes (AIP-16 `IODefinition`): schemas (absent means "any object") and
/// file maps (absent means empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IoDefinition {
    /// The structured input schema.
    pub inputs: Option<Value>,
    /// The structured output schema.
    pub outputs: Option<Value>,
    /// Files staged into the scratch root before the body runs.
    pub inputs_files: BTreeMap<String, FileEntry>,
    /// Files synced from the scratch root after the body completes.
    pub outputs_files: BTreeMap<String, FileEntry>,
    /// A limit on the size of each staged input file, in bytes, below the host's own
    /// ([`crate::files::Workspace::with_max_input_bytes`]). Not one of the published blocks:
    /// a Rust-side setting of this contract.
    pub max_input_bytes: Option<u64>,
}

impl IoDefinition {
    /// A definition with the schemas of two Rust types.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, FileMode, IoDefinition, define_io_handle};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Ask { locale: String }
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
    /// struct Done { pages: u32 }
    ///
    /// let definition = IoDefinition::typed::<Ask, Done>()
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry { mode: Some(FileMode::Rw), ..FileEntry::new("out/<runId>.txt") })
    ///     .max_input_bytes(10 << 20);
    /// let io = define_io_handle(definition).unwrap();
    /// assert_eq!(io.inputs()["properties"]["locale"]["type"], "string");
    /// assert_eq!(io.outputs_files()["text"].path, "out/<runId>.txt");
    /// assert_eq!(io.max_input_bytes(), Some(10 << 20));
    ///
    /// // A key that is not a plain file name, or a path that leaves the workspace, is refused.
    /// let bad = IoDefinition::typed::<Ask, Done>().input_file("../scan", FileEntry::new("../x.png"));
    /// assert_eq!(define_io_handle(bad).unwrap_err().problems.len(), 2);
    /// ```
    pub fn typed<I: AgentInput, O: AgentOutput>() -> Self {
        IoDefinition {
            inputs: Some(I::input_schema().clone()),
            outputs: Some(O::output_schema().clone()),
            ..IoDefinition::default()
        }
    }

    /// Adds an input file (an example is on [`Self::typed`]).
    #[must_use]
    pub fn input_file(mut self, key: impl Into<String>, entry: FileEntry) -> Self {
        self.inputs_files.insert(key.into(), entry);
        self
    }

    /// Sets the per-contract limit on each staged input file, in bytes (an example is on
    /// [`Self::typed`]).
    #[must_use]
    pub fn max_input_bytes(mut self, bytes: u64) -> Self {
        self.max_input_bytes = Some(bytes);
        self
    }

    /// Adds an output file (an example is on [`Self::typed`]).
    #[must_use]
    pub fn output_file(mut self, key: impl Into<String>, entry: FileEntry) -> Self {
        self.outputs_files.insert(key.into(), entry);
        self
    }
}

/// Why a definition has no handle: each problem with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoDefinitionError {
    /// Every problem, as (where, what).
    pub problems: Vec<(String, String)>,
}

impl fmt::Display for IoDefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid IO definition:")?;
        for (at, what) in &self.problems {
            write!(f, "\n  - {at}: {what}")?;
        }
        Ok(())
    }
}

impl std::error::Error for IoDefinitionError {}

/// AIP-16's `IOHandle`: the four blocks in canonical form (file maps never absent) and the
/// input check. Build it with [`define_io_handle`] or `#[define_io(...)]`.
#[derive(Debug)]
pub struct IoHandle {
    inputs: BoundarySchema,
    outputs: BoundarySchema,
    inputs_files: BTreeMap<String, FileEntry>,
    outputs_files: BTreeMap<String, FileEntry>,
    max_input_bytes: Option<u64>,
}

/// AIP-16's `defineIO`: canonicalises the blocks and returns the handle.
///
/// Missing schemas become `{"type": "object"}`; missing file maps become empty. When either
/// file map is non-empty the input schema gains an optional string property
/// `_workflowFsRoot` (added, never replacing one the schema already declares). Keys and paths
/// are checked: a key is a plain file name, a path is workspace-relative with no `..` and only
/// the four AIP-16 tokens. A declared `_workflowFsRoot` that is not a string is refused.
///
/// ```
/// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
/// use serde_json::json;
///
/// let io = define_io_handle(IoDefinition {
///     inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } },
///                          "additionalProperties": false })),
///     ..IoDefinition::default()
/// }.input_file("source", FileEntry::new("uploads/scan.png"))).unwrap();
///
/// assert_eq!(io.inputs()["properties"]["_workflowFsRoot"]["type"], "string");
/// assert!(io.validate_input(&json!({ "locale": "en", "_workflowFsRoot": "/tmp/r1" })).is_ok());
/// assert!(io.outputs_files().is_empty());
/// ```
pub fn define_io_handle(definition: IoDefinition) -> Result<IoHandle, IoDefinitionError> {
    let (handle, problems) = build_io(definition);
    if problems.is_empty() {
        Ok(handle)
    } else {
        Err(IoDefinitionError { problems })
    }
}

/// Builds the handle and lists the problems of the definition (the handle is usable either
/// way; `define_io_handle` refuses it when there are problems).
pub(crate) fn build_io(definition: IoDefinition) -> (IoHandle, Vec<(String, String)>) {
    let mut problems = Vec::new();
    for (block, files) in [
        ("inputsFiles", &definition.inputs_files),
        ("outputsFiles", &definition.outputs_files),
    ] {
        for (key, entry) in files {
            if let Err(err) = check_key(key) {
                problems.push((format!("/{block}/{key}"), err.to_string()));
            }
            if let Err(err) = check_template(&entry.path) {
                problems.push((format!("/{block}/{key}/path"), err.to_string()));
            }
        }
    }
    let has_files = !definition.inputs_files.is_empty() || !definition.outputs_files.is_empty();
    let mut inputs = definition
        .inputs
        .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
    if has_files {
        let declared_at = format!("/properties/{FS_ROOT_FIELD}");
        match inputs.pointer(&declared_at) {
            // Declared already: left in place, but it has to accept the string the host injects.
            Some(declared) => {
                // Checked as a document of its own with the input schema's references in
                // reach: a derived `Option<FsRoot>` is a `$ref` to `#/$defs/FsRoot`.
                let candidate = crate::compat::schema_at(&inputs, &declared_at)
                    .unwrap_or_else(|| declared.clone());
                let accepts_string =
                    BoundarySchema::from_value("_workflowFsRoot", Direction::Input, candidate)
                        .validate(&json!("/scratch/root"))
                        .is_ok();
                if !accepts_string {
                    problems.push((
                        format!("/inputs/properties/{FS_ROOT_FIELD}"),
                        "the declared `_workflowFsRoot` does not accept a string path, which the host injects".into(),
                    ));
                }
            }
            None => {
                if let Some(object) = inputs.as_object_mut() {
                    let properties = object.entry("properties").or_insert_with(|| json!({}));
                    if let Some(properties) = properties.as_object_mut() {
                        properties.insert(
                            FS_ROOT_FIELD.to_owned(),
                            json!({ "type": "string", "description": "Reserved: the host-injected scratch root path." }),
                        );
                    }
                }
            }
        }
    }
    let outputs = definition
        .outputs
        .unwrap_or_else(|| json!({ "type": "object", "properties": {} }));
    let inputs = BoundarySchema::from_value("inputs", Direction::Input, inputs);
    let outputs = BoundarySchema::from_value("outputs", Direction::Output, outputs);
    for (at, schema) in [("/inputs", &inputs), ("/outputs", &outputs)] {
        if let Some(reason) = schema.compile_error() {
            problems.push((
                at.to_owned(),
                format!("the schema does not compile: {reason}"),
            ));
        }
    }
    let handle = IoHandle {
        inputs,
        outputs,
        inputs_files: definition.inputs_files,
        outputs_files: definition.outputs_files,
        max_input_bytes: definition.max_input_bytes,
    };
    (handle, problems)
}

impl IoHandle {
    /// The input schema, with `_workflowFsRoot` when files are declared.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
    /// use serde_json::json;
    ///
    /// let io = define_io_handle(
    ///     IoDefinition {
    ///         inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } }, "required": ["locale"] })),
    ///         outputs: Some(json!({ "type": "object", "properties": { "pages": { "type": "integer" } }, "required": ["pages"] })),
    ///         ..IoDefinition::default()
    ///     }
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry::new("out/<runId>.txt")),
    /// )
    /// .unwrap();
    /// assert_eq!(io.inputs()["properties"]["_workflowFsRoot"]["type"], "string");
    /// assert_eq!(io.outputs()["required"], json!(["pages"]));
    /// assert_eq!(io.inputs_files()["scan"].path, "uploads/<runId>/scan.png");
    /// assert_eq!(io.outputs_files().keys().collect::<Vec<_>>(), ["text"]);
    /// assert!(io.has_files());
    /// assert_eq!(io.max_input_bytes(), None);
    /// ```
    pub fn inputs(&self) -> &Value {
        self.inputs.schema()
    }

    /// The output schema (an example is on [`Self::inputs`]).
    pub fn outputs(&self) -> &Value {
        self.outputs.schema()
    }

    /// Files staged before the body runs (never absent; empty when none; an example is on
    /// [`Self::inputs`]).
    pub fn inputs_files(&self) -> &BTreeMap<String, FileEntry> {
        &self.inputs_files
    }

    /// Files synced after the body completes (never absent; empty when none; an example is on
    /// [`Self::inputs`]).
    pub fn outputs_files(&self) -> &BTreeMap<String, FileEntry> {
        &self.outputs_files
    }

    /// The contract's limit on each staged input file, in bytes, if it sets one (examples are on
    /// [`Self::inputs`] and [`IoDefinition::typed`]).
    pub fn max_input_bytes(&self) -> Option<u64> {
        self.max_input_bytes
    }

    /// Whether either file map is non-empty (and so whether the host injects the root).
    ///
    /// ```
    /// use agentio_core::files::{IoDefinition, define_io_handle};
    ///
    /// let plain = define_io_handle(IoDefinition::default()).unwrap();
    /// assert!(!plain.has_files());
    /// // No files, no injected root.
    /// assert!(plain.inputs()["properties"].get("_workflowFsRoot").is_none());
    /// ```
    pub fn has_files(&self) -> bool {
        !self.inputs_files.is_empty() || !self.outputs_files.is_empty()
    }

    /// Validates a candidate input against the augmented input schema (AIP-16
    /// `validateInput`): `input_invalid` with a JSON pointer for each violation.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
    /// use serde_json::json;
    ///
    /// let io = define_io_handle(
    ///     IoDefinition {
    ///         inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } }, "required": ["locale"] })),
    ///         outputs: Some(json!({ "type": "object", "properties": { "pages": { "type": "integer" } }, "required": ["pages"] })),
    ///         ..IoDefinition::default()
    ///     }
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry::new("out/<runId>.txt")),
    /// )
    /// .unwrap();
    /// assert!(io.validate_input(&json!({ "locale": "en", "_workflowFsRoot": "/scratch/r1" })).is_ok());
    /// let err = io.validate_input(&json!({ "_workflowFsRoot": 7 })).unwrap_err();
    /// assert_eq!(err.code().as_str(), "input_invalid");
    /// let mut pointers: Vec<_> = err.violations().iter().map(|v| v.pointer.as_str()).collect();
    /// pointers.sort();
    /// assert_eq!(pointers, ["/_workflowFsRoot", "/locale"]);
    /// ```
    pub fn validate_input(&self, value: &Value) -> Result<(), AgentError> {
        self.inputs.validate(value).map_err(AgentError::from)
    }

    /// Validates a body's output against the output schema: `output_invalid` on a mismatch.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
    /// use serde_json::json;
    ///
    /// let io = define_io_handle(
    ///     IoDefinition {
    ///         inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } }, "required": ["locale"] })),
    ///         outputs: Some(json!({ "type": "object", "properties": { "pages": { "type": "integer" } }, "required": ["pages"] })),
    ///         ..IoDefinition::default()
    ///     }
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry::new("out/<runId>.txt")),
    /// )
    /// .unwrap();
    /// assert!(io.validate_output(&json!({ "pages": 3 })).is_ok());
    /// let err = io.validate_output(&json!({ "pages": "three" })).unwrap_err();
    /// assert_eq!(err.code().as_str(), "output_invalid");
    /// assert_eq!(err.violations()[0].pointer, "/pages");
    /// ```
    pub fn validate_output(&self, value: &Value) -> Result<(), AgentError> {
        self.outputs.validate(value).map_err(AgentError::from)
    }

    /// The staged path of a declared file key under a scratch root: `<root>/<key>`. `None`
    /// for a key the handle does not declare.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
    /// use serde_json::json;
    ///
    /// let io = define_io_handle(
    ///     IoDefinition {
    ///         inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } }, "required": ["locale"] })),
    ///         outputs: Some(json!({ "type": "object", "properties": { "pages": { "type": "integer" } }, "required": ["pages"] })),
    ///         ..IoDefinition::default()
    ///     }
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry::new("out/<runId>.txt")),
    /// )
    /// .unwrap();
    /// use std::path::Path;
    ///
    /// let root = Path::new("/scratch/r1");
    /// assert_eq!(io.staged_path(root, "scan"), Some(root.join("scan")));
    /// assert_eq!(io.staged_path(root, "text"), Some(root.join("text")));
    /// assert_eq!(io.staged_path(root, "other"), None);
    /// ```
    pub fn staged_path(&self, root: &Path, key: &str) -> Option<PathBuf> {
        let declared = self.inputs_files.contains_key(key) || self.outputs_files.contains_key(key);
        declared.then(|| root.join(key))
    }

    /// The IO blocks as JSON, in AIP-16's field names, for manifests and checks against
    /// IO.schema.json.
    ///
    /// ```
    /// use agentio_core::files::{FileEntry, IoDefinition, define_io_handle};
    /// use serde_json::json;
    ///
    /// let io = define_io_handle(
    ///     IoDefinition {
    ///         inputs: Some(json!({ "type": "object", "properties": { "locale": { "type": "string" } }, "required": ["locale"] })),
    ///         outputs: Some(json!({ "type": "object", "properties": { "pages": { "type": "integer" } }, "required": ["pages"] })),
    ///         ..IoDefinition::default()
    ///     }
    ///     .input_file("scan", FileEntry::new("uploads/<runId>/scan.png"))
    ///     .output_file("text", FileEntry::new("out/<runId>.txt")),
    /// )
    /// .unwrap();
    /// let blocks = io.to_blocks();
    /// assert_eq!(blocks["inputsFiles"]["scan"], json!({ "path": "uploads/<runId>/scan.png" }));
    /// assert_eq!(blocks["outputs"]["required"], json!(["pages"]));
    /// ```
    pub fn to_blocks(&self) -> Value {
        json!({
            "inputs": self.inputs(),
            "outputs": self.outputs(),
            "inputsFiles": self.inputs_files,
            "outputsFiles": self.outputs_files,
        })
    }
}

/// The scratch root a body receives through `_workflowFsRoot`, for typed inputs:
/// `#[serde(rename = "_workflowFsRoot")] root: Option<FsRoot>`.
///
/// ```
/// use agentio_core::files::FsRoot;
/// let root: FsRoot = serde_json::from_value(serde_json::json!("/tmp/run-1")).unwrap();
/// assert_eq!(root.file("data"), std::path::Path::new("/tmp/run-1/data"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
// What a model reads in the schema (not this documentation, with its Rust example).
#[schemars(description = "Reserved: the host-injected scratch root path.")]
pub struct FsRoot(pub PathBuf);

impl FsRoot {
    /// The root directory.
    ///
    /// ```
    /// use agentio_core::files::FsRoot;
    /// let root = FsRoot("/scratch/r1".into());
    /// assert_eq!(root.path(), std::path::Path::new("/scratch/r1"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The staged path of a file key: `<root>/<key>`. Keys with a path separator or `..`
    /// stay inside the root: only the final component of `key` is used.
    ///
    /// ```
    /// use agentio_core::files::FsRoot;
    /// use std::path::Path;
    ///
    /// let root = FsRoot("/scratch/r1".into());
    /// assert_eq!(root.file("scan"), Path::new("/scratch/r1/scan"));
    /// assert_eq!(root.file("../../etc/passwd"), Path::new("/scratch/r1/passwd"));
    /// assert_eq!(root.file(".."), Path::new("/scratch/r1/_"));
    /// ```
    pub fn file(&self, key: &str) -> PathBuf {
        let name = Path::new(key)
            .file_name()
            .map_or_else(|| PathBuf::from("_"), PathBuf::from);
        self.0.join(name)
    }
}

pub(crate) fn problem_violations(err: &PathError, pointer: &str) -> Vec<Violation> {
    vec![Violation {
        pointer: pointer.to_owned(),
        keyword: "path".into(),
        message: err.to_string(),
    }]
}

pub(crate) fn path_error(message: String, err: &PathError, pointer: &str) -> AgentError {
    AgentError::new(ErrorCode::InputInvalid, message)
        .with_violations(problem_violations(err, pointer))
}
