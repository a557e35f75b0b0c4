//! `TypedTool`, what tool authors implement, and `ToolPlugin`, what the registry holds.

use std::future::Future;
use std::sync::Arc;

use agentio_core::files::IoHandle;
use agentio_core::{AgentError, AgentInput, AgentOutput, BoundarySchema, BoxFuture, ErrorCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::call::{Cancellation, Progress, ProgressReporter};
use crate::contract::ToolContract;
use agentio_core::files::mutation_covers;

/// The error every tool returns: the boundary error of agentio-core, with its standard codes and
/// its `{ ok: false, error: { code, message, retryable } }` envelope.
pub type ToolError = AgentError;

/// A native Rust tool with typed input and output.
///
/// Write the contract with the [`tool`](crate::tool) attribute on the impl block: it fills in
/// [`TypedTool::ID`] and [`TypedTool::contract`] and checks every contract field at compile
/// time. The spec's `TypedTool: ToolPlugin` plus a blanket impl is circular, so the relation
/// runs one way here: every `TypedTool` *is* a [`ToolPlugin`] through a blanket impl, and the
/// registry erases it once, when it is registered.
///
/// ```
/// use agentio_tools::{ToolContext, ToolError, TypedTool, tool};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentInput)]
/// struct Text { text: String }
///
/// #[derive(Serialize, Deserialize, JsonSchema, agentio_core::AgentOutput)]
/// struct Count { words: usize }
///
/// struct WordCount;
///
/// /// Counts the words of a text.
/// #[tool(id = "text.word-count", version = "1.0.0", idempotent)]
/// impl TypedTool for WordCount {
///     type Input = Text;
///     type Output = Count;
///
///     async fn execute_typed(&self, input: Text, _ctx: &ToolContext) -> Result<Count, ToolError> {
///         Ok(Count { words: input.text.split_whitespace().count() })
///     }
/// }
///
/// assert_eq!(WordCount::ID, "text.word-count");
/// assert_eq!(WordCount::contract().identity(), "text.word-count@1");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a typed tool",
    label = "`{Self}` does not implement `TypedTool`",
    note = "implement `TypedTool` for `{Self}` and put `#[tool(id = \"...\", version = \"...\")]` on the impl block, or put `#[tool(...)]` on an `async fn`"
)]
pub trait TypedTool: Send + Sync + 'static {
    /// The arguments.
    type Input: AgentInput;
    /// The success value.
    type Output: AgentOutput;

    /// The contract's id, as a constant so that registries can refuse duplicates at compile time.
    const ID: &'static str;

    /// The contract, with the schemas of `Input` and `Output`.
    fn contract() -> ToolContract;

    /// The tool's file contract (AIP-16 `inputsFiles` / `outputsFiles`), when it declares one
    /// with `#[define_io]`; the registry then stages and syncs its files around each call.
    fn file_contract() -> Option<&'static IoHandle> {
        None
    }

    /// Runs the tool on validated input. The context, when the contract declares one, has
    /// been validated too; the output is validated after this returns.
    fn execute_typed(
        &self,
        input: Self::Input,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;
}

/// A tool with JSON in and out: what the registry stores and calls.
///
/// Every [`TypedTool`] is one; tools whose body is not Rust (WASM, JavaScript, a remote MCP
/// server) implement it directly. It is dyn-compatible.
pub trait ToolPlugin: Send + Sync {
    /// The contract. Called once, at registration.
    fn tool_contract(&self) -> ToolContract;

