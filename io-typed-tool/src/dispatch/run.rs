//! Running a turn's calls through the registry: at most `max_concurrency` at once, answers in
//! the order of the calls.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use agentio_core::{AgentError, ErrorCode};
use serde_json::Value;

use super::{
    CallResult, DispatchOptions, Dispatched, ModelTurn, Output, Provider, ResponseError, ToolCall,
    write,
};
use crate::content::ContentCollector;
use crate::registry::ToolRegistry;

type Running<'a> = Pin<Box<dyn Future<Output = CallResult> + Send + 'a>>;

impl ToolRegistry {
    /// Reads `response` from `provider`, runs every tool call in it through this registry, and
    /// answers each in the provider's next-turn shape (see [`crate::dispatch`], where an example
    /// is).
    ///
    /// # Errors
    ///
    /// A [`ResponseError`] when `response` is not the provider's shape, naming where. Calls that
    /// fail are not errors of the turn: each is answered, marked as an error.
    pub async fn dispatch(
        &self,
        provider: Provider,
        response: &Value,
        options: &DispatchOptions,
    ) -> Result<Dispatched, ResponseError> {
        // The model's own turn is not copied out: only the answers are returned.
        let turn = super::read::turn(provider, response, options, false)?;
        Ok(self.answer(turn, options).await)
    }

    /// Runs a turn's calls (read by [`ModelTurn::read`], or accumulated from a stream by
    /// [`StreamedTurn`](crate::dispatch::StreamedTurn)) and answers each.
    pub async fn answer(&self, turn: ModelTurn, options: &DispatchOptions) -> Dispatched {
        let provider = turn.provider;
        let mut calls = turn.calls;
        // One call (the common turn) runs in this future itself: nothing to interleave.
        if calls.len() == 1
            && options.max_calls >= 1
            && let Some(call) = calls.pop()
        {
            return Dispatched {
                provider,
                results: vec![self.run_call(provider, call, options).await],
            };
        }
        let limit = options.max_concurrency.max(1);
        let mut waiting: VecDeque<(usize, Running<'_>)> = calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| {
                let running: Running<'_> = if index < options.max_calls {
                    Box::pin(self.run_call(provider, call, options))
                } else {
                    let refusal = over_the_limit(index, options.max_calls);
                    Box::pin(std::future::ready(refused(provider, call, None, refusal)))
                };
                (index, running)
            })
            .collect();
        let mut results: Vec<Option<CallResult>> = (0..waiting.len()).map(|_| None).collect();
        let mut running: Vec<(usize, Running<'_>)> = Vec::with_capacity(limit);
        std::future::poll_fn(|cx| {
            loop {
                while running.len() < limit {
                    match waiting.pop_front() {
                        Some(next) => running.push(next),
                        None => break,
                    }
                }
                let mut finished = false;
                let mut i = 0;
                while i < running.len() {
                    if let Poll::Ready(result) = running[i].1.as_mut().poll(cx) {
                        let (index, _) = running.swap_remove(i);
                        results[index] = Some(result);
                        finished = true;
                    } else {
                        i += 1;
                    }
                }
                if running.is_empty() && waiting.is_empty() {
                    return Poll::Ready(());
                }
                // A call that finished made room: start the next ones and poll them now.
                if !finished || waiting.is_empty() {
                    return Poll::Pending;
                }
            }
        })
        .await;
        Dispatched {
            provider,
            results: results.into_iter().flatten().collect(),
        }
    }

    /// One call: its tool found by name, its arguments checked, run with its own content
    /// collector, answered.
    async fn run_call(
        &self,
        provider: Provider,
        call: ToolCall,
        options: &DispatchOptions,
    ) -> CallResult {
        let Some(tool_id) = self.tool_for_provider_name(&call.name) else {
            let refusal = self.unknown_tool(provider, &call.name);
            return refused(provider, call, None, refusal);
        };
        let arguments = match &call.arguments {
            Ok(arguments) => arguments,
            Err(reason) => {
                let refusal = AgentError::new(
                    ErrorCode::InputInvalid,
                    format!("the arguments of `{}` cannot be used: {reason}", call.name),
                );
                return refused(provider, call, Some(tool_id), refusal);
            }
        };
        let collector = ContentCollector::new();
        let mut call_options = options.call.clone();
        call_options.content = Some(collector.clone());
        // The output in the form the answer carries it: JSON text, except where the provider
        // takes an object (Gemini, unless the host sends the next turn as text) or the output
        // is content blocks.
        let content_only = self.returns_content_only(&tool_id);
        let outcome = if content_only || (provider == Provider::Gemini && !options.outputs_as_text)
        {
            self.stage_call_with::<Value>(&tool_id, Cow::Borrowed(arguments), call_options)
                .await
                .map(Output::Value)
        } else {
            self.call_json(&tool_id, arguments, call_options)
                .await
                .map(Output::Json)
        };
        let attached = collector.take();
        let output = match outcome {
            Ok(output) => output,
            Err(error) => return refused(provider, call, Some(tool_id), error),
        };
        // An output alone is answered from the outcome when the answer is asked for; content
        // blocks are written now, where a block the provider does not take is refused.
        let written = if attached.is_empty() && !content_only {
            None
        } else {
            match write::success(provider, &call, &output, content_only, attached) {
                Ok(answer) => Some(answer),
                Err(refusal) => return refused(provider, call, Some(tool_id), refusal),
            }
        };
        CallResult {
            call,
            tool_id: Some(tool_id),
            outcome: Ok(output),
            provider,
            written,
        }
    }

    /// The answer to a name no tool has: `not_found`, naming the tools there are.
    fn unknown_tool(&self, provider: Provider, name: &str) -> AgentError {
        let names: Vec<String> = self
            .registered()
            .map(|(identity, _, _, _)| self.provider_name_of(identity))
            .take(20)
            .collect();
        let mut shown = name.chars().take(64).collect::<String>();
        if shown.len() < name.len() {
            shown.push('…');
        }
        AgentError::new(
            ErrorCode::NotFound,
            format!(
                "there is no tool named `{shown}`; the tools ({}) are: {}",
                provider.name(),
                names.join(", ")
            ),
        )
    }
}

/// A call past [`DispatchOptions::max_calls`].
fn over_the_limit(index: usize, max_calls: usize) -> AgentError {
    AgentError::new(
        ErrorCode::RateLimited,
        format!(
            "one turn runs at most {max_calls} tool calls; this one (call {}) was not run: make it again in a later turn",
            index + 1
        ),
    )
    .with_retryable(true)
}

/// A call that failed (or was not run): its answer is its error's, written when asked for.
fn refused(
    provider: Provider,
    call: ToolCall,
    tool_id: Option<String>,
    error: AgentError,
) -> CallResult {
    CallResult {
        call,
        tool_id,
        outcome: Err(error),
        provider,
        written: None,
    }
}
