//! Stage 5, attempts: the body run under its timeout, retried when idempotent, stopped when
//! cancelled, and its output checked.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use agentio_core::AgentError;
use agentio_core::ErrorCode;
use agentio_core::contain_panics;
use serde_json::Value;

use crate::call::Cancellation;
use crate::contract::ToolContract;
use crate::typed::DecodedInput;
use crate::typed::ToolContext;
use crate::typed::ToolError;
use crate::typed::ToolPlugin;

use super::RegisteredTool;

/// What a call hands back: its output as a `Value` ([`ToolRegistry::call_with`](super::ToolRegistry::call_with)), or written
/// straight to JSON text (a `String`, for a caller that sends text: the model round trip).
pub(crate) trait Produce: Send + Sized + 'static {
    /// The body of one attempt, producing this form.
    fn execute<'a>(
        payload: Payload,
        plugin: &'a dyn ToolPlugin,
        ctx: &'a ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<Self, ToolError>>;

    /// The output of the last attempt, checked against the tool's output schema unless the
    /// plugin checked it as it encoded it.
    fn checked(tool: &RegisteredTool, output: Self) -> Result<Self, ToolError>;

    /// A checked `Value` in this form (the file lifecycle hands back a `Value`).
    fn from_value(output: Value) -> Self;
}

impl Produce for Value {
    fn execute<'a>(
        payload: Payload,
        plugin: &'a dyn ToolPlugin,
        ctx: &'a ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<Value, ToolError>> {
        match payload {
            Payload::Json(input) => plugin.execute(input, ctx),
            Payload::Decoded(input) => plugin.__execute_decoded(input, ctx),
        }
    }

    fn checked(tool: &RegisteredTool, output: Value) -> Result<Value, ToolError> {
        checked_output(tool, output)
    }

    fn from_value(output: Value) -> Value {
        output
    }
}

/// An output written as JSON text, by a plugin that checks it as it writes it
/// ([`ToolPlugin::__validates_output`]); the registry asks no other plugin for it.
impl Produce for String {
    fn execute<'a>(
        payload: Payload,
        plugin: &'a dyn ToolPlugin,
        ctx: &'a ToolContext,
    ) -> agentio_core::BoxFuture<'a, Result<String, ToolError>> {
        match payload {
            Payload::Json(input) => plugin.__execute_json(input, ctx),
            Payload::Decoded(input) => plugin.__execute_decoded_json(input, ctx),
        }
    }

    fn checked(tool: &RegisteredTool, output: String) -> Result<String, ToolError> {
        debug_assert!(tool.plugin.__validates_output());
        Ok(output)
    }

    fn from_value(output: Value) -> String {
        output.to_string()
    }
}

/// What the attempts of one call run on.
pub(super) struct Attempts<'r> {
    pub(super) tool: &'r RegisteredTool,
    pub(super) tool_id: &'r str,
    /// The input as JSON: for a body that decodes it, for a retry, and for approval.
    pub(super) input: Option<Value>,
    /// The input decoded ahead of the call, for its first attempt.
    pub(super) decoded: Option<DecodedInput>,
    /// The body's context; the last attempt takes it.
    pub(super) base: Option<ToolContext>,
}

/// The run id of a call whose attempts have not started (its context holds it).
pub(super) fn run_id_in<'a>(run: &'a Attempts<'_>) -> &'a str {
    run.base.as_ref().map_or("", ToolContext::run_id)
}