    /// A compiled input schema to reuse, if the plugin has one (typed tools do); otherwise the
    /// registry compiles `contract().inputs` once.
    fn input_boundary(&self) -> Option<&'static BoundarySchema> {
        None
    }

    /// A compiled output schema to reuse, if the plugin has one.
    fn output_boundary(&self) -> Option<&'static BoundarySchema> {
        None
    }

    /// The tool's file contract, if it declares files.
    fn file_contract(&self) -> Option<&'static IoHandle> {
        None
    }

    /// Runs the tool on a validated input.
    fn execute<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;

    /// Checks and decodes an input ahead of the call, for [`Self::__execute_decoded`]: the
    /// registry's fast path for typed tools (serde decodes, and only the residual of the
    /// schema is checked; the outcome and errors are those of full validation). `None`: the
    /// plugin has no typed input, and the registry validates the `Value` in full.
    #[doc(hidden)]
    fn __decode(&self, _input: &Value) -> Option<Result<DecodedInput, ToolError>> {
        None
    }

    /// Runs the tool on an input [`Self::__decode`] returned.
    #[doc(hidden)]
    fn __execute_decoded<'a>(
        &'a self,
        _input: DecodedInput,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(async {
            Err(AgentError::internal(
                "the tool plugin decodes no input ahead of the call",
            ))
        })
    }

    /// [`Self::execute`] with the output written straight to JSON text, checked as it is
    /// written (a typed tool's [`AgentOutput::to_output_json`]). The registry asks for it only
    /// when [`Self::__validates_output`] is true; by default the output is the `Value`'s text.
    #[doc(hidden)]
    fn __execute_json<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        written(self.execute(input, ctx))
    }

    /// [`Self::__execute_decoded`], the output written as in [`Self::__execute_json`].
    #[doc(hidden)]
    fn __execute_decoded_json<'a>(
        &'a self,
        input: DecodedInput,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        written(self.__execute_decoded(input, ctx))
    }

    /// Whether [`Self::execute`] already checks its output against
    /// [`Self::output_boundary`] (typed tools do, on the typed value); the registry then does
    /// not check it again.
    #[doc(hidden)]
    fn __validates_output(&self) -> bool {
        false
    }
}

/// A typed input decoded and checked ahead of a call ([`ToolPlugin::__decode`]). Not public API.
#[doc(hidden)]
pub struct DecodedInput(Box<dyn std::any::Any + Send>);

impl DecodedInput {
    fn into_typed<I: 'static>(self) -> Result<I, ToolError> {
        match self.0.downcast::<I>() {
            Ok(decoded) => Ok(*decoded),
            Err(_) => Err(AgentError::internal(
                "a decoded input was given to a tool of another input type",
            )),
        }
    }
}

/// A body's `Value` output as its JSON text (what [`ToolPlugin::__execute_json`] answers for a
/// plugin that does not write text itself).
fn written(
    output: BoxFuture<'_, Result<Value, ToolError>>,
) -> BoxFuture<'_, Result<String, ToolError>> {
    Box::pin(async move { Ok(output.await?.to_string()) })
}

/// A typed tool's input decoded from JSON when the body starts, the JSON dropped before the
/// body runs.
fn from_json<T: TypedTool>(input: Value) -> impl FnOnce() -> Result<T::Input, ToolError> {
    move || Ok(T::Input::input_boundary().decode(&input)?)
}

/// A typed tool's body: its input taken (decoded inside the future, so a panicking
/// `Deserialize` is contained with the body), the body run, its output encoded by `encode` (to
/// a `Value`, or straight to text).
async fn run_typed<T: TypedTool, O>(
    tool: &T,
    ctx: &ToolContext,
    input: impl FnOnce() -> Result<T::Input, ToolError>,
    encode: impl FnOnce(&T::Output) -> Result<O, ToolError>,
) -> Result<O, ToolError> {
    let input = input()?;
    encode(&tool.execute_typed(input, ctx).await?)
}

impl std::fmt::Debug for DecodedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DecodedInput(..)")
    }
}

#[diagnostic::do_not_recommend]
impl<T: TypedTool> ToolPlugin for T {
    fn tool_contract(&self) -> ToolContract {
        T::contract()
    }

    fn input_boundary(&self) -> Option<&'static BoundarySchema> {
        Some(T::Input::input_boundary())
    }

    fn output_boundary(&self) -> Option<&'static BoundarySchema> {
        Some(T::Output::output_boundary())
    }

    fn file_contract(&self) -> Option<&'static IoHandle> {
        T::file_contract()
    }

    fn execute<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(run_typed(
            self,
            ctx,
            from_json::<T>(input),
            T::Output::to_output_value,
        ))
    }

    fn __decode(&self, input: &Value) -> Option<Result<DecodedInput, ToolError>> {
        Some(T::Input::from_input_value(input).map(|decoded| DecodedInput(Box::new(decoded))))
    }

    fn __execute_decoded<'a>(
        &'a self,
        input: DecodedInput,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>> {
        Box::pin(run_typed(
            self,
            ctx,
            || input.into_typed(),
            T::Output::to_output_value,
        ))
    }

    fn __execute_json<'a>(
        &'a self,
        input: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(run_typed(
            self,
            ctx,
            from_json::<T>(input),
            T::Output::to_output_json,
        ))
    }

    fn __execute_decoded_json<'a>(
        &'a self,
        input: DecodedInput,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(run_typed(
            self,
            ctx,
            || input.into_typed(),
            T::Output::to_output_json,
        ))
    }

    fn __validates_output(&self) -> bool {
        true
    }
}

