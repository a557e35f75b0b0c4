//! The run-time check of a contract: the published schema, plus what it cannot say.

use std::fmt;

use agentio_core::{BoundarySchema, Direction};
use serde_json::{Value, json};

use crate::contract::{MUTATION_CLASSES, ToolContract};
use crate::frontmatter::frontmatter_violations;

/// One thing wrong with a contract, at a JSON pointer into its frontmatter form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractProblem {
    /// Where, as a JSON pointer into the frontmatter (`/id`, `/examples/0/input`).
    pub pointer: String,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for ContractProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "(contract)"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Why a tool could not be registered, or a contract is invalid: every problem at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistrationError {
    /// The tool's id, as declared.
    pub tool_id: String,
    /// Every problem found.
    pub problems: Vec<ContractProblem>,
}

impl fmt::Display for RegistrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool `{}` cannot be registered:", self.tool_id)?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RegistrationError {}

fn problem(pointer: impl Into<String>, message: impl Into<String>) -> ContractProblem {
    ContractProblem {
        pointer: pointer.into(),
        message: message.into(),
    }
}

/// The compiled schemas of a checked contract.
pub(crate) struct CompiledContract {
    pub(crate) inputs: Option<BoundarySchema>,
    pub(crate) outputs: Option<BoundarySchema>,
    pub(crate) context: Option<BoundarySchema>,
}

impl ToolContract {
    /// Checks the contract as registration does, listing every problem.
    ///
    /// Its frontmatter form must validate against the published TOOL.schema.json (id and
    /// version patterns, lengths, approval and cost classes, risk level, timeout, retry, tags,
    /// and "approval `auto` means no `mutates`"); each `mutates` class must be one AIP-14 names;
    /// the schemas must compile; the input schema must accept only JSON objects; and every
    /// example must match the schemas.
    pub fn check(&self) -> Result<(), RegistrationError> {
        self.compile(None, None).map(|_| ())
    }

    pub(crate) fn compile(
        &self,
        typed_inputs: Option<&'static BoundarySchema>,
        typed_outputs: Option<&'static BoundarySchema>,
    ) -> Result<CompiledContract, RegistrationError> {
        let mut problems: Vec<ContractProblem> = frontmatter_violations(&self.to_frontmatter())
            .into_iter()
            .map(|v| problem(v.pointer, v.message))
            .collect();
        for (i, entry) in self.mutates.iter().enumerate() {
            let class = entry.split_once(':').map(|(class, _)| class);
            if let Some(class) = class.filter(|c| !MUTATION_CLASSES.contains(c)) {
                problems.push(problem(
                    format!("/mutates/{i}"),
                    format!(
                        "unknown mutation class `{class}`: expected one of {}",
                        MUTATION_CLASSES.join(", ")
                    ),
                ));
            }
        }

        let compile = |pointer: &str, schema: &Value, direction| {
            let compiled = BoundarySchema::from_value("tool schema", direction, schema.clone());
            match compiled.compile_error() {
                None => Ok(compiled),
                Some(reason) => Err(problem(
                    pointer,
                    format!("the schema does not compile: {reason}"),
                )),
            }
        };
        let mut own =
            |pointer: &str, schema: &Value, direction, typed: Option<&'static BoundarySchema>| {
                if typed.is_some() {
                    return None;
                }
                compile(pointer, schema, direction)
                    .map_err(|p| problems.push(p))
                    .ok()
            };
        let inputs = own("/inputs", &self.inputs, Direction::Input, typed_inputs);
        let outputs = own("/outputs", &self.outputs, Direction::Output, typed_outputs);
        let context = self.context_schema.as_ref().and_then(|schema| {
            own(
                "/metadata/agent-io/contextSchema",
                schema,
                Direction::Input,
                None,
            )
        });

        let input_check = typed_inputs.or(inputs.as_ref());
        let output_check = typed_outputs.or(outputs.as_ref());
        if let Some(schema) = input_check {
            // Tool inputs are JSON objects (AIP-14 `inputs`, AIP-16 `_workflowFsRoot`): a schema
            // that accepts any non-object value cannot be a tool's input schema.
            let non_objects = [json!(null), json!(0), json!("text"), json!([]), json!(true)];
            if let Some(accepted) = non_objects.iter().find(|v| schema.validate(v).is_ok()) {
                problems.push(problem(
                    "/inputs",
                    format!(
                        "the input schema must describe a JSON object, but it accepts `{accepted}`"
                    ),
                ));
            }
        }
        for (i, example) in self.examples.iter().enumerate() {
            let input = if example.input.is_null() {
                json!({})
            } else {
                example.input.clone()
            };
            if let Some(schema) = input_check
                && let Err(err) = schema.validate(&input)
            {
                problems.push(problem(
                    format!("/examples/{i}/input"),
                    err.message().to_owned(),
                ));
            }
            if let (Some(schema), Some(output)) = (output_check, &example.output)
                && let Err(err) = schema.validate(output)
            {
                problems.push(problem(
                    format!("/examples/{i}/output"),
                    err.message().to_owned(),
                ));
            }
        }
        if problems.is_empty() {
            Ok(CompiledContract {
                inputs,
                outputs,
                context,
            })
        } else {
            Err(RegistrationError {
                tool_id: self.id.clone(),
                problems,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_error_lists_every_problem_with_its_place() {
        let err = RegistrationError {
            tool_id: "kb.search".into(),
            problems: vec![
                problem("", "the contract is empty"),
                problem("/mutates/0", "unknown mutation class `disk`"),
            ],
        };
        assert_eq!(
            err.to_string(),
            "tool `kb.search` cannot be registered:\n  - (contract): the contract is empty\n  - /mutates/0: unknown mutation class `disk`"
        );
    }
}
