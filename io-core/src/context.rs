//! What a core receives from its host: the run id, the tools it may call, and an event sink.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::{AgentError, ErrorCode};
use crate::future::BoxFuture;

/// One tool call as the host's tool layer receives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// The run that makes the call.
    pub run_id: String,
    /// The tool's id.
    pub tool_id: String,
    /// The arguments, as JSON.
    pub input: Value,
}

/// The host's tools, callable by id with JSON in and out. The tool registry implements it;
/// a test can implement it with a closure-backed map.
pub trait ToolInvoker: Send + Sync {
    /// Calls a tool. An unknown id is a `not_found` error.
    fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>>;

    /// The ids of the tools this invoker offers.
    fn tool_ids(&self) -> Vec<String>;

    /// A tool's input schema and the schema of what it can produce, for checking skills
    /// before they run ([`AgentRuntime::validate_skill`](crate::AgentRuntime::validate_skill)).
    /// `None` when the tool is unknown, or when the invoker does not say (the default).
    fn tool_schemas(&self, tool_id: &str) -> Option<(Value, Value)> {
        let _ = tool_id;
        None
    }
}

/// Something a core or the runtime reports: a turn started or failed, a tool was called, or
/// anything a core chooses to emit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentEvent {
    /// The run it belongs to.
    pub run_id: String,
    /// What happened (`turn.started`, `turn.completed`, `turn.failed`, `tool.called`, ...).
    pub kind: Cow<'static, str>,
    /// Details, as JSON.
    pub payload: Value,
}

/// Receives [`AgentEvent`]s; the host's audit channel.
pub trait EventSink: Send + Sync {
    /// Records one event. Must not block for long: it is called on the turn's path.
    fn emit(&self, event: AgentEvent);
}

/// An in-memory [`EventSink`] that keeps every event, for tests, examples and small hosts.
///
/// ```
/// use agentio_core::{AgentContext, EventLog};
/// use std::sync::Arc;
/// let log = Arc::new(EventLog::default());
/// let ctx = AgentContext::new("run-1").with_event_sink(log.clone());
/// ctx.emit("note", serde_json::json!({ "n": 1 }));
/// assert_eq!(log.events()[0].kind, "note");
/// ```
#[derive(Default)]
pub struct EventLog {
    events: Mutex<Vec<AgentEvent>>,
}

impl EventLog {
    /// A copy of every event recorded so far, in order.
    ///
    /// ```
    /// use agentio_core::{AgentContext, EventLog};
    /// use std::sync::Arc;
    /// let log = Arc::new(EventLog::default());
    /// let ctx = AgentContext::new("run-1").with_event_sink(log.clone());
    /// ctx.emit("plan.chosen", serde_json::json!({ "steps": 2 }));
    /// ctx.emit("plan.done", serde_json::json!({}));
    /// let kinds: Vec<String> = log.events().into_iter().map(|e| e.kind.into_owned()).collect();
    /// assert_eq!(kinds, ["plan.chosen", "plan.done"]);
    /// ```
    pub fn events(&self) -> Vec<AgentEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl EventSink for EventLog {
    fn emit(&self, event: AgentEvent) {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
    }
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.events.lock().map_or(0, |events| events.len());
        f.debug_struct("EventLog").field("events", &count).finish()
    }
}

/// What a core needs from its host during a turn.
///
/// ```
/// use agentio_core::AgentContext;
/// let ctx = AgentContext::new("run-7").with_allowed_tools(["search"]);
/// assert_eq!(ctx.run_id(), "run-7");
/// assert!(!ctx.may_call("delete-everything"));
/// ```
#[derive(Clone)]
pub struct AgentContext {
    run_id: String,
    tools: Option<Arc<dyn ToolInvoker>>,
    allowed_tools: Option<Arc<BTreeSet<String>>>,
    events: Option<Arc<dyn EventSink>>,
    turn_timeout: Option<std::time::Duration>,
}

impl AgentContext {
    /// A context for the run `run_id`, with no tools and no event sink.
    ///
    /// ```
    /// let ctx = agentio_core::AgentContext::new("run-1");
    /// assert_eq!(ctx.run_id(), "run-1");
    /// assert!(ctx.tool_ids().is_empty() && !ctx.has_event_sink() && ctx.turn_timeout().is_none());
    /// ```
    pub fn new(run_id: impl Into<String>) -> Self {
        AgentContext {
            run_id: run_id.into(),
            tools: None,
            allowed_tools: None,
            events: None,
            turn_timeout: None,
        }
    }