/// A call's run id: the caller's, or a fresh one, written only when something reads it (most
/// bodies never do; writing it per call was an allocation and a copy per call).
#[derive(Clone)]
pub(crate) enum RunId {
    Given(Arc<str>),
    /// A sequence number taken from `agentio_core`, and the id it writes, once read. Copies write
    /// their own text, the same text.
    Fresh(u64, std::sync::OnceLock<Box<str>>),
}

impl RunId {
    /// The caller's id, or a fresh one.
    pub(crate) fn of(given: Option<&str>) -> RunId {
        match given {
            Some(id) => RunId::Given(Arc::from(id)),
            None => RunId::Fresh(
                agentio_core::__next_run_sequence(),
                std::sync::OnceLock::new(),
            ),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            RunId::Given(id) => id,
            RunId::Fresh(sequence, text) => {
                text.get_or_init(|| agentio_core::__run_id_text(*sequence).into_boxed_str())
            }
        }
    }
}

impl std::fmt::Debug for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// What a tool body receives from the host with each call.
#[derive(Clone, Debug)]
pub struct ToolContext {
    run_id: RunId,
    tool_id: Arc<str>,
    attempt: u32,
    /// `None` for `null`: most calls have no context, and a clone per attempt stays cheap.
    context: Option<Arc<Value>>,
    mutates: Arc<[String]>,
    progress: Option<ProgressReporter>,
    cancellation: Option<Cancellation>,
    /// What the host lends this call, within the contract's `requires`.
    grant: Option<Arc<crate::capabilities::Grant>>,
    /// Who makes the call, when the host knows.
    caller: Option<Arc<crate::caller::Caller>>,
    /// Where attached content goes and the client to speak to, when the host gives them.
    voice: Option<Arc<Voice>>,
}

/// A call's content collector and client, behind one pointer: most calls have neither.
struct Voice {
    content: Option<crate::content::ContentCollector>,
    client: Option<Arc<dyn crate::voice::ClientPeer>>,
    /// How many one-off questions the body has asked.
    asked: std::sync::atomic::AtomicU32,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice")
            .field("content", &self.content)
            .field("client", &self.client.is_some())
            .finish()
    }
}

impl ToolContext {
    /// A context for calling `tool_id` in the run `run_id`, first attempt, no host context and
    /// no declared mutations. The registry builds these; tests of a tool body can too.
    ///
    /// Both ids take a `&str`, a `String` or an `Arc<str>` (shared, not copied).
    ///
    /// ```
    /// use agentio_tools::ToolContext;
    /// let ctx = ToolContext::new("run-1", "kb.search");
    /// assert_eq!((ctx.run_id(), ctx.tool_id(), ctx.attempt()), ("run-1", "kb.search", 1));
    /// assert!(ctx.raw_context().is_null());
    /// assert!(!ctx.is_cancelled());
    /// ```
    pub fn new(run_id: impl Into<Arc<str>>, tool_id: impl Into<Arc<str>>) -> Self {
        static NO_MUTATIONS: std::sync::OnceLock<Arc<[String]>> = std::sync::OnceLock::new();
        let none = Arc::clone(NO_MUTATIONS.get_or_init(|| Arc::from(Vec::new())));
        Self::for_call(RunId::Given(run_id.into()), tool_id.into(), none)
    }

    /// The registry's context for one call: the contract's mutations, shared.
    pub(crate) fn for_call(run_id: RunId, tool_id: Arc<str>, mutates: Arc<[String]>) -> Self {
        ToolContext {
            run_id,
            tool_id,
            attempt: 1,
            context: None,
            mutates,
            progress: None,
            cancellation: None,
            grant: None,
            caller: None,
            voice: None,
        }
    }

    pub(crate) fn with_voice(
        mut self,
        content: Option<crate::content::ContentCollector>,
        client: Option<Arc<dyn crate::voice::ClientPeer>>,
    ) -> Self {
        self.voice = Some(Arc::new(Voice {
            content,
            client,
            asked: std::sync::atomic::AtomicU32::new(0),
        }));
        self
    }

