//! Stage 4, approval: the host's approver asked, for the calls the contract gates.

use std::sync::Arc;

use agentio_core::AgentError;
use agentio_core::ErrorCode;
use serde_json::Value;

use crate::contract::ToolContract;
use crate::typed::ToolError;

use super::{ApprovalDecision, ApprovalRequest, Approver, ToolRegistry};

impl ToolRegistry {
    /// Asks for approval of a call the contract (or the registry) gates; boxed by the caller,
    /// so that an ungated call's future does not carry the request.
    pub(super) async fn approve(
        &self,
        tool_id: &str,
        contract: &ToolContract,
        run_id: &str,
        input: &Value,
        approver: Option<&Arc<dyn Approver>>,
    ) -> Result<(), ToolError> {
        let request = ApprovalRequest {
            run_id: run_id.to_owned(),
            tool_id: contract.id.clone(),
            identity: contract.identity(),
            approval: contract.approval.clone(),
            mutates: contract.mutates.clone(),
            risk_level: contract.risk_level,
            cost_class: contract.cost_class,
            input: input.clone(),
        };
        let decision = match approver.or(self.approver.as_ref()) {
            Some(approver) => approver.approve(&request).await,
            None => ApprovalDecision::Deny {
                reason: "no approver is configured".into(),
            },
        };
        match decision {
            ApprovalDecision::Approve => Ok(()),
            ApprovalDecision::Deny { reason } => Err(AgentError::new(
                ErrorCode::ApprovalDenied,
                format!("the call to `{tool_id}` was not approved: {reason}"),
            )),
        }
    }
}
