//! A contract as TOOL.md frontmatter, and the published TOOL.schema.json that checks it.

use std::sync::OnceLock;

use agentio_core::{BoundarySchema, Direction, Violation};
use serde_json::{Map, Value};

use crate::contract::ToolContract;

/// The `metadata` key under which fields the published schema lacks are written.
pub const METADATA_KEY: &str = "agent-io";

/// Contract fields that AIP-14 documents but TOOL.schema.json does not allow at the top level
/// (its `additionalProperties` is false); they travel under `metadata.agent-io`.
const MOVED_TO_METADATA: &[&str] = &["contextSchema", "implements"];

/// Fields that moved to the AIP-30 DRIVER layer; a TOOL.md carrying one is refused.
pub const REMOVED_FIELDS: &[&str] = &[
    "code", "run", "runner", "secrets", "network", "entry", "execute",
];

const TOOL_SCHEMA: &str = include_str!("../schemas/TOOL.schema.json");
const IO_SCHEMA: &str = include_str!("../schemas/IO.schema.json");
/// Where TOOL.schema.json looks for the IO blocks, and where IO.schema.json says it lives.
const IO_ADDRESSES: [&str; 2] = [
    "https://agentproto.sh/docs/aip-16/IO.schema.json",
    "https://agentproto.sh/schemas/aip-16/IO.schema.json",
];

impl ToolContract {
    /// The TOOL.md frontmatter of this contract, as JSON.
    ///
    /// `contextSchema` and `implements` go under `metadata.agent-io` (the published schema has
    /// no place for them), and `approval` is always written out: TOOL.schema.json's rule "auto
    /// implies no mutates" also fires when `approval` is absent.
    ///
    /// ```
    /// use agentio_tools::{ToolContract, ToolError, TypedTool, tool};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Note { text: String }
    ///
    /// /// Appends a note.
    /// #[tool(id = "notes.append", version = "1.2.0", mutates = ["workspace:/notes"])]
    /// async fn append(note: Note) -> Result<Note, ToolError> { Ok(note) }
    ///
    /// let contract = AppendTool::contract();
    /// let frontmatter = contract.to_frontmatter();
    /// assert_eq!(frontmatter["name"], "notes.append");
    /// assert_eq!(frontmatter["approval"], "on-mutate");
    /// assert!(agentio_tools::frontmatter_violations(&frontmatter).is_empty());
    /// assert_eq!(ToolContract::from_frontmatter(frontmatter).unwrap(), contract);
    /// ```
    pub fn to_frontmatter(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        let Some(fields) = value.as_object_mut() else {
            return value;
        };
        let mut moved = Map::new();
        for key in MOVED_TO_METADATA {
            if let Some(field) = fields.remove(*key) {
                moved.insert((*key).to_owned(), field);
            }
        }
        if !moved.is_empty() {
            let metadata = fields
                .entry("metadata")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(metadata) = metadata.as_object_mut() {
                metadata.insert(METADATA_KEY.to_owned(), Value::Object(moved));
            }
        }
        value
    }

    /// The inverse of [`Self::to_frontmatter`]: lifts `metadata.agent-io` back into the
    /// contract fields. Fails with serde's message when a field has the wrong shape (a round
    /// trip is on [`Self::to_frontmatter`]).
    ///
    /// ```
    /// use agentio_tools::ToolContract;
    /// let err = ToolContract::from_frontmatter(serde_json::json!({ "name": 7 })).unwrap_err();
    /// assert!(!err.to_string().is_empty());
    /// ```
    pub fn from_frontmatter(mut frontmatter: Value) -> Result<Self, serde_json::Error> {
        if let Some(fields) = frontmatter.as_object_mut() {
            let moved = fields
                .get_mut("metadata")
                .and_then(Value::as_object_mut)
                .and_then(|metadata| metadata.remove(METADATA_KEY));
            if fields
                .get("metadata")
                .and_then(Value::as_object)
                .is_some_and(Map::is_empty)
            {
                fields.remove("metadata");
            }
            if let Some(Value::Object(moved)) = moved {
                for (key, field) in moved {
                    fields.insert(key, field);
                }
            }
        }
        serde_json::from_value(frontmatter)
    }
}

/// The published TOOL.schema.json, compiled once, with IO.schema.json registered under both of
/// its addresses (SOURCES.md, defect 1). No `$ref` is ever fetched over the network.
///
/// ```
/// let schema = agentio_tools::tool_schema();
/// assert!(schema.compile_error().is_none());
/// assert!(schema.validate(&serde_json::json!({ "name": "x" })).is_err());
/// ```
pub fn tool_schema() -> &'static BoundarySchema {
    static SCHEMA: OnceLock<BoundarySchema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
        let io = parse(IO_SCHEMA);
        let tool = parse(TOOL_SCHEMA);
        BoundarySchema::from_value_with_resources(
            "TOOL.md frontmatter",
            Direction::Input,
            tool,
            IO_ADDRESSES
                .iter()
                .map(|address| (address.to_string(), io.clone()))
                .collect(),
        )
    })
}

/// Checks frontmatter against TOOL.schema.json; every violation has its JSON pointer.
///
/// ```
/// use agentio_tools::{ToolContract, ToolError, TypedTool, tool};
///
/// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// struct Note { text: String }
///
/// /// Appends a note.
/// #[tool(id = "notes.append", version = "1.2.0", mutates = ["workspace:/notes"])]
/// async fn append(note: Note) -> Result<Note, ToolError> { Ok(note) }
///
/// let contract = AppendTool::contract();
/// let mut frontmatter = contract.to_frontmatter();
/// assert!(agentio_tools::frontmatter_violations(&frontmatter).is_empty());
/// // The published schema refuses `auto` approval for a tool that mutates.
/// frontmatter["approval"] = "auto".into();
/// assert!(!agentio_tools::frontmatter_violations(&frontmatter).is_empty());
/// ```
pub fn frontmatter_violations(frontmatter: &Value) -> Vec<Violation> {
    match tool_schema().violations(frontmatter) {
        Ok(violations) => violations,
        Err(err) => vec![Violation {
            pointer: String::new(),
            keyword: "schema".into(),
            message: err.detail().unwrap_or(err.message()).to_owned(),
        }],
    }
}
