//! Stage 6, audit: the approval asked and the attempts run for an audited call, and its
//! record written.

use std::borrow::Cow;
use std::time::Instant;
use std::time::SystemTime;
use std::time::UNIX_EPOCH;

use agentio_core::AgentError;
use agentio_core::files::FileHost;
use agentio_core::files::RunVars;
use agentio_core::files::run_with_files;
use serde_json::Value;

use crate::contract::CostClass;
use crate::typed::RunId;
use crate::typed::ToolError;

use super::call_3_admission::Admitted;
use super::call_5_attempts::{Attempts, Produce, run_attempts, run_id_in, until_cancelled};
use super::{ApprovalOutcome, AuditRecord, AuditSink, CallOptions, ToolRegistry};

impl ToolRegistry {
    /// [`Self::call_with`] with an audit sink: the call, then its record.
    pub(super) async fn call_audited<O: Produce>(
        &self,
        sink: &dyn AuditSink,
        tool_id: &str,
        input: Cow<'_, Value>,
        options: CallOptions,
    ) -> Result<O, ToolError> {
        let started = Instant::now();
        let run_id = RunId::of(options.run_id.as_deref());
        let mut audit = AuditRecord {
            kind: "tool.invoked",
            run_id: run_id.as_str().to_owned(),
            tool_id: tool_id.to_owned(),
            tool_version: String::new(),
            tool_mutates: Vec::new(),
            tool_cost_class: CostClass::Trivial,
            input_keys: input
                .as_object()
                .map(|object| object.keys().cloned().collect())
                .unwrap_or_default(),
            approval: ApprovalOutcome::NotRequired,
            attempts: 0,
            duration_ms: 0,
            ok: false,
            error_code: None,
            ts_unix_ms: 0,
            files: None,
            capability_refusals: Vec::new(),
        };
        let cancellation = options.cancellation.clone();
        let grant;
        let result = {
            let mut admitted =
                self.admit(tool_id, input, options, run_id.clone(), Some(&mut audit));
            grant = admitted
                .as_ref()
                .ok()
                .and_then(|admitted| admitted.run.base.as_ref())
                .and_then(|base| base.grant().cloned());
            let finish = std::pin::pin!(async {
                match &mut admitted {
                    Ok(admitted) => self.finish(admitted, Some(&mut audit)).await,
                    Err(err) => Err(std::mem::replace(err, AgentError::internal(""))),
                }
            });
            until_cancelled(finish, cancellation.as_ref(), tool_id).await
        };
        if let Some(grant) = grant
            && let Ok(mut refusals) = grant.refusals.lock()
        {
            audit.capability_refusals = std::mem::take(&mut *refusals);
        }
        audit.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        audit.ok = result.is_ok();
        audit.error_code = result.as_ref().err().map(|e| e.code().to_string());
        audit.ts_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        sink.record(audit);
        result
    }

    /// The rest of an admitted call: approval when it is gated, then its attempts (within the
    /// file lifecycle when it declares files).
    pub(super) async fn finish<O: Produce>(
        &self,
        admitted: &mut Admitted<'_>,
        mut audit: Option<&mut AuditRecord>,
    ) -> Result<O, ToolError> {
        let tool = admitted.run.tool;
        let tool_id = admitted.run.tool_id;
        let contract = &tool.contract;
        if admitted.gated {
            let input = admitted.run.input.as_ref().unwrap_or(&Value::Null);
            // Boxed: an ungated call's future does not carry the request.
            let approved = Box::pin(self.approve(
                tool_id,
                contract,
                run_id_in(&admitted.run),
                input,
                admitted.approver.as_ref(),
            ))
            .await;
            if let Some(audit) = audit.as_deref_mut() {
                audit.approval = if approved.is_ok() {
                    ApprovalOutcome::Approved
                } else {
                    ApprovalOutcome::Denied
                };
            }
            approved?;
        }

        let mut attempts = 0;
        let Some(io) = tool.plugin.file_contract() else {
            let result = run_attempts(&mut admitted.run, &mut attempts).await;
            if let Some(audit) = audit {
                audit.attempts = attempts;
            }
            return result;
        };
        // AIP-16 file contract: stage, inject `_workflowFsRoot`, validate, run, sync, clean up.
        let Some(workspace) = &self.workspace else {
            // A host configuration error: said in the message, which the host reads first.
            let reason = format!(
                "the tool host is misconfigured: tool `{tool_id}` declares files, but the registry has no workspace (ToolRegistry::with_workspace)"
            );
            return Err(AgentError::internal(reason.clone()).with_operator_detail(reason));
        };
        let host = FileHost {
            workspace,
            observer: self.file_observer.as_deref(),
            // A declared output file is a workspace mutation: sync only what `mutates` covers.
            mutates: Some(&contract.mutates),
        };
        let vars = RunVars::new(run_id_in(&admitted.run), &contract.id);
        let input = admitted.run.input.take().unwrap_or_default();
        let base = admitted.run.base.take();
        // Boxed: the file lifecycle's future is large, and a call without files should not
        // carry its space.
        let (result, record) = Box::pin(run_with_files(io, host, &vars, input, |input| {
            let mut run = Attempts {
                tool,
                tool_id,
                input: Some(input),
                decoded: None,
                base,
            };
            async move { run_attempts::<Value>(&mut run, &mut attempts).await }
        }))
        .await;
        if let Some(audit) = audit {
            audit.attempts = attempts;
            audit.files = Some(record);
        }
        result.map(O::from_value)
    }
}
