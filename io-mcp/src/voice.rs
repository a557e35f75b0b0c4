//! One call's line to the MCP client: its progress reports and log lines (sent in order, all
//! before the result) and its questions to the client's user and model.

#![allow(deprecated)] // rmcp marks logging and sampling deprecated (SEP-2577); MCP still has them.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentio_core::{AgentError, BoxFuture, ErrorCode};
use agentio_tools::voice::{ClientPeer, ElicitAnswer, LogLevel, SamplingRequest, SamplingResponse};
use agentio_tools::{Progress, ProgressSink, ToolError};
use rmcp::model::{
    ElicitRequestParams, ElicitationAction, ElicitationSchema, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// The level a client set with `logging/setLevel`, per session: `0` while it has set none
/// (every line is sent), else the level's rank plus one.
#[derive(Clone, Debug, Default)]
pub(crate) struct LogThreshold(Arc<AtomicU8>);

impl LogThreshold {
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level) + 1, Ordering::Relaxed);
    }

    fn admits(&self, level: LogLevel) -> bool {
        let set = self.0.load(Ordering::Relaxed);
        set == 0 || rank_of(level) + 1 >= set
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn rank_of(level: LogLevel) -> u8 {
    rank(wire_level(level))
}

fn wire_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// What the client declared it can do, and which protocol it speaks.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClientAbilities {
    pub(crate) elicitation: bool,
    pub(crate) sampling: bool,
    /// Protocol 2026-07-28 or later: no server-to-client requests.
    pub(crate) inline: bool,
}

/// One call's line to the client.
pub(crate) struct CallPeer {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    threshold: LogThreshold,
    abilities: ClientAbilities,
    /// Started at the first report or log line: most calls send neither.
    forwarder: Mutex<Option<Forwarder>>,
}

enum Note {
    Progress(Progress),
    Log(LoggingMessageNotificationParam),
}

/// Sends one call's notifications to the client, in order.
struct Forwarder {
    sender: tokio::sync::mpsc::UnboundedSender<Note>,
    task: tokio::task::JoinHandle<()>,
}

impl CallPeer {
    pub(crate) fn new(
        peer: Peer<RoleServer>,
        progress_token: Option<ProgressToken>,
        threshold: LogThreshold,
        abilities: ClientAbilities,
    ) -> Self {
        CallPeer {
            peer,
            progress_token,
            threshold,
            abilities,
            forwarder: Mutex::new(None),
        }
    }

    pub(crate) fn has_progress_token(&self) -> bool {
        self.progress_token.is_some()
    }

    fn send(&self, note: Note) {
        let mut slot = self.forwarder.lock().unwrap_or_else(|e| e.into_inner());
        let forwarder = slot.get_or_insert_with(|| {
            let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Note>();
            let peer = self.peer.clone();
            let token = self.progress_token.clone();
            let task = tokio::spawn(async move {
                while let Some(note) = receiver.recv().await {
                    let sent = match note {
                        Note::Progress(report) => {
                            let Some(token) = token.clone() else { continue };
                            let mut param = ProgressNotificationParam::new(token, report.progress);
                            param.total = report.total;
                            param.message = report.message;
                            peer.notify_progress(param).await
                        }
                        Note::Log(param) => peer.notify_logging_message(param).await,
                    };
                    if sent.is_err() {
                        break;
                    }
                }
            });
            Forwarder { sender, task }
        });
        let _ = forwarder.sender.send(note);
    }

    /// Waits (a second at most) until every report and log line the body made is sent: they
    /// go before the result.
    pub(crate) async fn flush(&self) {
        let forwarder = self
            .forwarder
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(Forwarder { sender, task }) = forwarder {
            drop(sender);
            let _ = Box::pin(tokio::time::timeout(Duration::from_secs(1), task)).await;
        }
    }

    fn cannot(&self, what: &str, capability: &str) -> Option<ToolError> {
        let declared = match capability {
            "elicitation" => self.abilities.elicitation,
            _ => self.abilities.sampling,
        };
        if !declared {
            return Some(AgentError::new(
                ErrorCode::NoRoute,
                format!(
                    "the tool asked {what}, but the MCP client did not declare the `{capability}` capability"
                ),
            ));
        }
        if self.abilities.inline {
            return Some(AgentError::new(
                ErrorCode::NoRoute,
                format!(
                    "the tool asked {what}, but on MCP 2026-07-28 a server may not send requests to the client, and agent-io does not yet turn a tool body's questions into an `input_required` round trip"
                ),
            ));
        }
        None
    }
}