/// The attempts of one call: each under the timeout, retried per the contract, then the
/// output validated.
///
/// The host never retries a tool that is not idempotent, so a caller must not either: its
/// errors are not retryable, whatever their code says by default.
pub(super) async fn run_attempts<O: Produce>(
    run: &mut Attempts<'_>,
    attempts: &mut u32,
) -> Result<O, ToolError> {
    let tool = run.tool;
    let contract = &tool.contract;
    let final_error = |err: ToolError| final_error(contract, err);
    let max_attempts = max_attempts(contract);
    let timeout = Duration::from_millis(contract.timeout_ms);
    // The first attempt runs on the decoded input when there is one; the JSON form is kept
    // only while a retry may still need it.
    if run.decoded.is_some() && max_attempts == 1 {
        drop(run.input.take());
    }
    let mut attempt = 1;
    let output = loop {
        *attempts = attempt;
        // The last attempt takes the base context and the input; earlier ones get copies.
        // (`attempt` counts up to `max_attempts` and no further, so `==` is the whole test.)
        let last = attempt == max_attempts;
        let ctx = match if last {
            run.base.take()
        } else {
            run.base.clone()
        } {
            Some(ctx) => ctx.with_attempt(attempt),
            None => return Err(AgentError::internal("a call was run twice")),
        };
        let payload = match run.decoded.take() {
            Some(decoded) => Payload::Decoded(decoded),
            None => Payload::Json(
                if last {
                    run.input.take()
                } else {
                    run.input.clone()
                }
                .unwrap_or_default(),
            ),
        };
        let result = run_attempt::<O>(&tool.plugin, payload, &ctx, timeout, run.tool_id).await;
        match result {
            Err(err) if err.is_retryable() && attempt < max_attempts => {
                if let Some(policy) = &contract.retry {
                    sleep(policy.delay_before(attempt + 1))
                        .await
                        .map_err(final_error)?;
                }
                attempt += 1;
            }
            other => break other.map_err(final_error)?,
        }
    };
    O::checked(tool, output)
}

/// The attempts the contract allows: its retry policy's, for an idempotent tool; one
/// otherwise.
pub(super) fn max_attempts(contract: &ToolContract) -> u32 {
    match (&contract.retry, contract.idempotent) {
        (Some(policy), true) => policy.max_attempts.max(1),
        _ => 1,
    }
}

/// An error as the call ends with it: the host never retries a tool that is not idempotent,
/// so a caller must not either, whatever the code says by default.
pub(super) fn final_error(contract: &ToolContract, err: ToolError) -> ToolError {
    if !contract.idempotent && err.is_retryable() {
        err.with_retryable(false)
    } else {
        err
    }
}

/// A call's output, validated unless the plugin checked it as it encoded it (a typed tool
/// does).
pub(super) fn checked_output(tool: &RegisteredTool, output: Value) -> Result<Value, ToolError> {
    if !tool.plugin.__validates_output()
        && let Err(err) = tool.outputs.get().validate(&output)
    {
        agentio_core::limits::dismantle(output);
        return Err(final_error(&tool.contract, err.into()));
    }
    Ok(output)
}

/// Whether a call's body would run on the caller's thread: inside a Tokio runtime with one
/// thread to run tasks on (see [`run_attempt`]).
pub(super) fn polled_in_place() -> bool {
    tokio::runtime::Handle::try_current().is_ok_and(|handle| !spawns(&handle))
}

/// Whether a body runs as its own task on this runtime: only where another worker could run
/// its caller while it blocks one (a multi-thread runtime with two workers or more). On a
/// runtime with one worker, a current-thread one or a multi-thread one with
/// `worker_threads(1)` (what `#[tokio::main]` gives on a one-CPU machine or container), a
/// body that blocks its thread blocks every task, its caller's with it, whether it is a task
/// of its own or not: a task of its own would cost every call a spawn and buy nothing.
fn spawns(handle: &tokio::runtime::Handle) -> bool {
    handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        && handle.metrics().num_workers() > 1
}