    /// Sets a wall-clock ceiling for the turn run in this context; it takes precedence over
    /// the runtime's own ([`crate::AgentRuntime::with_turn_timeout`]).
    ///
    /// ```
    /// use agentio_core::AgentContext;
    /// use std::time::Duration;
    /// let ctx = AgentContext::new("run-1").with_turn_timeout(Duration::from_secs(5));
    /// assert_eq!(ctx.turn_timeout(), Some(Duration::from_secs(5)));
    /// ```
    #[must_use]
    pub fn with_turn_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.turn_timeout = Some(timeout);
        self
    }

    /// The turn ceiling this context sets, if any.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(agentio_core::AgentContext::new("run-1").turn_timeout(), None);
    /// let ctx = agentio_core::AgentContext::new("run-1").with_turn_timeout(Duration::from_millis(250));
    /// assert_eq!(ctx.turn_timeout(), Some(Duration::from_millis(250)));
    /// ```
    pub fn turn_timeout(&self) -> Option<std::time::Duration> {
        self.turn_timeout
    }

    /// Gives the core the host's tools.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// let ctx = AgentContext::new("run-1").with_tools(Arc::new(Clock));
    /// assert_eq!(ctx.tool_ids(), ["clock.now"]);
    /// let now = pollster::block_on(ctx.call_tool("clock.now", json!({}))).unwrap();
    /// assert_eq!(now["now"], "12:00");
    /// ```
    #[must_use]
    pub fn with_tools(mut self, tools: Arc<dyn ToolInvoker>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Limits the core to these tool ids (without it, every tool the invoker offers).
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// let ctx = AgentContext::new("run-1").with_tools(Arc::new(Clock)).with_allowed_tools(["weather.today"]);
    /// assert!(ctx.tool_ids().is_empty());
    /// let refused = pollster::block_on(ctx.call_tool("clock.now", json!({}))).unwrap_err();
    /// assert_eq!(refused.code().as_str(), "unauthorised");
    /// ```
    #[must_use]
    pub fn with_allowed_tools<I, S>(mut self, ids: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_tools = Some(Arc::new(ids.into_iter().map(Into::into).collect()));
        self
    }

    pub(crate) fn with_shared_allowed_tools(mut self, ids: Arc<BTreeSet<String>>) -> Self {
        self.allowed_tools = Some(ids);
        self
    }

    /// Sends the core's and the runtime's events to `sink`.
    ///
    /// ```
    /// use agentio_core::{AgentContext, EventLog};
    /// use std::sync::Arc;
    /// let log = Arc::new(EventLog::default());
    /// let ctx = AgentContext::new("run-1").with_event_sink(log.clone());
    /// ctx.emit("note", serde_json::json!({ "text": "hi" }));
    /// assert_eq!(log.events()[0].payload["text"], "hi");
    /// ```
    #[must_use]
    pub fn with_event_sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.events = Some(sink);
        self
    }

    /// The run's id.
    ///
    /// ```
    /// assert_eq!(agentio_core::AgentContext::new("run-42").run_id(), "run-42");
    /// ```
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Whether the core may call `tool_id`: the host offers it and it is allowed.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, EventLog, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// let offered = AgentContext::new("run-1").with_tools(Arc::new(Clock));
    /// assert!(offered.may_call("clock.now"));
    /// assert!(!offered.may_call("clock.set"));
    /// assert_eq!(offered.tool_ids(), ["clock.now"]);
    /// let narrowed = offered.with_allowed_tools(["weather.today"]);
    /// assert!(!narrowed.may_call("clock.now"));
    /// assert!(narrowed.tool_ids().is_empty());
    /// ```
    pub fn may_call(&self, tool_id: &str) -> bool {
        let allowed = self
            .allowed_tools
            .as_ref()
            .is_none_or(|ids| ids.contains(tool_id));
        allowed
            && self
                .tools
                .as_ref()
                .is_some_and(|t| t.tool_ids().iter().any(|id| id == tool_id))
    }

    /// The ids of the tools the core may call.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// assert!(AgentContext::new("run-1").tool_ids().is_empty());
    /// let ctx = AgentContext::new("run-1").with_tools(Arc::new(Clock));
    /// assert_eq!(ctx.tool_ids(), ["clock.now"]);
    /// ```
    pub fn tool_ids(&self) -> Vec<String> {
        let Some(tools) = &self.tools else {
            return Vec::new();
        };
        let mut ids = tools.tool_ids();
        if let Some(allowed) = &self.allowed_tools {
            ids.retain(|id| allowed.contains(id));
        }
        ids
    }

    /// Calls a tool by id with JSON arguments. A tool outside the allowed set is refused as
    /// `unauthorised` without reaching the host; every call is reported as a `tool.called` event.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, EventLog, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// let events = Arc::new(EventLog::default());
    /// let ctx = AgentContext::new("run-1")
    ///     .with_tools(Arc::new(Clock))
    ///     .with_allowed_tools(["clock.now"])
    ///     .with_event_sink(events.clone());
    /// let answer = pollster::block_on(ctx.call_tool("clock.now", json!({}))).unwrap();
    /// assert_eq!(answer["asked_by"], "run-1");
    /// let refused = pollster::block_on(ctx.call_tool("clock.set", json!({}))).unwrap_err();
    /// assert_eq!(refused.code().as_str(), "unauthorised");
    /// let seen: Vec<_> = events.events().into_iter().map(|e| e.payload).collect();
    /// assert_eq!(seen, [
    ///     json!({ "tool": "clock.now", "ok": true }),
    ///     json!({ "tool": "clock.set", "ok": false, "code": "unauthorised" }),
    /// ]);
    /// ```
    pub async fn call_tool(&self, tool_id: &str, input: Value) -> Result<Value, AgentError> {
        let allowed = self
            .allowed_tools
            .as_ref()
            .is_none_or(|ids| ids.contains(tool_id));
        let result = match (&self.tools, allowed) {
            (_, false) => Err(AgentError::new(
                ErrorCode::Unauthorised,
                format!("tool `{tool_id}` is not available to this core"),
            )),
            (None, true) => Err(AgentError::new(
                ErrorCode::NotFound,
                format!("no tools are available, so `{tool_id}` cannot be called"),
            )),
            (Some(tools), true) => {
                let call = ToolCall {
                    run_id: self.run_id.clone(),
                    tool_id: tool_id.to_owned(),
                    input,
                };
                tools.invoke(call).await
            }
        };
        let outcome = match &result {
            Ok(_) => json!({ "tool": tool_id, "ok": true }),
            Err(err) => json!({ "tool": tool_id, "ok": false, "code": err.code() }),
        };
        self.emit("tool.called", outcome);
        result
    }

    /// [`Self::call_tool`] with typed arguments and result. A result that does not decode into
    /// `O` is `upstream_error`: the tool answered, but not in the shape the core expected.
    ///
    /// ```
    /// use agentio_core::{AgentContext, AgentError, BoxFuture, ToolCall, ToolInvoker};
    /// use serde_json::{Value, json};
    /// use std::sync::Arc;
    ///
    /// /// A host with one tool, `clock.now`.
    /// struct Clock;
    /// impl ToolInvoker for Clock {
    ///     fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
    ///         Box::pin(async move { Ok(json!({ "asked_by": call.run_id, "now": "12:00" })) })
    ///     }
    ///     fn tool_ids(&self) -> Vec<String> { vec!["clock.now".into()] }
    /// }
    ///
    /// #[derive(serde::Serialize)]
    /// struct Ask { zone: String }
    /// #[derive(serde::Deserialize)]
    /// struct Now { now: String }
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Forecast { rain: f64 }
    ///
    /// let ctx = AgentContext::new("run-1").with_tools(Arc::new(Clock));
    /// let ask = Ask { zone: "UTC".into() };
    /// let now: Now = pollster::block_on(ctx.call_tool_typed("clock.now", &ask)).unwrap();
    /// assert_eq!(now.now, "12:00");
    /// let wrong = pollster::block_on(ctx.call_tool_typed::<_, Forecast>("clock.now", &ask)).unwrap_err();
    /// assert_eq!(wrong.code().as_str(), "upstream_error");
    /// ```
    pub async fn call_tool_typed<I, O>(&self, tool_id: &str, input: &I) -> Result<O, AgentError>
    where
        I: Serialize + ?Sized,
        O: DeserializeOwned,
    {
        let input = serde_json::to_value(input)?;
        let output = self.call_tool(tool_id, input).await?;
        serde_json::from_value(output).map_err(|err| {
            AgentError::new(
                ErrorCode::UpstreamError,
                format!("the result of tool `{tool_id}` has an unexpected shape"),
            )
            .with_operator_detail(err.to_string())
        })
    }

    /// Whether events go anywhere; lets a caller skip building payloads nobody reads.
    ///
    /// ```
    /// use agentio_core::{AgentContext, EventLog};
    /// use std::sync::Arc;
    /// assert!(!AgentContext::new("run-1").has_event_sink());
    /// assert!(AgentContext::new("run-1").with_event_sink(Arc::new(EventLog::default())).has_event_sink());
    /// ```
    pub fn has_event_sink(&self) -> bool {
        self.events.is_some()
    }

    /// Reports an event to the host's sink (a no-op without one).
    ///
    /// ```
    /// use agentio_core::{AgentContext, EventLog};
    /// use std::sync::Arc;
    ///
    /// let events = Arc::new(EventLog::default());
    /// let ctx = AgentContext::new("run-1").with_event_sink(events.clone());
    /// assert!(ctx.has_event_sink());
    /// ctx.emit("plan.chosen", serde_json::json!({ "steps": 3 }));
    /// assert_eq!(events.events()[0].kind, "plan.chosen");
    /// AgentContext::new("run-2").emit("unheard", serde_json::json!(null));
    /// ```
    pub fn emit(&self, kind: impl Into<Cow<'static, str>>, payload: Value) {
        if let Some(sink) = &self.events {
            sink.emit(AgentEvent {
                run_id: self.run_id.clone(),
                kind: kind.into(),
                payload,
            });
        }
    }
}

