//! One call's line to the MCP client: its progress reports and log lines (sent in order, all
//! before the result) and its questions to the client's user and model.

#![allow(deprecated)] // rmcp marks logging and sampling deprecated (SEP-2577); MCP still has them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentio_core::{AgentError, BoxFuture, ErrorCode};
use agentio_tools::voice::{Answers, ClientPeer, LogLevel, Question, Questions};
use agentio_tools::{Progress, ProgressSink, ToolError};
use rmcp::model::{
    ElicitRequestParams, ElicitationSchema, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// The level a client set with `logging/setLevel`, per session: `0` while it has set none
/// (every line is sent), else the level's rank plus one.
#[derive(Clone, Debug, Default)]
pub(crate) struct LogThreshold(Arc<AtomicU8>);

/// No line is sent (a 2026-07-28 request that asked for none).
const SILENT: u8 = u8::MAX;

impl LogThreshold {
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level) + 1, Ordering::Relaxed);
    }

    /// One request's level (protocol 2026-07-28, `_meta`'s `logLevel`): none asked, none sent.
    pub(crate) fn for_request(level: Option<LoggingLevel>) -> Self {
        LogThreshold(Arc::new(AtomicU8::new(
            level.map_or(SILENT, |l| rank(l) + 1),
        )))
    }

    fn admits(&self, level: LogLevel) -> bool {
        let set = self.0.load(Ordering::Relaxed);
        set == 0 || (set != SILENT && rank_of(level) + 1 >= set)
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
    pub(crate) roots: bool,
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
    /// On 2026-07-28: the answers the client sent with this round, by key.
    responses: BTreeMap<String, Value>,
    /// On 2026-07-28: the body's state from the previous round, and for the next.
    state: Mutex<Option<Value>>,
    /// On 2026-07-28: the questions the body asked that this round has no answer to, as MCP
    /// input requests by key; the call then ends asking them.
    pending: Mutex<BTreeMap<String, Value>>,
    /// On 2026-07-28: the answers the body's questions found, by key.
    used: Mutex<BTreeMap<String, Value>>,
    /// A question needed a capability the client did not declare (its name).
    missing: Mutex<Option<&'static str>>,
}