/// A call that is one attempt on the caller's thread (`Admitted::runs_once`,
/// [`polled_in_place`]): [`run_attempts`], [`run_attempt`], [`local_attempt`] and
/// [`until_cancelled`] in one future, with the same outcome. Called once per call.
pub(super) async fn single_attempt<O: Produce>(
    run: &mut Attempts<'_>,
    cancellation: Option<&Cancellation>,
) -> Result<O, ToolError> {
    let tool = run.tool;
    let contract = &tool.contract;
    // Borrowed where `admit` left it (its first attempt), not moved: the call's future then
    // holds one context, not two.
    let Some(ctx) = run.base.as_ref() else {
        return Err(AgentError::internal("a call was run twice"));
    };
    // No retry may need the JSON form: it goes as soon as the input is decoded.
    let payload = match run.decoded.take() {
        Some(decoded) => {
            drop(run.input.take());
            Payload::Decoded(decoded)
        }
        None => Payload::Json(run.input.take().unwrap_or_default()),
    };
    let timeout = Duration::from_millis(contract.timeout_ms);
    let started = agentio_core::__Started::now(timeout);
    let mut body = O::execute(payload, tool.plugin.as_ref(), ctx);
    let mut timer = None;
    let mut waiter = None;
    // `None`: cancelled. The body (with its timer) is polled first, as `until_cancelled`
    // polls the call first.
    let ended = std::future::poll_fn(|cx| {
        if let Poll::Ready(ended) = poll_local(&mut body, &mut timer, timeout, started, cx) {
            return Poll::Ready(Some(ended));
        }
        if let Some(cancellation) = cancellation
            && fired(&mut waiter, || cancellation.cancelled(), cx)
        {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await;
    drop(body);
    let Some(ended) = ended else {
        return Err(cancelled_error(run.tool_id));
    };
    let output = attempt_result(ended, started, timeout, run.tool_id)
        .map_err(|err| final_error(contract, err))?;
    O::checked(tool, output)
}

/// What one attempt runs on.
pub(crate) enum Payload {
    /// The input as JSON, decoded by the plugin.
    Json(Value),
    /// The input decoded (and checked) ahead of the call.
    Decoded(DecodedInput),
}

/// One attempt under the contract's wall-clock ceiling.
///
/// On a multi-thread Tokio runtime with two workers or more the body runs as its own task, so
/// a body that blocks its thread (`std::thread::sleep`, a busy loop) cannot starve the timer:
/// the caller gets `timeout` at the ceiling (watched by one thread for all calls, which costs
/// no system call a call: see `agentio_core::__Deadline`), and the task is aborted (a
/// thread that never yields runs on until it returns, but its result is dropped). On a runtime
/// with one worker (current-thread, or multi-thread with one worker thread) the body shares the
/// caller's only thread (see [`spawns`]), so the timer can fire no earlier than the body's next
/// `.await`; a result that arrives after the ceiling is still reported as `timeout`, never as
/// success.
///
/// Not an `async fn`: the body's future is made here and the attempt's future holds only it.
pub(super) fn run_attempt<'a, O: Produce>(
    plugin: &'a Arc<dyn ToolPlugin>,
    input: Payload,
    ctx: &'a ToolContext,
    timeout: Duration,
    tool_id: &'a str,
) -> impl Future<Output = Result<O, ToolError>> + Send + 'a {
    // Tokio's clock (the one the timer reads) for a short ceiling, a cheaper one for a long
    // ceiling (see `agentio_core::__Started`).
    let started = agentio_core::__Started::now(timeout);
    let attempt = match tokio::runtime::Handle::try_current() {
        Err(_) => Attempt::NoRuntime,
        // Boxed: this path spawns a task anyway, and a call on a one-worker runtime
        // should not carry its space.
        Ok(handle) if spawns(&handle) => Attempt::Spawned(Box::pin(spawned_attempt(
            handle,
            Arc::clone(plugin),
            input,
            ctx.clone(),
            timeout,
        ))),
        Ok(_) => Attempt::Local(O::execute(input, plugin.as_ref(), ctx)),
    };
    async move {
        let ended = match attempt {
            Attempt::NoRuntime => return Err(no_runtime()),
            Attempt::Spawned(spawned) => spawned.await,
            Attempt::Local(body) => local_attempt(body, timeout, started).await,
        };
        attempt_result(ended, started, timeout, tool_id)
    }
}

/// What an attempt that `started` under `timeout` answers, once it has ended.
pub(super) fn attempt_result<O>(
    ended: Ended<O>,
    started: agentio_core::__Started,
    timeout: Duration,
    tool_id: &str,
) -> Result<O, ToolError> {
    let timed_out = || {
        AgentError::new(
            ErrorCode::Timeout,
            format!(
                "tool `{tool_id}` did not finish within {} ms",
                timeout.as_millis()
            ),
        )
    };
    match ended {
        Ended::Elapsed => Err(timed_out()),
        Ended::Failed(err) => Err(err),
        // A body that blocked its thread past the ceiling: its result is not a success.
        Ended::Done(_) if started.passed(timeout) => Err(timed_out()),
        Ended::Done(result) => result,
    }
}

/// How an attempt is run.
pub(super) enum Attempt<'a, O> {
    NoRuntime,
    Spawned(std::pin::Pin<Box<dyn Future<Output = Ended<O>> + Send>>),
    Local(agentio_core::BoxFuture<'a, Result<O, ToolError>>),
}

/// How an attempt ended.
pub(super) enum Ended<O> {
    /// The body's own result (a panic contained as an `internal` error).
    Done(Result<O, ToolError>),
    /// The body ran past its ceiling.
    Elapsed,
    /// The host failed around the body (its timer).
    Failed(ToolError),
}

/// An attempt on a one-worker runtime (see [`spawns`]): the body polled in place, panics
/// contained.
///
/// Most bodies finish on their first poll: those never arm a timer (arming one can wake the
/// runtime's driver, a system call per call). A body that waits gets the timer for what is
/// left of its ceiling. One `poll_fn` holds it all, so the attempt's state is the body, the
/// timer and nothing else.
pub(super) async fn local_attempt<O>(
    mut body: agentio_core::BoxFuture<'_, Result<O, ToolError>>,
    timeout: Duration,
    started: agentio_core::__Started,
) -> Ended<O> {
    let mut timer = None;
    std::future::poll_fn(move |cx| poll_local(&mut body, &mut timer, timeout, started, cx)).await
}

/// One poll of a body run in place under its ceiling (see [`local_attempt`]); `timer` is
/// armed on the first poll that finds the body waiting.
pub(super) fn poll_local<O>(
    body: &mut agentio_core::BoxFuture<'_, Result<O, ToolError>>,
    timer: &mut Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
    timeout: Duration,
    started: agentio_core::__Started,
    cx: &mut std::task::Context<'_>,
) -> Poll<Ended<O>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| body.as_mut().poll(cx))) {
        Ok(Poll::Ready(result)) => return Poll::Ready(Ended::Done(result)),
        Ok(Poll::Pending) => {}
        Err(payload) => return Poll::Ready(Ended::Done(Err(agentio_core::panicked(&*payload)))),
    }
    let timer = match timer {
        Some(timer) => timer,
        // The timer itself panics in a runtime built without time; contain that as well.
        None => match std::panic::catch_unwind(|| {
            Box::pin(tokio::time::sleep(started.remaining(timeout)))
        }) {
            Ok(armed) => timer.insert(armed),
            Err(payload) => return Poll::Ready(Ended::Failed(agentio_core::panicked(&*payload))),
        },
    };
    match std::panic::catch_unwind(AssertUnwindSafe(|| timer.as_mut().poll(cx))) {
        Ok(Poll::Ready(())) => Poll::Ready(Ended::Elapsed),
        Ok(Poll::Pending) => Poll::Pending,
        Err(payload) => Poll::Ready(Ended::Failed(agentio_core::panicked(&*payload))),
    }
}

