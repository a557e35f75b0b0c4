//! Contract examples as tests: every example runs through the tool and its output is compared.

use std::fmt;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::registry::{ApprovalDecision, ApprovalRequest, CallOptions, ToolRegistry};
use crate::typed::TypedTool;

/// An example of a contract that the tool does not satisfy.
#[derive(Clone, Debug, PartialEq)]
pub struct ExampleFailure {
    /// The example's name (empty when registration itself failed).
    pub example: String,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for ExampleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "example `{}`: {}", self.example, self.reason)
    }
}

/// Runs every example of `tool`'s contract through a registry (so the contract is enforced as
/// in production, approvals granted) with `context` as the host context, and compares each
/// result with the example's `output`. Returns how many examples ran.
pub async fn check_examples<T: TypedTool>(
    tool: T,
    context: Value,
) -> Result<usize, Vec<ExampleFailure>> {
    let contract = T::contract();
    let approve_all = |_: &ApprovalRequest| ApprovalDecision::Approve;
    let mut registry = ToolRegistry::new().with_approver(Arc::new(approve_all));
    if let Err(err) = registry.register(tool) {
        return Err(vec![ExampleFailure {
            example: String::new(),
            reason: err.to_string(),
        }]);
    }
    let mut failures = Vec::new();
    for example in &contract.examples {
        let options = CallOptions {
            run_id: Some(format!("example:{}", example.name)),
            context: context.clone(),
            ..CallOptions::default()
        };
        let result = registry
            .call_with(&contract.id, example.input.clone(), options)
            .await;
        let reason = match (result, &example.output) {
            (Err(err), _) => Some(format!("the call failed: {err}")),
            (Ok(actual), Some(expected)) => {
                let mut differences = Vec::new();
                crate::drift::diff(expected, &actual, &mut String::new(), &mut differences);
                (!differences.is_empty()).then(|| {
                    let listed: Vec<String> = differences
                        .iter()
                        .map(|d| {
                            let show = |v: &Option<Value>| {
                                v.as_ref().map_or("nothing".into(), Value::to_string)
                            };
                            format!(
                                "{}: expected {}, got {}",
                                d.pointer,
                                show(&d.rust),
                                show(&d.manifest)
                            )
                        })
                        .collect();
                    format!("the output differs: {}", listed.join("; "))
                })
            }
            (Ok(_), None) => None,
        };
        if let Some(reason) = reason {
            failures.push(ExampleFailure {
                example: example.name.clone(),
                reason,
            });
        }
    }
    if failures.is_empty() {
        Ok(contract.examples.len())
    } else {
        Err(failures)
    }
}

/// [`check_examples`] for a plain `#[test]`: runs it on a fresh Tokio runtime, panics with
/// every failure listed (or when the tool has no examples), and returns how many ran. The one
/// call to put in a tool's own tests:
///
/// ```
/// # use agentio_tools::{ToolContext, ToolError, TypedTool, tool};
/// # #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
/// # struct N { n: i64 }
/// # fn examples() -> Vec<agentio_tools::ToolExample> {
/// #     vec![agentio_tools::ToolExample { name: "two".into(), input: serde_json::json!({"n": 2}), output: Some(serde_json::json!({"n": 4})), note: None }]
/// # }
/// struct Double;
///
/// /// Doubles a number.
/// #[tool(id = "math.double", version = "1.0.0", examples = examples)]
/// impl TypedTool for Double {
///     type Input = N;
///     type Output = N;
///     async fn execute_typed(&self, input: N, _: &ToolContext) -> Result<N, ToolError> {
///         Ok(N { n: input.n * 2 })
///     }
/// }
///
/// assert_eq!(agentio_tools::assert_examples(Double), 1);
/// ```
pub fn assert_examples<T: TypedTool>(tool: T) -> usize {
    assert_examples_with_context(tool, json!(null))
}

/// [`assert_examples`] with a host context, for tools that declare `contextSchema`.
///
/// Returns how many examples ran. A tool that declares no examples fails the test: a helper
/// that passes while checking nothing would hide that the examples are missing.
pub fn assert_examples_with_context<T: TypedTool>(tool: T, context: Value) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|err| panic!("a Tokio runtime could not be built: {err}"));
    match runtime.block_on(check_examples(tool, context)) {
        Ok(0) => panic!(
            "`{}` declares no examples, so there is nothing to check; add `examples = ...` to its contract",
            T::ID
        ),
        Ok(ran) => ran,
        Err(failures) => {
            let listed: Vec<String> = failures.iter().map(ToString::to_string).collect();
            panic!(
                "{} example(s) of `{}` failed:\n  - {}",
                failures.len(),
                T::ID,
                listed.join("\n  - ")
            );
        }
    }
}
