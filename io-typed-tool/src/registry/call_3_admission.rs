//! Stage 3, admission: the input and the context checked against their schemas, the run
//! prepared.

use std::borrow::Cow;
use std::sync::Arc;

use agentio_core::AgentError;
use agentio_core::ErrorCode;
use serde_json::Value;

use crate::typed::RunId;
use crate::typed::ToolContext;
use crate::typed::ToolError;

use super::call_5_attempts::{Attempts, max_attempts};
use super::{Approver, AuditRecord, CallOptions, ToolRegistry};

impl ToolRegistry {
    /// Everything a call settles before its body may run, synchronously: the tool, its input
    /// (decoded for a typed tool without files, validated in full otherwise), the host
    /// context, and the body's [`ToolContext`]. A bad input stops here, before approval.
    pub(super) fn admit<'r>(
        &'r self,
        tool_id: &'r str,
        input: Cow<'_, Value>,
        options: CallOptions,
        run_id: RunId,
        audit: Option<&mut AuditRecord>,
    ) -> Result<Admitted<'r>, ToolError> {
        let CallOptions {
            context,
            progress,
            cancellation,
            approver,
            caller,
            content,
            client,
            ..
        } = options;
        let tool = self.resolve(tool_id)?;
        let contract = &tool.contract;
        let audited = audit.is_some();
        if let Some(audit) = audit {
            audit.tool_version = contract.version.clone();
            audit.tool_mutates = contract.mutates.clone();
            audit.tool_cost_class = contract.cost_class;
        }

        // A typed tool without files decodes its input here, checking only what serde leaves
        // unchecked; every other tool's input is validated in full. Either way a bad input
        // stops here, before approval, with the same error.
        let decoded = if tool.plugin.file_contract().is_none() {
            // No scratch root is injected, so a caller's `_workflowFsRoot` would reach the
            // body: the field is the host's (a file contract overwrites it, AIP-16).
            agentio_core::files::refuse_caller_fs_root(&input)?;
            tool.plugin.__decode(&input)
        } else {
            None
        };
        let decoded = match decoded {
            Some(Ok(decoded)) => Some(decoded),
            Some(Err(err)) => {
                // A refused value may be deeper than a recursive drop can take.
                dismantle(input);
                return Err(err);
            }
            None => {
                if let Err(err) = tool.inputs.get().validate(&input) {
                    dismantle(input);
                    return Err(err.into());
                }
                None
            }
        };
        let gated = contract.needs_approval() || self.review_every_call;
        // The input as JSON is kept only where something reads it after admission: a body
        // that decodes it, approval, a retry. A borrowed input is copied only then.
        let input =
            (decoded.is_none() || gated || max_attempts(contract) > 1).then(|| input.into_owned());
        if let Some(schema) = &tool.context {
            schema.validate(&context).map_err(|err| {
                let violations = err.violations().to_vec();
                AgentError::new(
                    ErrorCode::ContextInvalid,
                    "the host did not supply the context this tool requires",
                )
                .with_violations(violations)
                .with_operator_detail(err.message().to_owned())
            })?;
        }

        let mut base = ToolContext::for_call(run_id, Arc::clone(&tool.id), tool.mutates.clone())
            .with_context(context)
            .with_shared_caller(caller);
        // A grant when the host lends something, or audits (a refusal is then recorded);
        // otherwise the context refuses every capability without allocating one.
        if self.capabilities.is_some() || audited {
            base = base.with_grant(Arc::new(crate::capabilities::Grant {
                tool_id: Arc::clone(&tool.id),
                requires: Arc::new(contract.requires.clone()),
                lent: self.capabilities.clone().unwrap_or_default(),
                refusals: std::sync::Mutex::new(Vec::new()),
            }));
        }
        if let Some(progress) = progress {
            base = base.with_progress(progress);
        }
        if let Some(cancellation) = cancellation {
            base = base.with_cancellation(cancellation);
        }
        if content.is_some() || client.is_some() {
            base = base.with_voice(content, client);
        }
        Ok(Admitted {
            run: Attempts {
                tool,
                tool_id,
                input,
                decoded,
                base: Some(base),
            },
            gated,
            approver,
        })
    }
}

/// A call whose input and context are settled (see [`ToolRegistry::admit`]).
pub(super) struct Admitted<'r> {
    pub(super) run: Attempts<'r>,
    /// Whether a person (or the approver) must say yes first.
    pub(super) gated: bool,
    pub(super) approver: Option<Arc<dyn Approver>>,
}

impl Admitted<'_> {
    /// Whether the call is one attempt and nothing else: no approval, no files, no retry.
    pub(super) fn runs_once(&self) -> bool {
        let tool = self.run.tool;
        !self.gated && tool.plugin.file_contract().is_none() && max_attempts(&tool.contract) == 1
    }
}

/// Drops a refused input the caller handed over; a borrowed one is the caller's to drop.
fn dismantle(input: Cow<'_, Value>) {
    if let Cow::Owned(input) = input {
        agentio_core::limits::dismantle(input);
    }
}