    /// Collects the body's [`Self::attach`]ed content into `collector` (the registry sets the
    /// caller's [`CallOptions::content`](crate::CallOptions::content)).
    #[must_use]
    pub fn with_content(self, collector: crate::content::ContentCollector) -> Self {
        let client = self.client().cloned();
        self.with_voice(Some(collector), client)
    }

    /// Speaks to `client` (the registry sets the caller's
    /// [`CallOptions::client`](crate::CallOptions::client)).
    #[must_use]
    pub fn with_client(self, client: Arc<dyn crate::voice::ClientPeer>) -> Self {
        let content = self.voice.as_ref().and_then(|v| v.content.clone());
        self.with_voice(content, Some(client))
    }

    fn client(&self) -> Option<&Arc<dyn crate::voice::ClientPeer>> {
        self.voice.as_ref().and_then(|v| v.client.as_ref())
    }

    /// Adds a content block to the call's result, beside its output (see
    /// [`crate::content`]). Returns whether the host collects content; when it does not, the
    /// block is dropped.
    ///
    /// ```
    /// use agentio_tools::ToolContext;
    /// use agentio_tools::content::{Content, ContentCollector};
    ///
    /// let collector = ContentCollector::new();
    /// let ctx = ToolContext::new("run-1", "chart.draw").with_content(collector.clone());
    /// assert!(ctx.attach(Content::image(b"png", "image/png")));
    /// assert_eq!(collector.take()[0].kind(), "image");
    /// assert!(!ToolContext::new("run-1", "chart.draw").attach(Content::text("lost")));
    /// ```
    pub fn attach(&self, content: crate::content::Content) -> bool {
        match self.voice.as_ref().and_then(|v| v.content.as_ref()) {
            Some(collector) => {
                collector.push(content);
                true
            }
            None => false,
        }
    }

    /// Logs `data` (any JSON: a string, an object) to the client at `level`, under the tool's
    /// id as the logger (MCP `notifications/message`). Returns whether the client hears it:
    /// not when there is no client, or it asked for a higher level (`logging/setLevel`).
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use agentio_core::BoxFuture;
    /// use agentio_tools::voice::{Answers, ClientPeer, LogLevel, Questions};
    /// use agentio_tools::{ToolContext, ToolError};
    /// use serde_json::{Value, json};
    ///
    /// /// A client that hears warnings and above.
    /// #[derive(Default)]
    /// struct Warnings(Mutex<Vec<(LogLevel, Option<String>, Value)>>);
    /// impl ClientPeer for Warnings {
    ///     fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) -> bool {
    ///         let heard = level >= LogLevel::Warning;
    ///         if heard { self.0.lock().unwrap().push((level, logger.map(str::to_owned), data)); }
    ///         heard
    ///     }
    ///     // This client answers no question.
    ///     fn ask<'a>(&'a self, _: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>> {
    ///         Box::pin(async { Err(ToolError::new(agentio_tools::ErrorCode::NoRoute, "no questions here")) })
    ///     }
    /// }
    ///
    /// let client = Arc::new(Warnings::default());
    /// let ctx = ToolContext::new("run-1", "disk.clean").with_client(client.clone());
    /// assert!(!ctx.log(LogLevel::Info, "starting"));
    /// assert!(ctx.log(LogLevel::Warning, json!({ "free_bytes": 1024 })));
    /// let heard = client.0.lock().unwrap();
    /// assert_eq!(heard[0], (LogLevel::Warning, Some("disk.clean".into()), json!({ "free_bytes": 1024 })));
    /// ```
    pub fn log(&self, level: crate::voice::LogLevel, data: impl serde::Serialize) -> bool {
        match self.client() {
            Some(client) => {
                let data = serde_json::to_value(data).unwrap_or_else(|err| {
                    Value::String(format!("(the log data did not serialize: {err})"))
                });
                client.log(level, Some(&self.tool_id), data)
            }
            None => false,
        }
    }

