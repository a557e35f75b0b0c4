//! Registration: a tool's contract checked and its schemas compiled, once, before any call.

use std::sync::Arc;

use agentio_core::BoundarySchema;

use crate::check::ContractProblem;
use crate::check::RegistrationError;
use crate::typed::ToolPlugin;

use super::{RegisteredTool, Schema, ToolRegistry};

impl ToolRegistry {
    /// The body of [`ToolRegistry::register_plugin`].
    pub(super) fn stage_register_plugin(
        &mut self,
        plugin: Arc<dyn ToolPlugin>,
    ) -> Result<(), RegistrationError> {
        let mut contract = plugin.tool_contract();
        // AIP-14 "Action implementation": inherit the action, narrow only.
        if let Some(implements) = contract.implements.clone() {
            let problems = match crate::action::resolve(&implements, &self.actions) {
                Ok(action) => crate::action::narrow(&mut contract, &action),
                Err(problem) => vec![problem],
            };
            if !problems.is_empty() {
                return Err(RegistrationError {
                    tool_id: contract.id.clone(),
                    problems,
                });
            }
        }
        // Identity is `id@major` (AIP-14 "Stable identity"): two majors of one id are two tools.
        let identity = contract.identity();
        if self.tools.contains_key(&identity) {
            return Err(RegistrationError {
                tool_id: contract.id.clone(),
                problems: vec![ContractProblem {
                    pointer: "/id".into(),
                    message: format!("a tool with identity `{identity}` is already registered"),
                }],
            });
        }
        let typed_inputs = plugin.input_boundary();
        let typed_outputs = plugin.output_boundary();
        let compiled = contract.compile(typed_inputs, typed_outputs)?;
        if let Some(io) = plugin.file_contract() {
            let problems = uncovered_outputs(io, &contract.mutates);
            if !problems.is_empty() {
                return Err(RegistrationError {
                    tool_id: contract.id.clone(),
                    problems,
                });
            }
        }
        let pick = |typed: Option<&'static BoundarySchema>, own: Option<BoundarySchema>| match (
            typed, own,
        ) {
            (Some(shared), _) => Some(Schema::Shared(shared)),
            (None, Some(owned)) => Some(Schema::Owned(Box::new(owned))),
            (None, None) => None,
        };
        let (Some(inputs), Some(outputs)) = (
            pick(typed_inputs, compiled.inputs),
            pick(typed_outputs, compiled.outputs),
        ) else {
            return Err(RegistrationError {
                tool_id: contract.id.clone(),
                problems: Vec::new(),
            });
        };
        let registered = RegisteredTool {
            plugin,
            mutates: Arc::from(contract.mutates.clone()),
            id: Arc::from(contract.id.as_str()),
            inputs,
            outputs,
            context: compiled.context,
            contract,
        };
        if let Some(sink) = &self.audit {
            sink.tool_registered(&registered.contract);
        }
        let at = self.entries.len();
        self.majors
            .entry(registered.contract.id.clone())
            .or_default()
            .push(at);
        self.tools.insert(identity, at);
        self.entries.push(registered);
        // Indexed again on the next lookup.
        self.names = std::sync::OnceLock::new();
        Ok(())
    }
}

/// A declared output file is a workspace mutation (AIP-14 `mutates`): each `outputsFiles`
/// path, as written (tokens included), must be covered by a `workspace:` entry. The same rule
/// holds again at sync time on the interpolated path.
pub(crate) fn uncovered_outputs(
    io: &agentio_core::files::IoHandle,
    mutates: &[String],
) -> Vec<ContractProblem> {
    io.outputs_files()
        .iter()
        .filter(|(_, entry)| !agentio_core::files::covers_workspace_path(mutates, &entry.path))
        .map(|(key, entry)| ContractProblem {
            pointer: format!("/outputsFiles/{key}/path"),
            message: format!(
                "the output file `{key}` writes `workspace:/{}`, which no `mutates` entry covers; a declared output file is a workspace mutation: add `workspace:/{}` (or a folder above it) to `mutates`",
                entry.path,
                entry.path.rsplit_once('/').map_or(entry.path.as_str(), |(dir, _)| dir),
            ),
        })
        .collect()
}
