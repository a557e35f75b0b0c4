//! Long calls as MCP tasks: the Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`),
//! on rmcp's [`TaskManager`].
//!
//! A tool the server marks with [`McpServer::with_task_support`](crate::McpServer::with_task_support)
//! runs as a task for a client that declared the extension (at `initialize`, or on the request
//! itself in its `_meta` client capabilities): `tools/call` answers at once with a
//! `CreateTaskResult` (`resultType: "task"`, the task's id, `ttlMs`, `pollIntervalMs`), the
//! body runs on, and the client polls `tasks/get` for its state and, once it has ended, its
//! result. The call is the same call as without a task: its input validated first, its
//! contract (timeout, retries, approval, scopes, audit) enforced, its output validated.
//!
//! What a task's client sees, and what this crate decided where the SEP leaves it open:
//!
//! - **Which calls become tasks.** [`TaskSupport::Optional`]: a task for a client that
//!   declared the extension, a plain call for one that did not. [`TaskSupport::Required`]: a
//!   client that did not declare it is refused with `-32021` (Missing Required Client
//!   Capability) naming the extension. A call whose input fails the tool's schema is refused
//!   at once, as a plain call (`isError`), without a task: there is nothing to run.
//! - **Approval.** A tool whose contract requires approval asks for it as its calls always do
//!   on 2026-07-28, before the task is made: an `input_required` round, then the round that
//!   carries the answer gets the `CreateTaskResult` (no task exists for a call nobody
//!   approved). Before 2026-07-28, where approval is otherwise an `elicitation/create` request
//!   on the call's stream, which a task's client no longer listens on, it is asked in the task:
//!   its input request [`APPROVAL_INPUT_KEY`](crate::APPROVAL_INPUT_KEY), the same form. A
//!   task cancelled while it waits for the answer ends `cancelled`, its call never run.
//! - **Questions.** A body's questions ([`ToolContext::ask`](agentio_tools::ToolContext)) are
//!   the task's `inputRequests` (status `input_required`), each under the body's key, all of
//!   one `ask` at once; the client answers with `tasks/update`, in one update or several, and
//!   the body waits. A key can be asked once in a task's life (rmcp's rule).
//! - **Questions first.** [`McpServer::ask_before_task`](crate::McpServer::ask_before_task)
//!   names questions a tool's task needs answered before it is made. On 2026-07-28 they are
//!   asked as a plain call's are, `input_required` rounds on `tools/call` (no task yet; the
//!   answers so far travel sealed in `requestState`, and an answer of the wrong shape is asked
//!   again); the round that completes them gets the `CreateTaskResult` (with no `requestState`
//!   or `inputRequests`), and the body's `ask` of those keys gets the answers without asking.
//!   A client that did not declare what a question needs is refused `-32021`, without a task.
//!   Before 2026-07-28 the body asks them in the task. A tool that needs approval asks it
//!   first, in a round of its own; the yes travels sealed with the answers (a no makes the task
//!   at once, which says `approval_denied`). The approval key cannot be one of them.
//! - **Progress** becomes the task's `statusMessage` (`3/10: indexing`); log lines go to the
//!   client as the call's would.
//! - **How it ends.** The body's output: `completed` with the result `tools/call` would have
//!   given. A failure with any AIP-14 code but `internal` (one the tool reported, an input or
//!   output that broke its schema, a timeout, a denied approval): `completed` with `isError`
//!   and the envelope, as without a task. A failure of the machinery (`internal`: a body that
//!   panicked) or a question the client cannot answer: `failed` with the JSON-RPC error
//!   (`-32603` with the envelope in `data`, or `-32021`).
//!   `tasks/cancel` cancels the body (as a client's cancel of a call does): `cancelled`.
//! - **Bounds.** A task is kept for its time to live ([`DEFAULT_TASK_TTL`],
//!   [`McpServer::with_task_ttl`](crate::McpServer::with_task_ttl)): one still running then
//!   is failed and its body dropped, and one that ended is kept one more time to live for its
//!   client to read (rmcp's policy). Set the time to live above the tool's timeout. A server
//!   holds at most [`DEFAULT_MAX_TASKS`] tasks, running or ended and kept
//!   ([`McpServer::with_max_tasks`](crate::McpServer::with_max_tasks)): an ended task holds its
//!   result, so it is the tasks held, not only the running ones, that the bound counts, or a
//!   client starting quick tasks it never reads would grow the server without limit. Past it
//!   a call is answered `isError` with `rate_limited` (retryable) until held tasks expire.
//! - **Whose task.** Behind [`McpServer::with_auth`](crate::McpServer::with_auth), a task
//!   belongs to the caller who started it (its subject, under its token's issuer when the
//!   token names one: a subject is unique only within its issuer): for any other caller its
//!   id names no task (`-32602`, as an unknown id). Without authentication the id, a random UUID, is the only
//!   key.
//! - **Where.** Tasks live in the memory of the server process that started them, and die
//!   with it, unless the server keeps a store (`McpServer::with_task_store`, feature
//!   `task-store`): then a task that had ended is still answered after a restart, and one that
//!   was running says the server stopped; the `CreateTaskResult` is sent only once the task's
//!   start is on disk, so no crash leaves a client a task id the store does not know. Behind a
//!   load balancer, an instance named with
//!   [`McpServer::with_instance`](crate::McpServer::with_instance) starts every task id it gives
//!   out with its name and a dot (`a.` then rmcp's UUID), as it does session ids, and a
//!   `tasks/*` request carries the id in its `Mcp-Name` header (SEP-2243), so the balancer
//!   routes the polls of a task to the instance that holds it (the README's nginx
//!   configuration); an id without this instance's prefix names no task here (`-32602`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use rmcp::model::{ClientCapabilities, DetailedTask, Task};
use rmcp::task_manager::{TaskContext, TaskFuture, TaskManager, TaskOptions};