    /// Puts `questions` to the client at once and returns its answers by key (see
    /// [`crate::voice::Questions`]). On MCP before 2026-07-28 the server asks the client
    /// there and then; on 2026-07-28 the call ends asking them (`input_required`) and the body
    /// runs again, from the start, with the answers: so ask before doing anything that must
    /// not happen twice, and keep what an earlier round learned with [`Self::keep_state`].
    /// Fails with `no_route` at once when no client can answer (none, or one without the
    /// capability a question needs).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use std::sync::Arc;
    /// use agentio_core::BoxFuture;
    /// use agentio_tools::voice::{Answers, ClientPeer, Elicited, LogLevel, Questions};
    /// use agentio_tools::{ToolContext, ToolError};
    /// use serde_json::{Value, json};
    ///
    /// /// A client whose user always answers `{"sure": true}`.
    /// struct Yes;
    /// impl ClientPeer for Yes {
    ///     fn log(&self, _: LogLevel, _: Option<&str>, _: Value) -> bool { true }
    ///     fn ask<'a>(&'a self, questions: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>> {
    ///         let answers = questions
    ///             .keys()
    ///             .map(|key| (key.to_owned(), json!({ "action": "accept", "content": { "sure": true } })))
    ///             .collect::<BTreeMap<_, _>>();
    ///         Box::pin(async move { Ok(Answers::new(answers)) })
    ///     }
    /// }
    ///
    /// #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
    /// struct Confirm { sure: bool }
    ///
    /// let ctx = ToolContext::new("run-1", "files.purge").with_client(Arc::new(Yes));
    /// let answer = pollster::block_on(ctx.elicit::<Confirm>("Purge everything?")).unwrap();
    /// assert_eq!(answer, Elicited::Accepted(Confirm { sure: true }));
    /// ```
    pub async fn ask(
        &self,
        questions: &crate::voice::Questions,
    ) -> Result<crate::voice::Answers, ToolError> {
        match self.client() {
            Some(client) => client.ask(questions).await,
            None => Err(crate::voice::no_client(&self.tool_id, "the client")),
        }
    }

    /// Whether the caller's client declared `capability` (`elicitation`, `sampling`,
    /// `roots`); `false` without a client.
    pub fn client_can(&self, capability: &str) -> bool {
        self.client().is_some_and(|c| c.can(capability))
    }

    /// The key of the body's next one-off question: the same in every round of a call, as
    /// long as the body asks in the same order.
    fn next_question_key(&self) -> String {
        let n = self.voice.as_ref().map_or(0, |v| {
            v.asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        });
        format!("question-{}", n + 1)
    }

    /// Asks the client's user `message`, with a form for a `T` ([`Self::ask`] with one
    /// question): `T`'s schema is the requested schema (MCP elicitation takes a flat object
    /// of strings, numbers, booleans and enums; a variant's doc comment or `title` becomes its
    /// title in the form), and an accepted answer is validated against it and decoded, or
    /// refused as `input_invalid` with each violation's pointer.
    pub async fn elicit<T: agentio_core::AgentInput>(
        &self,
        message: &str,
    ) -> Result<crate::voice::Elicited<T>, ToolError> {
        let key = self.next_question_key();
        let questions = crate::voice::Questions::new().elicit::<T>(key.clone(), message);
        self.ask(&questions).await?.elicited(&key)
    }

    /// Asks the client's model to complete `request` ([`Self::ask`] with one question).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agentio_core::BoxFuture;
    /// use agentio_tools::voice::{Answers, ClientPeer, LogLevel, Questions, SamplingRequest};
    /// use agentio_tools::{ToolContext, ToolError};
    /// use serde_json::{Value, json};
    ///
    /// /// A client whose model always says "hi".
    /// struct Model;
    /// impl ClientPeer for Model {
    ///     fn log(&self, _: LogLevel, _: Option<&str>, _: Value) -> bool { false }
    ///     fn ask<'a>(&'a self, questions: &'a Questions) -> BoxFuture<'a, Result<Answers, ToolError>> {
    ///         let answers = questions.keys().map(|key| (key.to_owned(), json!({
    ///             "role": "assistant", "model": "m-1", "content": { "type": "text", "text": "hi" }
    ///         }))).collect();
    ///         Box::pin(async move { Ok(Answers::new(answers)) })
    ///     }
    /// }
    ///
    /// let ctx = ToolContext::new("run-1", "chat.greet").with_client(Arc::new(Model));
    /// let answer = pollster::block_on(ctx.sample(SamplingRequest::prompt("Say hi", 16))).unwrap();
    /// assert_eq!((answer.model.as_str(), answer.text()), ("m-1", Some("hi")));
    /// ```
    pub async fn sample(
        &self,
        request: crate::voice::SamplingRequest,
    ) -> Result<crate::voice::SamplingResponse, ToolError> {
        let key = self.next_question_key();
        let questions = crate::voice::Questions::new().sample(key.clone(), request);
        self.ask(&questions).await?.sampled(&key)
    }

