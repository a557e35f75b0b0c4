//! What a host's approver is asked, and what it answers.

use agentio_core::BoxFuture;
use serde::Serialize;
use serde_json::Value;

use crate::contract::{Approval, CostClass};

/// What the host's approver is asked before a gated call runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The run that makes the call.
    pub run_id: String,
    /// The tool's id.
    pub tool_id: String,
    /// `id@major`.
    pub identity: String,
    /// The contract's approval class (for `policy:<ref>`, the policy to apply).
    pub approval: Approval,
    /// What the tool may modify.
    pub mutates: Vec<String>,
    /// The contract's risk level.
    pub risk_level: u8,
    /// The contract's cost class: an `expensive` call is always asked about, so that the host
    /// can warn its user before it runs (AIP-14).
    pub cost_class: CostClass,
    /// The validated arguments.
    pub input: Value,
}

impl ApprovalRequest {
    /// The policy an `approval: policy:<ref>` contract defers to, for the approver to apply.
    ///
    /// ```
    /// use agentio_tools::{Approval, ApprovalRequest, CostClass};
    /// let request = ApprovalRequest {
    ///     run_id: "r1".into(), tool_id: "pay".into(), identity: "pay@1".into(),
    ///     approval: Approval::Policy("finance-review".into()), mutates: vec![],
    ///     risk_level: 2, cost_class: CostClass::Expensive, input: serde_json::json!({}),
    /// };
    /// assert_eq!(request.policy(), Some("finance-review"));
    /// ```
    pub fn policy(&self) -> Option<&str> {
        match &self.approval {
            Approval::Policy(reference) => Some(reference),
            _ => None,
        }
    }
}

/// An approver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run the call.
    Approve,
    /// Do not run it; the reason is shown to the caller.
    Deny {
        /// Why, safe to show a model.
        reason: String,
    },
}

/// The host's approval gate (AIP-7): asked before every call whose approval class requires it.
/// Without an approver, such calls are denied.
pub trait Approver: Send + Sync {
    /// Decides one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision>;
}

/// Any `Fn(&ApprovalRequest) -> ApprovalDecision` is an approver.
impl<F> Approver for F
where
    F: Fn(&ApprovalRequest) -> ApprovalDecision + Send + Sync,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalDecision> {
        let decision = self(request);
        Box::pin(async move { decision })
    }
}

/// How a gated call's approval went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// The contract did not require approval.
    NotRequired,
    /// The approver said yes.
    Approved,
    /// The approver said no, or there was no approver.
    Denied,
}