/// Whether a tool's calls run as tasks ([`McpServer::with_task_support`](crate::McpServer::with_task_support)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// A task for a client that declared the Tasks extension, a plain call for one that did
    /// not.
    Optional,
    /// Always a task: a client that did not declare the extension is refused (`-32021`).
    Required,
}

/// How long a task is kept: five minutes (rmcp's default).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(300);

/// How many tasks one server holds at most, running or ended and kept for their clients:
/// 10,000.
pub const DEFAULT_MAX_TASKS: usize = 10_000;

/// How often a client is told to poll a task: every second (rmcp's default).
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// A server's tasks: rmcp's manager, and what the server keeps of each task it holds (for the
/// bound, and whose it is).
pub(crate) struct Tasks {
    manager: TaskManager,
    pub(crate) ttl: Duration,
    pub(crate) max: usize,
    /// `name.` of the instance ([`McpServer::with_instance`](crate::McpServer::with_instance)),
    /// before rmcp's id in every task id this server gives out; or empty.
    prefix: String,
    /// Task id -> what this server knows of it, while rmcp may still hold it.
    held: Mutex<HashMap<String, Held>>,
    /// Where each task's record outlives the process, when the server keeps one.
    #[cfg(feature = "task-store")]
    pub(crate) store: Option<Arc<crate::task_store::TaskStore>>,
}

/// What the server knows of one task.
struct Held {
    /// The subject of the caller who started it, when one did.
    owner: Option<String>,
    created: Instant,
    /// When its call ended (not when rmcp failed it past its time to live).
    ended: Option<Instant>,
}

impl Tasks {
    /// Tasks kept `ttl`, at most `max` held, their ids starting with `instance` and a dot
    /// (none when `instance` is empty).
    pub(crate) fn new(ttl: Duration, max: usize, instance: &str) -> Self {
        Tasks {
            manager: TaskManager::new(),
            ttl,
            max,
            prefix: crate::sessions::id_prefix(instance),
            held: Mutex::new(HashMap::new()),
            #[cfg(feature = "task-store")]
            store: None,
        }
    }