impl fmt::Debug for AgentContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentContext")
            .field("run_id", &self.run_id)
            .field("tools", &self.tools.is_some())
            .field("allowed_tools", &self.allowed_tools)
            .field("events", &self.events.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_has_an_event_sink_only_when_given_one() {
        assert!(!AgentContext::new("run-1").has_event_sink());
        let with = AgentContext::new("run-1").with_event_sink(Arc::new(EventLog::default()));
        assert!(with.has_event_sink());
    }

    /// Offers three tools and says nothing of their schemas.
    struct Three;

    impl ToolInvoker for Three {
        fn invoke(&self, call: ToolCall) -> BoxFuture<'_, Result<Value, AgentError>> {
            Box::pin(async move { Ok(json!({ "called": call.tool_id })) })
        }
        fn tool_ids(&self) -> Vec<String> {
            vec!["a".into(), "b".into(), "c".into()]
        }
    }

    #[test]
    fn a_core_sees_the_offered_tools_it_is_allowed() {
        let offered = AgentContext::new("r").with_tools(Arc::new(Three));
        assert_eq!(offered.tool_ids(), ["a", "b", "c"]);
        let allowed = AgentContext::new("r")
            .with_tools(Arc::new(Three))
            .with_allowed_tools(["c", "a", "z"]);
        assert_eq!(allowed.tool_ids(), ["a", "c"]);
        assert!(allowed.may_call("a") && !allowed.may_call("b") && !allowed.may_call("z"));
        assert!(AgentContext::new("r").tool_ids().is_empty());
        assert!(
            AgentContext::new("r")
                .with_allowed_tools(["a"])
                .tool_ids()
                .is_empty()
        );
    }

    #[test]
    fn an_invoker_that_does_not_say_has_no_schemas() {
        // The default: a skill step naming such a tool cannot be checked before it runs.
        assert_eq!(Three.tool_schemas("a"), None);
    }

    #[test]
    fn debug_shows_what_is_attached_not_what_was_said() {
        let log = Arc::new(EventLog::default());
        let ctx = AgentContext::new("run-7")
            .with_event_sink(log.clone())
            .with_allowed_tools(["kb.search"]);
        ctx.emit("note", json!({ "token": "s3cr3t" }));
        assert_eq!(format!("{log:?}"), "EventLog { events: 1 }");
        let debug = format!("{ctx:?}");
        for part in [
            "AgentContext",
            "run-7",
            "kb.search",
            "events: true",
            "tools: false",
        ] {
            assert!(debug.contains(part), "{debug}");
        }
        assert!(!debug.contains("s3cr3t"), "{debug}");
    }
}