/// An attempt on a multi-thread runtime: the body as its own task, under the ceiling.
pub(super) async fn spawned_attempt<O: Produce>(
    handle: tokio::runtime::Handle,
    plugin: Arc<dyn ToolPlugin>,
    input: Payload,
    ctx: ToolContext,
    timeout: Duration,
) -> Ended<O> {
    // The ceiling on the watchdog's thread, not a Tokio timer: no system call a call (see
    // `agentio_core::__Deadline`).
    let Some(deadline) = agentio_core::__Deadline::after(timeout) else {
        return Ended::Failed(AgentError::internal(
            "the thread that watches the tools' time limits could not be started",
        ));
    };
    // Aborted when this future is dropped (a cancelled call), not only at the ceiling.
    let mut task = tokio_util::task::AbortOnDropHandle::new(
        handle.spawn(async move { contain_panics(O::execute(input, plugin.as_ref(), &ctx)).await }),
    );
    // The body is polled first, so one that is done is never timed.
    let mut deadline = std::pin::pin!(deadline);
    let joined = std::future::poll_fn(|cx| {
        if let Poll::Ready(joined) = std::pin::Pin::new(&mut task).poll(cx) {
            return Poll::Ready(Some(joined));
        }
        deadline.as_mut().poll(cx).map(|()| None)
    })
    .await;
    match joined {
        Some(Ok(result)) => Ended::Done(result),
        Some(Err(join_error)) => {
            Ended::Done(Err(AgentError::internal("the body failed unexpectedly")
                .with_operator_detail(join_error.to_string())))
        }
        None => Ended::Elapsed,
    }
}