    /// The same tasks' settings, with `store` keeping their records.
    #[cfg(feature = "task-store")]
    pub(crate) fn with_store(mut self, store: Option<Arc<crate::task_store::TaskStore>>) -> Self {
        self.store = store;
        self
    }

    /// rmcp's id for the task id a client has: the id without this instance's prefix; `None`
    /// for an id this instance did not give out.
    fn inner<'a>(&self, task_id: &'a str) -> Option<&'a str> {
        crate::sessions::strip_id_prefix(&self.prefix, task_id)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Until when rmcp may hold a task: a time to live after it ended, or, for one still
    /// running at its time to live (which rmcp then fails), a time to live after that.
    fn released_at(&self, held: &Held) -> Instant {
        let ended = held.ended.unwrap_or(held.created + self.ttl);
        ended.checked_add(self.ttl).unwrap_or(ended)
    }

    /// Starts `make` as a task of `owner` (a caller's subject) and returns its seed state
    /// (`tasks/get` finds it before this returns) and when its start is on the store's disk;
    /// or `None` when the server holds its maximum of tasks.
    pub(crate) fn spawn(
        self: &Arc<Self>,
        owner: Option<&str>,
        make: impl FnOnce(TaskContext) -> TaskFuture,
    ) -> Option<(Task, OnDisk)> {
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let options = TaskOptions::new()
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64);
        // Held across rmcp's spawn: the call, which may end at once on another thread, marks
        // its end only once its task is in the table.
        let mut held = self.held();
        if held.len() >= self.max {
            let now = Instant::now();
            held.retain(|_, task| now < self.released_at(task));
            if held.len() >= self.max {
                return None;
            }
        }
        let tasks = Arc::clone(self);
        #[cfg(feature = "task-store")]
        let owner_of_record = owner.map(str::to_owned);
        #[cfg(feature = "task-store")]
        let (written, on_disk) = match self.store {
            Some(_) => {
                let (written, on_disk) = tokio::sync::oneshot::channel();
                (Some(written), OnDisk(Some(on_disk)))
            }
            None => (None, OnDisk(None)),
        };
        #[cfg(not(feature = "task-store"))]
        let on_disk = OnDisk(None);
        let mut task = self.manager.spawn(options, move |context| {
            let id = context.task_id().to_owned();
            let call = make(context);
            Box::pin(async move {
                // With a store: the start is on disk before the body runs and before the
                // client is answered, and the end before rmcp reports it. A start that could
                // not be written: the body does not run, and the caller is told so instead of
                // the task.
                #[cfg(feature = "task-store")]
                let outcome = {
                    let start = tasks.record(&id, owner_of_record.as_deref(), None).await;
                    let refused = start.is_err();
                    if let Some(written) = written {
                        let _ = written.send(start);
                    }
                    if refused {
                        drop(call);
                        Err(rmcp::task_manager::TaskExit::Error(unrecorded()))
                    } else {
                        let outcome = call.await;
                        let _ = tasks
                            .record(&id, owner_of_record.as_deref(), Some(&outcome))
                            .await;
                        outcome
                    }
                };
                #[cfg(not(feature = "task-store"))]
                let outcome = call.await;
                if let Some(task) = tasks.held().get_mut(&id) {
                    task.ended = Some(Instant::now());
                }
                outcome
            })
        });
        held.insert(
            task.task_id.clone(),
            Held {
                owner: owner.map(str::to_owned),
                created: Instant::now(),
                ended: None,
            },
        );
        task.task_id.insert_str(0, &self.prefix);
        Some((task, on_disk))
    }

    /// rmcp's id for `task_id`, refused (as if there were no such task) when this instance
    /// did not give it out, or to a caller other than its owner.
    fn open<'a>(&self, task_id: &'a str, caller: Option<&str>) -> Result<&'a str, McpError> {
        let inner = self.inner(task_id).ok_or_else(|| unknown(task_id))?;
        match self.held().get(inner) {
            Some(Held {
                owner: Some(owner), ..
            }) if Some(owner.as_str()) != caller => Err(unknown(task_id)),
            _ => Ok(inner),
        }
    }

    /// The task `inner` as its record says, when this process does not hold it (it was
    /// started before a restart) and the record is the caller's; `None` otherwise.
    /// (One function for both builds: a second, without the feature, would be code that no
    /// test build compiles, since the test suite turns the feature on.)
    fn recorded(&self, inner: &str, caller: Option<&str>) -> Option<DetailedTask> {
        #[cfg(feature = "task-store")]
        {
            if self.held().contains_key(inner) {
                return None;
            }
            let (owner, task) = self.store.as_ref()?.get(inner)?;
            match owner {
                Some(owner) if Some(owner.as_str()) != caller => None,
                _ => Some(task),
            }
        }
        #[cfg(not(feature = "task-store"))]
        {
            let _ = (inner, caller);
            None
        }
    }

    /// `tasks/get`.
    pub(crate) fn get(
        &self,
        task_id: &str,
        caller: Option<&str>,
    ) -> Result<DetailedTask, McpError> {
        let inner = self.open(task_id, caller)?;
        let mut task = match self.manager.get_task(inner) {
            Ok(task) => task,
            Err(_) => self
                .recorded(inner, caller)
                .ok_or_else(|| unknown(task_id))?,
        };
        task.task.task_id = task_id.to_owned();
        Ok(task)
    }

    /// `tasks/update`.
    pub(crate) fn update(
        &self,
        task_id: &str,
        caller: Option<&str>,
        responses: impl IntoIterator<Item = (String, serde_json::Value)>,
    ) -> Result<(), McpError> {
        let inner = self.open(task_id, caller)?;
        match self.manager.update_task(inner, responses) {
            // A task that ended before a restart takes no answers, as one in memory.
            Err(_) if self.recorded(inner, caller).is_some() => Ok(()),
            outcome => outcome.map_err(|_| unknown(task_id)),
        }
    }

    /// `tasks/cancel`.
    pub(crate) fn cancel(&self, task_id: &str, caller: Option<&str>) -> Result<(), McpError> {
        let inner = self.open(task_id, caller)?;
        match self.manager.cancel_task(inner) {
            // A task that ended before a restart stays as it ended, as one in memory.
            Err(_) if self.recorded(inner, caller).is_some() => Ok(()),
            outcome => outcome.map_err(|_| unknown(task_id)),
        }
    }

    /// Writes task `id`'s start (`outcome` `None`) or its end to the store, when the server
    /// keeps one, off the runtime's threads: each write is a committed, fsync'd transaction.
    /// [`Unrecorded`] for a start that is not on disk (the store counts the failure and keeps
    /// what it said, for the operator); an end that failed is counted by the store, and told
    /// of by nothing else: its body has run.
    #[cfg(feature = "task-store")]
    async fn record(
        self: &Arc<Self>,
        id: &str,
        owner: Option<&str>,
        outcome: Option<&Result<rmcp::model::CallToolResult, rmcp::task_manager::TaskExit>>,
    ) -> Result<(), Unrecorded> {
        let Some(store) = self.store.clone() else {
            return Ok(());
        };
        let Ok(task) = self.manager.get_task(id) else {
            return Err(Unrecorded);
        };
        let payload = outcome.map(crate::task_store::settled);
        let (id, owner, ttl) = (id.to_owned(), owner.map(str::to_owned), self.ttl);
        tokio::task::spawn_blocking(move || match payload {
            None => store
                .started(&id, owner.as_deref(), ttl, &task)
                .map_err(|_| Unrecorded),
            Some(payload) => {
                store.ended(&id, owner.as_deref(), ttl, task, payload);
                Ok(())
            }
        })
        .await
        .unwrap_or(Err(Unrecorded))
    }
}