    /// What the body kept with [`Self::keep_state`] in the previous round of this call, when
    /// the host runs calls in rounds (MCP 2026-07-28), decoded as a `T`.
    pub fn state<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        self.client()
            .and_then(|c| c.state())
            .and_then(|state| serde_json::from_value(state).ok())
    }

    /// Keeps `state` for the body's next round of this call (MCP `requestState`, sealed by
    /// the server so that the client cannot change it). Returns whether the host keeps it.
    pub fn keep_state(&self, state: impl serde::Serialize) -> bool {
        match (self.client(), serde_json::to_value(state)) {
            (Some(client), Ok(state)) => client.keep_state(state),
            _ => false,
        }
    }

    /// Sets who makes the call (the registry sets the caller's [`CallOptions::caller`]).
    ///
    /// ```
    /// use agentio_tools::{Caller, ToolContext};
    /// let ctx = ToolContext::new("r", "t").with_caller(Caller::new("user-42"));
    /// assert_eq!(ctx.caller().unwrap().subject, "user-42");
    /// assert!(ToolContext::new("r", "t").caller().is_none());
    /// ```
    ///
    /// [`CallOptions::caller`]: crate::CallOptions::caller
    #[must_use]
    pub fn with_caller(mut self, caller: crate::caller::Caller) -> Self {
        self.caller = Some(Arc::new(caller));
        self
    }

    pub(crate) fn with_shared_caller(mut self, caller: Option<Arc<crate::caller::Caller>>) -> Self {
        self.caller = caller;
        self
    }

    /// Who makes the call, as the host authenticated them; `None` when the host knows no
    /// caller.
    pub fn caller(&self) -> Option<&crate::caller::Caller> {
        self.caller.as_deref()
    }

    /// The registry's grant for this call (see [`crate::capabilities`]).
    pub(crate) fn with_grant(mut self, grant: Arc<crate::capabilities::Grant>) -> Self {
        self.grant = Some(grant);
        self
    }

    pub(crate) fn grant(&self) -> Option<&Arc<crate::capabilities::Grant>> {
        self.grant.as_ref()
    }

    fn no_grant(&self) -> ToolError {
        agentio_core::AgentError::new(
            agentio_core::ErrorCode::Unauthorised,
            format!(
                "`{}` may not reach tools, secrets or the network: the host lends this call none (ToolRegistry::with_capabilities)",
                self.tool_id
            ),
        )
    }

    /// Calls another tool through the host, when the contract's `requires.tools` names it
    /// (by id, or `id@major`); otherwise `unauthorised`, audited. See [`Capabilities`] for an
    /// example.
    ///
    /// [`Capabilities`]: crate::Capabilities
    pub async fn call_tool(&self, tool_id: &str, input: Value) -> Result<Value, ToolError> {
        match &self.grant {
            Some(grant) => grant.call_tool(self.run_id(), tool_id, input).await,
            None => Err(self.no_grant()),
        }
    }

    /// A secret from the host's store, when the contract's `requires.secrets` names its slug;
    /// otherwise `unauthorised`, audited.
    pub fn secret(&self, slug: &str) -> Result<String, ToolError> {
        match &self.grant {
            Some(grant) => grant.secret(slug),
            None => Err(self.no_grant()),
        }
    }

    /// Sends `request` through the host's HTTP client, when the contract's `requires.network`
    /// allows its host (`api.example.com`, `api.example.com:443`, `*.example.com`); otherwise
    /// `unauthorised`, audited.
    pub async fn http(
        &self,
        request: crate::capabilities::HttpRequest,
    ) -> Result<crate::capabilities::HttpResponse, ToolError> {
        match &self.grant {
            Some(grant) => grant.http(request).await,
            None => Err(self.no_grant()),
        }
    }

    /// Sends the call's progress reports to `reporter` (the registry sets the caller's; an
    /// example is on [`Self::report_progress`]).
    #[must_use]
    pub fn with_progress(mut self, reporter: ProgressReporter) -> Self {
        self.progress = Some(reporter);
        self
    }

    /// Lets the body see the caller's cancellation (the registry sets the caller's; an
    /// example is on [`Self::is_cancelled`]).
    #[must_use]
    pub fn with_cancellation(mut self, cancellation: Cancellation) -> Self {
        self.cancellation = Some(cancellation);
        self
    }

    /// Reports progress to the caller, when the caller listens (an MCP client that sent a
    /// progress token, a host that set [`CallOptions::progress`](crate::CallOptions)); otherwise
    /// does nothing. Returns whether anyone listens.
    ///
    /// ```
    /// use agentio_tools::{Progress, ProgressReporter, ToolContext};
    /// let quiet = ToolContext::new("run-1", "kb.index");
    /// assert!(!quiet.report_progress(Progress::new(1.0).with_total(2.0)));
    /// let heard = quiet.with_progress(ProgressReporter::new(|p: Progress| assert_eq!(p.progress, 1.0)));
    /// assert!(heard.report_progress(Progress::new(1.0)));
    /// ```
    pub fn report_progress(&self, progress: Progress) -> bool {
        match &self.progress {
            Some(reporter) => {
                reporter.report(progress);
                true
            }
            None => false,
        }
    }

    /// Whether the caller has cancelled the call. The registry stops a cancelled call at its
    /// next `.await` anyway; a body doing long synchronous work checks this between steps.
    ///
    /// ```
    /// use agentio_tools::{Cancellation, ToolContext};
    /// let cancellation = Cancellation::new();
    /// let ctx = ToolContext::new("run-1", "kb.index").with_cancellation(cancellation.clone());
    /// assert!(!ctx.is_cancelled());
    /// cancellation.cancel();
    /// assert!(ctx.is_cancelled());
    /// ```
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(Cancellation::is_cancelled)
    }

    /// Sets the host context (already validated against `contextSchema` by the registry). A
    /// `null` context is none.
    ///
    /// ```
    /// use agentio_tools::ToolContext;
    /// use serde_json::json;
    ///
    /// let ctx = ToolContext::new("run-1", "billing.report").with_context(json!({ "tenant": "acme" }));
    /// assert_eq!(ctx.raw_context()["tenant"], "acme");
    /// assert!(ToolContext::new("run-1", "billing.report").with_context(json!(null)).raw_context().is_null());
    /// ```
    #[must_use]
    pub fn with_context(mut self, context: Value) -> Self {
        self.context = (!context.is_null()).then(|| Arc::new(context));
        self
    }

    /// Sets the contract's declared mutations, which [`Self::authorize_mutation`] checks (an
    /// example is there). With none declared, every mutation is refused.
    ///
    /// ```
    /// use agentio_tools::ToolContext;
    ///
    /// let read_only = ToolContext::new("run-1", "notes.read");
    /// let err = read_only.authorize_mutation("workspace:/notes/a.md").unwrap_err();
    /// assert_eq!(err.code().as_str(), "unauthorised");
    /// ```
    #[must_use]
    pub fn with_mutates(self, mutates: &[String]) -> Self {
        self.with_shared_mutates(Arc::from(mutates.to_vec()))
    }

    #[must_use]
    pub(crate) fn with_shared_mutates(mut self, mutates: Arc<[String]>) -> Self {
        self.mutates = mutates;
        self
    }

    #[must_use]
    pub(crate) fn with_attempt(mut self, attempt: u32) -> Self {
        self.attempt = attempt;
        self
    }

    /// The run that makes the call (an example is on [`Self::new`]).
    pub fn run_id(&self) -> &str {
        self.run_id.as_str()
    }

    /// The tool being called (an example is on [`Self::new`]).
    pub fn tool_id(&self) -> &str {
        &self.tool_id
    }

    /// Which attempt this is: 1 for the first, 2 for the first retry, ...
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use agentio_tools::{ToolContext, ToolError, tool, tool_registry};
    ///
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Empty {}
    /// #[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput, agentio_core::AgentOutput)]
    /// struct Tries { attempt: u32 }
    ///
    /// /// Fails once with a retryable error, then succeeds.
    /// #[tool(id = "flaky.fetch", idempotent, retry(max_attempts = 3, backoff = "fixed", initial_ms = 1))]
    /// async fn fetch(_: Empty, ctx: &ToolContext) -> Result<Tries, ToolError> {
    ///     if ctx.attempt() == 1 {
    ///         return Err(ToolError::new(agentio_core::ErrorCode::UpstreamError, "try again"));
    ///     }
    ///     Ok(Tries { attempt: ctx.attempt() })
    /// }
    ///
    /// let registry = tool_registry![FetchTool].unwrap();
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    /// let out = runtime.block_on(registry.call("flaky.fetch", serde_json::json!({}))).unwrap();
    /// assert_eq!(out["attempt"], 2);
    /// ```
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The host context as JSON (`null` when the contract declares none; an example is on
    /// [`Self::with_context`]).
    pub fn raw_context(&self) -> &Value {
        static NULL: Value = Value::Null;
        self.context.as_deref().unwrap_or(&NULL)
    }

    /// The host context decoded into `C` (the type the contract's `context` names); a
    /// context of another shape is `context_invalid`.
    ///
    /// ```
    /// use agentio_tools::ToolContext;
    /// use serde_json::json;
    ///
    /// #[derive(Debug, serde::Deserialize)]
    /// struct Tenant { tenant: String }
    ///
    /// let ctx = ToolContext::new("run-1", "billing.report").with_context(json!({ "tenant": "acme" }));
    /// assert_eq!(ctx.raw_context()["tenant"], "acme");
    /// assert_eq!(ctx.context::<Tenant>().unwrap().tenant, "acme");
    /// let none = ToolContext::new("run-1", "billing.report");
    /// assert_eq!(none.context::<Tenant>().unwrap_err().code().as_str(), "context_invalid");
    /// ```
    pub fn context<C: DeserializeOwned>(&self) -> Result<C, ToolError> {
        C::deserialize(self.raw_context()).map_err(|err| {
            AgentError::new(
                ErrorCode::ContextInvalid,
                "the call context has an unexpected shape",
            )
            .with_operator_detail(err.to_string())
        })
    }

    /// Checks that writing `resource` (`<class>:<scope>`, e.g. `workspace:/notes/a.md`) is
    /// covered by the contract's `mutates`; a body calls it before each write it makes.
    ///
    /// A declared entry covers a resource of the same class whose scope equals it, lies under
    /// it (`workspace:/notes` covers `workspace:/notes/a.md`), or when the entry's scope is `*`.
    /// AIP-14: a write outside the declared set "MUST be refused at runtime".
    ///
    /// ```
    /// # use agentio_tools::ToolContext;
    /// let ctx = ToolContext::new("r", "notes.append").with_mutates(&["workspace:/notes".into()]);
    /// assert!(ctx.authorize_mutation("workspace:/notes/today.md").is_ok());
    /// assert!(ctx.authorize_mutation("workspace:/secrets.txt").is_err());
    /// assert!(ctx.authorize_mutation("network:example.com").is_err());
    /// ```
    pub fn authorize_mutation(&self, resource: &str) -> Result<(), ToolError> {
        let covered = self
            .mutates
            .iter()
            .any(|declared| mutation_covers(declared, resource));
        if covered {
            Ok(())
        } else {
            Err(AgentError::new(
                ErrorCode::Unauthorised,
                format!(
                    "tool `{}` did not declare that it modifies `{resource}`",
                    self.tool_id
                ),
            ))
        }
    }
}