/// Runs a call until it finishes or `cancellation` (when there is one) fires, whichever comes
/// first; a cancelled call's future is dropped, which stops the body at its next `.await`.
pub(super) async fn until_cancelled<O>(
    mut call: std::pin::Pin<&mut impl Future<Output = Result<O, ToolError>>>,
    cancellation: Option<&Cancellation>,
    tool_id: &str,
) -> Result<O, ToolError> {
    let Some(cancellation) = cancellation else {
        return call.await;
    };
    if cancellation.is_cancelled() {
        return Err(cancelled_error(tool_id));
    }
    let mut waiter = None;
    std::future::poll_fn(|cx| {
        if let Poll::Ready(result) = call.as_mut().poll(cx) {
            return Poll::Ready(result);
        }
        if fired(&mut waiter, || cancellation.cancelled(), cx) {
            return Poll::Ready(Err(cancelled_error(tool_id)));
        }
        Poll::Pending
    })
    .await
}

/// Whether a call's cancellation has fired, `cx` woken when it does: `wait` is the signal's
/// [`Cancellation::cancelled`]. Waiting registers a waiter (a lock), and its state is boxed
/// into `waiter` on the first poll that needs it: a call that finishes on its first poll
/// needs neither. Polled after the call itself, so a call that finishes as it is cancelled
/// has finished.
pub(super) fn fired<F: Future<Output = ()>>(
    waiter: &mut Option<std::pin::Pin<Box<F>>>,
    wait: impl FnOnce() -> F,
    cx: &mut std::task::Context<'_>,
) -> bool {
    waiter
        .get_or_insert_with(|| Box::pin(wait()))
        .as_mut()
        .poll(cx)
        .is_ready()
}

/// The error of a call its caller cancelled.
pub(super) fn cancelled_error(tool_id: &str) -> ToolError {
    AgentError::new(
        ErrorCode::Cancelled,
        format!("the call to `{tool_id}` was cancelled by its caller"),
    )
}

pub(super) async fn sleep(duration: Duration) -> Result<(), ToolError> {
    if duration.is_zero() {
        return Ok(());
    }
    contain_panics(Box::pin(async move {
        tokio::time::sleep(duration).await;
        Ok(())
    }))
    .await
}

pub(super) fn no_runtime() -> ToolError {
    // A host configuration error, not a tool failure: the reason is in the message itself.
    let reason = "the tool host is misconfigured: ToolRegistry::call needs a Tokio runtime with time enabled (for timeouts and retries), and it was called outside one";
    AgentError::internal(reason).with_operator_detail(reason)
}