impl ProgressSink for CallPeer {
    fn send(&self, report: Progress) {
        if self.progress_token.is_some() {
            CallPeer::send(self, Note::Progress(report));
        }
    }
}

impl ClientPeer for CallPeer {
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        if !self.threshold.admits(level) {
            return false;
        }
        let mut param = LoggingMessageNotificationParam::new(wire_level(level), data);
        param.logger = logger.map(str::to_owned);
        self.send(Note::Log(param));
        true
    }

    fn elicit<'a>(
        &'a self,
        message: &'a str,
        schema: &'a Value,
    ) -> BoxFuture<'a, Result<ElicitAnswer, ToolError>> {
        Box::pin(async move {
            if let Some(err) = self.cannot("its user a question", "elicitation") {
                return Err(err);
            }
            let requested = elicitation_schema(schema)?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: message.to_owned(),
                requested_schema: requested,
            };
            let result = self.peer.create_elicitation(params).await.map_err(|err| {
                AgentError::new(
                    ErrorCode::UpstreamError,
                    format!("the MCP client did not answer the question: {err}"),
                )
            })?;
            Ok(match result.action {
                ElicitationAction::Accept => {
                    ElicitAnswer::Accept(result.content.unwrap_or(Value::Null))
                }
                ElicitationAction::Decline => ElicitAnswer::Decline,
                _ => ElicitAnswer::Cancel,
            })
        })
    }

    fn sample<'a>(
        &'a self,
        request: &'a SamplingRequest,
    ) -> BoxFuture<'a, Result<SamplingResponse, ToolError>> {
        Box::pin(async move {
            if let Some(err) = self.cannot("the client's model", "sampling") {
                return Err(err);
            }
            let params = serde_json::to_value(request)
                .and_then(serde_json::from_value)
                .map_err(|err| {
                    AgentError::internal(format!(
                        "the sampling request is not one MCP can carry: {err}"
                    ))
                })?;
            let result = self.peer.create_message(params).await.map_err(|err| {
                AgentError::new(
                    ErrorCode::UpstreamError,
                    format!("the MCP client's model did not answer: {err}"),
                )
            })?;
            let mut answer = serde_json::to_value(&result).unwrap_or_default();
            // The answer's content may be one block or a list of them; a tool reads one.
            if let Some(Value::Array(blocks)) = answer.get_mut("content")
                && blocks.len() == 1
            {
                let block = blocks.remove(0);
                answer["content"] = block;
            }
            serde_json::from_value(answer).map_err(|err| {
                AgentError::new(
                    ErrorCode::UpstreamError,
                    format!(
                        "the MCP client's sampling answer has no content agent-io reads: {err}"
                    ),
                )
            })
        })
    }
}

/// A Rust type's schema as MCP's elicitation `requestedSchema`: a flat object of primitive
/// properties. Anything else is the tool author's mistake, named.
fn elicitation_schema(schema: &Value) -> Result<ElicitationSchema, ToolError> {
    use agentio_core::profiles::{Profile, apply};
    // A form has no `$ref`s (schemars puts an enum's variants in `$defs`) and no formats
    // JSON Schema does not define (an `i64`'s `int64`).
    let shown = apply(Profile::Inlined, schema).and_then(|inlined| apply(Profile::Mcp, &inlined));
    let mut schema = shown.map_err(|refusals| {
        AgentError::internal(format!(
            "the type the tool asked for has a schema MCP elicitation cannot ask for: {}",
            refusals
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ))
    })?;
    if let Some(object) = schema.as_object_mut() {
        // The dialect and the Rust type's name mean nothing to a form.
        object.remove("$schema");
        object.remove("title");
        if let Some(Value::Object(properties)) = object.get_mut("properties") {
            for property in properties.values_mut() {
                titled_choices(property);
            }
        }
    }
    serde_json::from_value(schema).map_err(|err| {
        AgentError::internal(format!(
            "the type the tool asked for has a schema MCP elicitation cannot ask for (a flat object of strings, numbers, booleans and enums): {err}"
        ))
    })
}

