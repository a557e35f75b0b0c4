//! The audit trail: one record per call, and the sinks that keep them.

use std::fmt;
use std::sync::Mutex;

use agentio_core::files::FileRunRecord;
use serde::Serialize;

use crate::contract::{CostClass, ToolContract};

use super::approval::ApprovalOutcome;

/// One row of the audit trail: one per call, whatever its outcome (AIP-14 "Audit log shape").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRecord {
    /// Always `tool.invoked`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The run that made the call.
    pub run_id: String,
    /// The tool's id (as called).
    pub tool_id: String,
    /// The contract's version (empty when the tool is unknown).
    pub tool_version: String,
    /// The contract's declared mutations: what an auditor joins against observed effects.
    pub tool_mutates: Vec<String>,
    /// The contract's cost class (an `expensive` call is visible here as in the approval).
    pub tool_cost_class: CostClass,
    /// The argument keys (never the values: they may hold personal data).
    pub input_keys: Vec<String>,
    /// How approval went.
    pub approval: ApprovalOutcome,
    /// Attempts made (0 when the call was refused before the body ran).
    pub attempts: u32,
    /// Wall time of the whole call.
    pub duration_ms: u64,
    /// Whether it succeeded.
    pub ok: bool,
    /// The error code when it failed.
    pub error_code: Option<String>,
    /// When the call ended, in milliseconds since the Unix epoch.
    pub ts_unix_ms: u64,
    /// For a tool with a file contract: every file staged and synced, with size and SHA-256.
    pub files: Option<FileRunRecord>,
    /// What the body asked its context for beyond the contract's `requires` (another tool, a
    /// secret, a host), each refused (at most 64).
    pub capability_refusals: Vec<String>,
}

/// Receives audit records.
pub trait AuditSink: Send + Sync {
    /// Records one call.
    fn record(&self, record: AuditRecord);

    /// Records a registration, with the contract in its canonical JSON Schema form (AIP-14:
    /// the audit log records the canonical schema, not a framework-specific one). Calls carry
    /// the contract's `tool_id` and `tool_version`, which key back to this entry.
    fn tool_registered(&self, contract: &ToolContract) {
        let _ = contract;
    }
}

/// An in-memory [`AuditSink`].
#[derive(Default)]
pub struct AuditLog {
    records: Mutex<Vec<AuditRecord>>,
    registered: Mutex<Vec<ToolContract>>,
}

impl AuditLog {
    /// The contracts registered so far, canonical JSON Schema included.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::{AuditLog, ToolRegistry};
    /// use std::sync::Arc;
    ///
    /// let audit = Arc::new(AuditLog::default());
    /// let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    /// registry.register(SaveTool).unwrap();
    /// let registered = audit.registered();
    /// assert_eq!((registered[0].id.as_str(), registered[0].version.as_str()), ("notes.save", "2.1.0"));
    /// assert_eq!(registered[0].inputs["properties"]["text"]["type"], "string");
    /// ```
    pub fn registered(&self) -> Vec<ToolContract> {
        self.registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// A copy of every record so far, in order.
    ///
    /// ```
    /// # use agentio_tools::{ToolError, tool, tool_registry};
    /// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// # struct Note { text: String }
    /// # /// Saves a note.
    /// # #[tool(id = "notes.save", version = "2.1.0")]
    /// # async fn save(note: Note) -> Result<Note, ToolError> { Ok(note) }
    /// use agentio_tools::{AuditLog, ToolRegistry};
    /// use serde_json::json;
    /// use std::sync::Arc;
    ///
    /// let audit = Arc::new(AuditLog::default());
    /// let mut registry = ToolRegistry::new().with_audit_sink(audit.clone());
    /// registry.register(SaveTool).unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// runtime.block_on(registry.call("notes.save", json!({ "text": "hi" }))).unwrap();
    /// runtime.block_on(registry.call("notes.save", json!({}))).unwrap_err();
    /// let records = audit.records();
    /// assert_eq!((records[0].ok, records[0].tool_version.as_str()), (true, "2.1.0"));
    /// assert_eq!(records[0].input_keys, ["text"]);
    /// assert_eq!(records[1].error_code.as_deref(), Some("input_invalid"));
    /// ```
    pub fn records(&self) -> Vec<AuditRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl AuditSink for AuditLog {
    fn record(&self, record: AuditRecord) {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record);
    }

    fn tool_registered(&self, contract: &ToolContract) {
        self.registered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(contract.clone());
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.records.lock().map_or(0, |r| r.len());
        f.debug_struct("AuditLog").field("records", &count).finish()
    }
}
