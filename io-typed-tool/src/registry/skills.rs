//! Skills: chains of tools, checked link by link before anything runs, and run step by step.

use agentio_core::AgentError;
use agentio_core::ErrorCode;
use agentio_core::ToolInvoker;
use serde_json::Value;

use crate::typed::ToolError;

use super::{CallOptions, ToolRegistry};

impl ToolRegistry {
    /// The body of [`ToolRegistry::validate_skill`].
    pub(super) fn stage_validate_skill(
        &self,
        skill: &agentio_core::skill::SkillManifest,
    ) -> Result<(), agentio_core::skill::SkillError> {
        agentio_core::skill::check_skill(skill, |id| self.tool_schemas(id))
    }

    /// The body of [`ToolRegistry::run_skill`].
    pub(super) async fn stage_run_skill(
        &self,
        skill: &agentio_core::skill::SkillManifest,
        input: Value,
        options: CallOptions,
    ) -> Result<Value, ToolError> {
        if let Err(err) = self.validate_skill(skill) {
            return Err(AgentError::new(
                ErrorCode::Other("incompatible_chain".into()),
                err.to_string(),
            ));
        }
        // One run id for every step, so the audit trail ties them together.
        let mut options = options;
        let run_id = options
            .run_id
            .take()
            .unwrap_or_else(agentio_core::new_run_id);
        let mut value = input;
        for (index, step) in skill.steps.iter().enumerate() {
            // The skill's input precedes the first step: a mapping there picks from it.
            value = skill.next_input(index, value);
            let step_options = options.clone().with_run_id(run_id.clone());
            value = self
                .call_with(&step.tool, value, step_options)
                .await
                .map_err(|err| {
                    let message =
                        format!("skill step {index} (`{}`): {}", step.tool, err.message());
                    let violations = err.violations().to_vec();
                    AgentError::new(err.code().clone(), message)
                        .with_retryable(err.is_retryable())
                        .with_violations(violations)
                })?;
        }
        Ok(value)
    }
}