/// An enum whose variants carry titles or doc comments is, to schemars, a `oneOf` of
/// `{const, title | description}`; to an MCP form it is a titled single-select
/// (`{type: "string", oneOf: [{const, title}]}`), or in a list a titled multi-select
/// (`items: {anyOf: [{const, title}]}`). A variant's doc comment is its title when it has none.
fn titled_choices(property: &mut Value) {
    fn retitle(branches: &mut [Value]) -> bool {
        let choices = branches
            .iter()
            .all(|b| b.get("const").is_some_and(Value::is_string));
        if choices {
            for branch in branches.iter_mut() {
                let Some(object) = branch.as_object_mut() else {
                    continue;
                };
                let title = object
                    .remove("title")
                    .or_else(|| object.remove("description"))
                    .unwrap_or_else(|| object["const"].clone());
                let value = object.remove("const").unwrap_or_default();
                object.clear();
                object.insert("const".into(), value);
                object.insert("title".into(), title);
            }
        }
        choices
    }
    let Some(object) = property.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(branches)) = object.get_mut("oneOf")
        && retitle(branches)
    {
        object.insert("type".into(), Value::String("string".into()));
        object.remove("enum");
    }
    if let Some(Value::Object(items)) = object.get_mut("items")
        && let Some(Value::Array(mut branches)) = items.remove("oneOf")
    {
        if retitle(&mut branches) {
            items.remove("type");
            items.insert("anyOf".into(), Value::Array(branches));
        } else {
            items.insert("oneOf".into(), Value::Array(branches));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_threshold_admits_its_level_and_above_and_everything_when_unset() {
        let threshold = LogThreshold::default();
        assert!(threshold.admits(LogLevel::Debug));
        threshold.set(LoggingLevel::Warning);
        assert!(!threshold.admits(LogLevel::Info));
        assert!(!threshold.admits(LogLevel::Notice));
        assert!(threshold.admits(LogLevel::Warning));
        assert!(threshold.admits(LogLevel::Emergency));
        threshold.set(LoggingLevel::Debug);
        assert!(threshold.admits(LogLevel::Debug));
        let levels = [
            LogLevel::Debug,
            LogLevel::Info,
            LogLevel::Notice,
            LogLevel::Warning,
            LogLevel::Error,
            LogLevel::Critical,
            LogLevel::Alert,
            LogLevel::Emergency,
        ];
        for (i, level) in levels.into_iter().enumerate() {
            assert_eq!(usize::from(rank_of(level)), i);
            // The wire names agree with ours.
            assert_eq!(
                serde_json::to_value(wire_level(level)).unwrap(),
                serde_json::to_value(level).unwrap()
            );
        }
    }

    #[test]
    fn only_flat_primitive_objects_are_elicitation_schemas() {
        let flat = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Confirm",
            "type": "object",
            "properties": { "sure": { "type": "boolean" }, "name": { "type": "string" } },
            "required": ["sure"]
        });
        let schema = elicitation_schema(&flat).unwrap();
        assert_eq!(schema.properties.len(), 2);
        let nested = json!({
            "type": "object",
            "properties": { "inner": { "type": "object", "properties": {} } }
        });
        let titled = json!({
            "type": "object",
            "properties": {
                "one": { "oneOf": [
                    { "const": "a", "description": "The first." },
                    { "type": "string", "const": "b", "title": "Bee", "description": "ignored" }
                ] },
                "many": { "type": "array", "items": { "oneOf": [
                    { "const": "x", "title": "Ex" }, { "const": "y" }
                ] } },
                "plain": { "type": "string", "enum": ["p", "q"] }
            }
        });
        let schema = serde_json::to_value(elicitation_schema(&titled).unwrap()).unwrap();
        assert_eq!(
            schema["properties"]["one"],
            json!({ "type": "string", "oneOf": [
                { "const": "a", "title": "The first." }, { "const": "b", "title": "Bee" }
            ] })
        );
        assert_eq!(
            schema["properties"]["many"]["items"],
            json!({ "anyOf": [{ "const": "x", "title": "Ex" }, { "const": "y", "title": "y" }] })
        );
        assert_eq!(schema["properties"]["plain"]["enum"], json!(["p", "q"]));
        let err = elicitation_schema(&nested).unwrap_err();
        assert_eq!(*err.code(), ErrorCode::Internal);
        assert!(err.message().contains("flat object"), "{}", err.message());
    }
}
