//! Stage 2, lookup: the tool an id (or `id@major`) names.

use agentio_core::AgentError;
use agentio_core::ErrorCode;

use crate::typed::ToolError;

use super::{RegisteredTool, ToolRegistry};

impl ToolRegistry {
    /// The registered tool a caller means: `id@major` names one exactly; a bare `id` names the
    /// only registered major of that id, and is ambiguous when there are several.
    pub(super) fn resolve(&self, tool_id: &str) -> Result<&RegisteredTool, ToolError> {
        // The id is the caller's: escaped and bounded before it is echoed.
        let not_found = || {
            let shown = agentio_core::limits::bounded_display(&tool_id.escape_debug(), 128);
            AgentError::new(ErrorCode::NotFound, format!("there is no tool `{shown}`"))
        };
        if tool_id.contains('@') {
            return self
                .tools
                .get(tool_id)
                .and_then(|&at| self.entries.get(at))
                .ok_or_else(not_found);
        }
        match self.majors.get(tool_id).map(Vec::as_slice) {
            None | Some([]) => Err(not_found()),
            Some(&[only]) => self.entries.get(only).ok_or_else(not_found),
            Some(several) => {
                let mut identities: Vec<String> = several
                    .iter()
                    .filter_map(|&at| self.entries.get(at))
                    .map(|t| t.contract.identity())
                    .collect();
                identities.sort();
                Err(AgentError::new(
                    ErrorCode::NoRoute,
                    format!(
                        "several versions of `{tool_id}` are registered; call one of {}",
                        identities.join(", ")
                    ),
                ))
            }
        }
    }
}