/// A task's start that is not on the store's disk (what failed is the store's to say:
/// [`TaskStore::last_failure`](crate::task_store::TaskStore::last_failure)).
#[derive(Debug)]
pub(crate) struct Unrecorded;

/// When a task's start is on its store's disk: a server that keeps a store answers
/// `tools/call` with the `CreateTaskResult` only then (SEP-2663: not before the task is
/// durably created), so a task a client was told of is never unknown after a crash; and when
/// the start could not be written, the error to answer with instead (the body did not run).
/// At once without a store; and at once when the task ends before its first step (its future
/// dropped).
#[must_use]
pub(crate) struct OnDisk(Option<tokio::sync::oneshot::Receiver<Result<(), Unrecorded>>>);

impl OnDisk {
    pub(crate) async fn written(self) -> Result<(), McpError> {
        match self.0 {
            Some(written) => match written.await {
                Ok(Err(Unrecorded)) => Err(unrecorded()),
                Ok(Ok(())) | Err(_) => Ok(()),
            },
            None => Ok(()),
        }
    }
}

/// The answer to a call whose task's start could not be written to the store: `-32603`; the
/// call did not run. What the store said (its file's path among it) is the operator's, not
/// sent to the client.
fn unrecorded() -> McpError {
    McpError::internal_error(
        "the task could not be recorded (the server's task store did not write it), so the \
         call did not run; make it again later",
        None,
    )
}