/// The marker error a body's question ends a round with, on 2026-07-28.
pub(crate) const INPUT_REQUIRED: &str = "input_required";

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
            responses: BTreeMap::new(),
            state: Mutex::new(None),
            pending: Mutex::new(BTreeMap::new()),
            used: Mutex::new(BTreeMap::new()),
            missing: Mutex::new(None),
        }
    }

    /// This round's answers and the body's state from the previous round (2026-07-28).
    pub(crate) fn with_round(
        mut self,
        responses: BTreeMap<String, Value>,
        state: Option<Value>,
    ) -> Self {
        self.responses = responses;
        self.state = Mutex::new(state);
        self
    }

    /// The answers the body has had so far and used, this round's and earlier rounds': they
    /// travel in the sealed state, since a client sends each round's answers only once. Only
    /// those: an answer to nothing the body asked (a key made up, a wrong shape) is not sealed
    /// and sent back, so a round's state grows with the body's questions, not the client's
    /// inventions.
    pub(crate) fn answers_used(&self) -> BTreeMap<String, Value> {
        self.used.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The questions this round could not answer, when the body asked any.
    pub(crate) fn take_pending(&self) -> Option<BTreeMap<String, Value>> {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        (!pending.is_empty()).then_some(pending)
    }

    /// The body's state for the next round.
    pub(crate) fn take_state(&self) -> Option<Value> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The capability a question needed and the client did not declare.
    pub(crate) fn missing_capability(&self) -> Option<&'static str> {
        *self.missing.lock().unwrap_or_else(|e| e.into_inner())
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

    fn declared(&self, capability: &str) -> bool {
        match capability {
            "elicitation" => self.abilities.elicitation,
            "sampling" => self.abilities.sampling,
            _ => self.abilities.roots,
        }
    }

    /// Refuses `questions` when one needs a capability the client did not declare, and
    /// remembers which ([`Self::missing_capability`]).
    pub(crate) fn check_declared(&self, questions: &Questions) -> Result<(), ToolError> {
        for (key, question) in questions.iter() {
            let capability = question.capability();
            if !self.declared(capability) {
                *self.missing.lock().unwrap_or_else(|e| e.into_inner()) = Some(capability);
                return Err(AgentError::new(
                    ErrorCode::NoRoute,
                    format!(
                        "the tool asked `{key}`, but the MCP client did not declare the `{capability}` capability"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Asks one question over a server-to-client request (protocols before 2026-07-28) and
    /// returns the client's result as JSON.
    async fn request(&self, key: &str, question: &Question) -> Result<Value, ToolError> {
        let failed = |err: rmcp::service::ServiceError| {
            AgentError::new(
                ErrorCode::UpstreamError,
                format!("the MCP client did not answer `{key}`: {err}"),
            )
        };
        let result = match question {
            Question::Elicit { message, schema } => {
                let params = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: message.clone(),
                    requested_schema: elicitation_schema(schema)?,
                };
                serde_json::to_value(self.peer.create_elicitation(params).await.map_err(failed)?)
            }
            Question::Sample(request) => {
                let params = serde_json::to_value(request)
                    .and_then(serde_json::from_value)
                    .map_err(|err| {
                        AgentError::internal(format!(
                            "the sampling request is not one MCP can carry: {err}"
                        ))
                    })?;
                serde_json::to_value(self.peer.create_message(params).await.map_err(failed)?)
            }
            Question::ListRoots => {
                serde_json::to_value(self.peer.list_roots().await.map_err(failed)?)
            }
            _ => {
                return Err(AgentError::new(
                    ErrorCode::NoRoute,
                    format!("`{key}` is a question agent-io cannot put over MCP"),
                ));
            }
        };
        result.map_err(|err| AgentError::internal(format!("the client's answer to `{key}`: {err}")))
    }
}

/// Whether `answer` has the shape of an answer to `question` (an `ElicitResult` with its
/// action, a `CreateMessageResult` with content, a `ListRootsResult` with roots).
fn well_formed(question: &Question, answer: &Value) -> bool {
    match question {
        Question::Elicit { .. } => answer.get("action").is_some_and(Value::is_string),
        Question::Sample(_) => answer
            .get("content")
            .is_some_and(|c| c.is_object() || c.is_array()),
        Question::ListRoots => answer.get("roots").is_some_and(Value::is_array),
        _ => false,
    }
}

/// `questions` split by `answers`: the answers given, by key, and the questions still to ask.
/// An answer of the wrong shape is no answer: its question is asked again.
fn split<'q>(
    questions: &'q Questions,
    answers: &BTreeMap<String, Value>,
) -> (BTreeMap<String, Value>, Vec<(&'q str, &'q Question)>) {
    let mut given = BTreeMap::new();
    let mut unasked = Vec::new();
    for (key, question) in questions.iter() {
        match answers.get(key).filter(|a| well_formed(question, a)) {
            Some(answer) => {
                given.insert(key.to_owned(), answer.clone());
            }
            None => unasked.push((key, question)),
        }
    }
    (given, unasked)
}

/// The answers of the right shape `answers` holds to `questions`, by key; and the input
/// requests of the questions it holds none for (questions MCP cannot carry were refused when
/// they were set up, and are left out).
pub(crate) fn sort_answers(
    questions: &Questions,
    answers: &BTreeMap<String, Value>,
) -> (BTreeMap<String, Value>, BTreeMap<String, Value>) {
    let (given, unasked) = split(questions, answers);
    let pending = unasked
        .into_iter()
        .filter_map(|(key, question)| Some((key.to_owned(), input_request(question).ok()?)))
        .collect();
    (given, pending)
}

/// A question as an MCP input request (2026-07-28), by its wire JSON.
pub(crate) fn input_request(question: &Question) -> Result<Value, ToolError> {
    Ok(match question {
        Question::Elicit { message, schema } => serde_json::json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": message,
                "requestedSchema": serde_json::to_value(elicitation_schema(schema)?).unwrap_or_default(),
            },
        }),
        Question::Sample(request) => serde_json::json!({
            "method": "sampling/createMessage",
            "params": serde_json::to_value(request).unwrap_or_default(),
        }),
        Question::ListRoots => serde_json::json!({ "method": "roots/list", "params": {} }),
        _ => {
            return Err(AgentError::new(
                ErrorCode::NoRoute,
                "a question agent-io cannot put over MCP",
            ));
        }
    })
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

    fn ask<'a>(&'a self, questions: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>> {
        Box::pin(async move {
            self.check_declared(questions)?;
            if !self.abilities.inline {
                let mut answers = BTreeMap::new();
                for (key, question) in questions.iter() {
                    answers.insert(key.to_owned(), self.request(key, question).await?);
                }
                return Ok(Answers::new(answers));
            }
            // 2026-07-28: the answers came with this round, or the call ends asking.
            let (answers, unasked) = split(questions, &self.responses);
            self.used
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(answers.iter().map(|(k, v)| (k.clone(), v.clone())));
            if unasked.is_empty() {
                return Ok(Answers::new(answers));
            }
            let mut pending = BTreeMap::new();
            for (key, question) in unasked {
                pending.insert(key.to_owned(), input_request(question)?);
            }
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend(pending);
            Err(AgentError::new(
                ErrorCode::Other(INPUT_REQUIRED.into()),
                "the call asks the client first (input_required)",
            )
            .with_retryable(false))
        })
    }

    fn can(&self, capability: &str) -> bool {
        matches!(capability, "elicitation" | "sampling" | "roots") && self.declared(capability)
    }

    fn state(&self) -> Option<Value> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn keep_state(&self, state: Value) -> bool {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
        self.abilities.inline
    }
}

/// A task's line to the client (the Tasks extension, [`crate::tasks`]): the body's questions
/// become the task's `inputRequests`, answered with `tasks/update` while the body waits; its
/// progress becomes the task's `statusMessage`; its log lines go as the call's would.
pub(crate) struct TaskPeer {
    task: rmcp::task_manager::TaskContext,
    /// The call's own line: what its client declared, and its log lines.
    call: Arc<CallPeer>,
}

impl TaskPeer {
    pub(crate) fn new(task: rmcp::task_manager::TaskContext, call: Arc<CallPeer>) -> Self {
        TaskPeer { task, call }
    }

    /// The capability a question needed and the client did not declare.
    pub(crate) fn missing_capability(&self) -> Option<&'static str> {
        self.call.missing_capability()
    }

    /// Asks one question as an input request of the task and waits for its answer.
    async fn request(&self, key: &str, question: &Question) -> Result<(String, Value), ToolError> {
        let request: rmcp::model::InputRequest = serde_json::from_value(input_request(question)?)
            .map_err(|err| {
            AgentError::internal(format!("`{key}` is not an MCP input request: {err}"))
        })?;
        let answer = self
            .task
            .request_input(key, request)
            .await
            .map_err(|exit| match exit {
                rmcp::task_manager::TaskExit::Cancelled => AgentError::new(
                    ErrorCode::Cancelled,
                    format!("the task was cancelled while it waited for `{key}`"),
                ),
                rmcp::task_manager::TaskExit::Error(err) => AgentError::new(
                    ErrorCode::UpstreamError,
                    format!("`{key}` could not be asked: {}", err.message),
                ),
            })?;
        // A key is asked once in a task's life: an answer of the wrong shape cannot be asked
        // again under it, so it fails the question.
        if !well_formed(question, &answer) {
            return Err(AgentError::new(
                ErrorCode::UpstreamError,
                format!("the client's answer to `{key}` is not an answer to its question"),
            ));
        }
        Ok((key.to_owned(), answer))
    }
}

impl ProgressSink for TaskPeer {
    fn send(&self, report: Progress) {
        let mut line = match report.total {
            Some(total) => format!("{}/{total}", report.progress),
            None => report.progress.to_string(),
        };
        if let Some(message) = report.message {
            line.push_str(": ");
            line.push_str(&message);
        }
        self.task.set_status_message(line);
    }
}

impl ClientPeer for TaskPeer {
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
        self.call.log(level, logger, data)
    }

    fn ask<'a>(&'a self, questions: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>> {
        Box::pin(async move {
            self.call.check_declared(questions)?;
            // What was answered before the task was made (`McpServer::ask_before_task`) is
            // not asked again.
            let (mut answers, unasked) = split(questions, &self.call.responses);
            // Asked together: the task shows every question at once, and the client may
            // answer them one `tasks/update` at a time.
            let asks = unasked
                .into_iter()
                .map(|(key, question)| self.request(key, question));
            answers.extend(futures::future::try_join_all(asks).await?);
            Ok(Answers::new(answers))
        })
    }

    fn can(&self, capability: &str) -> bool {
        self.call.can(capability)
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