#[cfg(test)]
mod run_id_tests {
    use super::*;

    #[test]
    fn a_run_id_reads_and_debugs_as_its_text() {
        let given = RunId::of(Some("run-7"));
        assert_eq!(given.as_str(), "run-7");
        assert_eq!(format!("{given:?}"), "\"run-7\"");

        let fresh = RunId::of(None);
        let copy = fresh.clone();
        let text = fresh.as_str().to_owned();
        assert!(text.starts_with("run-"), "{text}");
        // A copy taken before the id was written writes the same id.
        assert_eq!(copy.as_str(), text);
        assert_eq!(format!("{fresh:?}"), format!("{text:?}"));
        assert_ne!(RunId::of(None).as_str(), text);

        let ctx = ToolContext::for_call(fresh, Arc::from("kb.search"), Arc::from(Vec::new()));
        assert!(
            format!("{ctx:?}").contains(&format!("run_id: {text:?}")),
            "{ctx:?}"
        );
    }

    #[test]
    fn a_context_debugs_what_the_host_lent_it_for_its_voice() {
        let ctx = ToolContext::new("run-1", "kb.search");
        assert!(format!("{ctx:?}").contains("voice: None"), "{ctx:?}");
        let ctx = ctx.with_content(crate::content::ContentCollector::new());
        let shown = format!("{ctx:?}");
        assert!(
            shown.contains(
                "voice: Some(Voice { content: Some(ContentCollector { blocks: 0 }), client: false })"
            ),
            "{shown}"
        );
    }
}