/// The answer to an id that names no task of the caller's (`-32602`, rmcp's answer too): the
/// id escaped and cut to a bound, whatever the client sent.
fn unknown(task_id: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "unknown task: {}",
            agentio_core::limits::bounded_display(&task_id.escape_debug(), 128)
        ),
        None,
    )
}

/// `-32021` for a call that can only run as a task, from a client that did not declare the
/// extension.
pub(crate) fn required() -> McpError {
    let mut error = McpError::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    );
    error.message = "this tool runs only as a task: declare the `io.modelcontextprotocol/tasks` extension in the client's capabilities".into();
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle(_: TaskContext) -> TaskFuture {
        Box::pin(std::future::pending())
    }

    fn quick(_: TaskContext) -> TaskFuture {
        Box::pin(async { Ok(Default::default()) })
    }

    #[tokio::test]
    async fn a_task_is_its_owners_alone() {
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, ""));
        let contexts = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&contexts);
        let task = tasks
            .spawn(Some("alice"), move |context| {
                kept.lock().unwrap().push(context);
                Box::pin(std::future::pending())
            })
            .unwrap()
            .0;
        let id = task.task_id.as_str();
        assert_eq!(task.ttl_ms, Some(300_000));
        assert_eq!(task.poll_interval_ms, Some(1_000));
        assert!(tasks.get(id, Some("alice")).is_ok());
        for stranger in [Some("bob"), None, Some("alice ")] {
            let err = tasks.get(id, stranger).unwrap_err();
            assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert_eq!(err.message, format!("unknown task: {id}"));
            assert!(tasks.cancel(id, stranger).is_err());
            assert!(tasks.update(id, stranger, []).is_err());
        }
        // The stranger's cancel changed nothing; the owner's does.
        let context = contexts.lock().unwrap().pop().unwrap();
        assert!(!context.is_cancel_requested());
        tasks.cancel(id, Some("alice")).unwrap();
        assert!(context.is_cancel_requested());
        tasks.update(id, Some("alice"), []).unwrap();
        // A task started without a caller is anyone's who has its id.
        let open = tasks.spawn(None, idle).unwrap().0;
        assert!(tasks.get(&open.task_id, Some("bob")).is_ok());
        assert!(tasks.get(&open.task_id, None).is_ok());
        tasks.manager.shutdown();
    }

    #[tokio::test]
    async fn an_instances_task_ids_carry_its_name_and_others_are_unknown() {
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, "a"));
        let task = tasks.spawn(Some("alice"), idle).unwrap().0;
        let id = task.task_id.clone();
        let bare = id
            .strip_prefix("a.")
            .expect("the instance's prefix")
            .to_owned();
        assert!(!bare.is_empty());
        let found = tasks.get(&id, Some("alice")).unwrap();
        assert_eq!(found.task.task_id, id);
        tasks.update(&id, Some("alice"), []).unwrap();
        for foreign in [
            bare.clone(),
            format!("b.{bare}"),
            "a.".into(),
            format!("ab.{bare}"),
        ] {
            let err = tasks.get(&foreign, Some("alice")).unwrap_err();
            assert_eq!(err.message, format!("unknown task: {foreign}"));
            assert!(tasks.cancel(&foreign, Some("alice")).is_err());
        }
        tasks.cancel(&id, Some("alice")).unwrap();
        tasks.manager.shutdown();
    }

    #[tokio::test]
    async fn an_unknown_id_is_echoed_escaped_and_bounded() {
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, ""));
        let id = format!("\u{1b}[2J{}", "x".repeat(100_000));
        for err in [
            tasks.get(&id, None).unwrap_err(),
            tasks.update(&id, None, []).unwrap_err(),
            tasks.cancel(&id, None).unwrap_err(),
        ] {
            assert_eq!(err.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(err.message.len() < 200, "{}", err.message.len());
            assert!(
                err.message.starts_with("unknown task: \\u{1b}[2Jxxx"),
                "{}",
                err.message
            );
        }
    }

    #[cfg(feature = "task-store")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn with_a_store_a_task_is_on_disk_before_it_is_told_of_and_before_its_body_runs() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(crate::task_store::TaskStore::open(dir.path().join("t")).unwrap());
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, "").with_store(Some(store.clone())));
        let ran = Arc::new(AtomicBool::new(false));
        let held = store.hold_writes();
        let body_ran = Arc::clone(&ran);
        let (task, on_disk) = tasks
            .spawn(None, move |_| {
                Box::pin(async move {
                    body_ran.store(true, Ordering::SeqCst);
                    Ok(Default::default())
                })
            })
            .unwrap();
        let mut written = Box::pin(on_disk.written());
        // The store cannot write: nothing is told of, nothing runs.
        let waited = tokio::time::timeout(Duration::from_millis(200), &mut written).await;
        assert!(waited.is_err(), "told of before the write");
        assert!(!ran.load(Ordering::SeqCst));
        assert!(store.get(&task.task_id).is_none());
        drop(held);
        tokio::time::timeout(Duration::from_secs(5), written)
            .await
            .expect("told of once written")
            .expect("written");
        assert!(store.get(&task.task_id).is_some());
        ended(&tasks, &task.task_id).await;
        assert!(ran.load(Ordering::SeqCst));
        tasks.manager.shutdown();
    }

    #[tokio::test]
    async fn without_a_store_a_task_is_told_of_at_once() {
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, ""));
        let (_, on_disk) = tasks.spawn(None, idle).unwrap();
        assert!(on_disk.0.is_none());
        on_disk.written().await.unwrap();
        tasks.manager.shutdown();
    }

    #[cfg(feature = "task-store")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_whose_start_cannot_be_written_does_not_run_and_is_not_told_of() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(crate::task_store::TaskStore::open(dir.path().join("t")).unwrap());
        let tasks = Arc::new(Tasks::new(DEFAULT_TASK_TTL, 4, "").with_store(Some(store.clone())));
        let ran = Arc::new(AtomicBool::new(false));
        let spawn = |ran: &Arc<AtomicBool>| {
            let ran = Arc::clone(ran);
            tasks
                .spawn(None, move |_| {
                    Box::pin(async move {
                        ran.store(true, Ordering::SeqCst);
                        Ok(Default::default())
                    })
                })
                .unwrap()
        };
        store.__refuse_writes(true);
        let (task, on_disk) = spawn(&ran);
        let err = tokio::time::timeout(Duration::from_secs(5), on_disk.written())
            .await
            .expect("answered")
            .unwrap_err();
        assert_eq!(err.code, rmcp::model::ErrorCode::INTERNAL_ERROR);
        assert_eq!(
            err.message,
            "the task could not be recorded (the server's task store did not write it), so the \
             call did not run; make it again later"
        );
        // What failed, and where, is the operator's.
        let failure = store.last_failure().unwrap();
        assert!(
            failure.contains(&store.path().display().to_string())
                && failure.contains("no space left on device"),
            "{failure}"
        );
        // Ended as failed, with the same reason; nothing ran, nothing is on disk.
        ended(&tasks, &task.task_id).await;
        let read = tasks.get(&task.task_id, None).unwrap();
        assert_eq!(read.status(), rmcp::model::TaskStatus::Failed);
        assert!(!ran.load(Ordering::SeqCst));
        assert!(store.get(&task.task_id).is_none());
        assert_eq!(store.failed_writes(), 1);
        assert!(tasks.held().get(&task.task_id).unwrap().ended.is_some());
        // Once the store writes again, a task starts, is told of and runs.
        store.__refuse_writes(false);
        let (task, on_disk) = spawn(&ran);
        on_disk.written().await.expect("written");
        ended(&tasks, &task.task_id).await;
        assert!(ran.load(Ordering::SeqCst));
        assert!(store.get(&task.task_id).is_some());
        tasks.manager.shutdown();
    }

    /// Waits until rmcp says the task has ended (a second at most).
    async fn ended(tasks: &Tasks, id: &str) {
        for _ in 0..200 {
            if tasks.get(id, None).unwrap().status().is_terminal() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        panic!("{id} did not end");
    }

    #[tokio::test]
    async fn an_ended_task_counts_until_a_time_to_live_after_its_end() {
        let ttl = Duration::from_millis(200);
        let tasks = Arc::new(Tasks::new(ttl, 1, ""));
        let done = tasks.spawn(None, quick).unwrap().0;
        ended(&tasks, &done.task_id).await;
        assert!(tasks.held().get(&done.task_id).unwrap().ended.is_some());
        // Full: the ended task holds its result for its client.
        assert!(tasks.spawn(None, quick).is_none());
        tokio::time::sleep(ttl + Duration::from_millis(20)).await;
        let next = tasks.spawn(None, quick).unwrap().0;
        assert!(!tasks.held().contains_key(&done.task_id));
        assert!(tasks.held().contains_key(&next.task_id));
        tasks.manager.shutdown();
    }

    #[tokio::test]
    async fn a_task_still_running_counts_until_a_time_to_live_after_its_own() {
        let ttl = Duration::from_millis(300);
        let tasks = Arc::new(Tasks::new(ttl, 1, ""));
        let started = Instant::now();
        let running = tasks.spawn(None, idle).unwrap().0;
        // Past its time to live (rmcp fails it) but not a time to live after: still held.
        tokio::time::sleep(ttl + Duration::from_millis(100)).await;
        assert!(tasks.spawn(None, quick).is_none() || started.elapsed() >= 2 * ttl);
        assert!(tasks.held().get(&running.task_id).unwrap().ended.is_none());
        tokio::time::sleep_until((started + 2 * ttl + Duration::from_millis(20)).into()).await;
        assert!(tasks.spawn(None, quick).is_some());
        assert!(!tasks.held().contains_key(&running.task_id));
        tasks.manager.shutdown();
    }

    #[test]
    fn the_refusal_names_the_extension() {
        let err = required();
        assert_eq!(err.code.0, -32021);
        assert!(err.message.contains("io.modelcontextprotocol/tasks"));
        assert_eq!(
            err.data.unwrap()["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"],
            serde_json::json!({})
        );
    }
}
