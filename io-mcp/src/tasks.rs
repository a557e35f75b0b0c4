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
//! - **Approval comes first.** A tool whose contract requires approval asks for it before the
//!   task is made (on 2026-07-28 as an `input_required` round, then the round that carries the
//!   answer gets the `CreateTaskResult`), so no task exists for a call nobody approved.
//! - **Questions.** A body's questions ([`ToolContext::ask`](agentio_tools::ToolContext)) are
//!   the task's `inputRequests` (status `input_required`), each under the body's key, all of
//!   one `ask` at once; the client answers with `tasks/update`, in one update or several, and
//!   the body waits. A key can be asked once in a task's life (rmcp's rule).
//! - **Progress** becomes the task's `statusMessage` (`3/10: indexing`); log lines go to the
//!   client as the call's would.
//! - **How it ends.** The body's output: `completed` with the result `tools/call` would have
//!   given. A failure the tool reported (any AIP-14 code but `internal`): `completed` with
//!   `isError` and the envelope, as without a task. A failure of the machinery (`internal`: a
//!   panic, an output that broke its schema) or a question the client cannot answer:
//!   `failed` with the JSON-RPC error (`-32603` with the envelope in `data`, or `-32021`).
//!   `tasks/cancel` cancels the body (as a client's cancel of a call does): `cancelled`.
//! - **Bounds.** At most [`DEFAULT_MAX_TASKS`] tasks run at once
//!   ([`McpServer::with_max_tasks`](crate::McpServer::with_max_tasks)); past it a call is
//!   answered `isError` with `rate_limited` (retryable). A task is kept for its time to live
//!   ([`DEFAULT_TASK_TTL`], [`McpServer::with_task_ttl`](crate::McpServer::with_task_ttl)):
//!   one still running then is failed and its body dropped, and one that ended is kept one
//!   more time to live for its client to read (rmcp's policy). Set the time to live above the
//!   tool's timeout.
//! - **Whose task.** Behind [`McpServer::with_auth`](crate::McpServer::with_auth), a task
//!   belongs to the caller who started it: for any other caller its id names no task
//!   (`-32602`, as an unknown id). Without authentication the id, a random UUID, is the only
//!   key.
//! - **Where.** Tasks live in the memory of the server process: behind a load balancer,
//!   `tasks/*` requests carry the task id in `Mcp-Name`, which a balancer can route on, but
//!   an instance that did not make the task answers `-32602`.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

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

/// How many tasks one server runs at once: 1,000.
pub const DEFAULT_MAX_TASKS: usize = 1_000;

/// How often a client is told to poll a task: every second (rmcp's default).
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// A server's tasks: rmcp's manager, the bound, and who started each task.
pub(crate) struct Tasks {
    manager: TaskManager,
    pub(crate) ttl: Duration,
    pub(crate) max: usize,
    /// Task id -> the subject of the caller who started it, for tasks started by one.
    owners: Mutex<HashMap<String, String>>,
}

impl Tasks {
    pub(crate) fn new(ttl: Duration, max: usize) -> Self {
        Tasks {
            manager: TaskManager::new(),
            ttl,
            max,
            owners: Mutex::new(HashMap::new()),
        }
    }

    /// Whether another task may start now.
    pub(crate) fn has_room(&self) -> bool {
        self.manager.running_task_count() < self.max
    }

    /// Starts `make` as a task owned by `owner` (a caller's subject), and returns its seed
    /// state. `tasks/get` finds it before this returns.
    pub(crate) fn spawn(
        &self,
        owner: Option<&str>,
        make: impl FnOnce(TaskContext) -> TaskFuture,
    ) -> Task {
        let ttl_ms = u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX);
        let options = TaskOptions::new()
            .with_ttl_ms(ttl_ms)
            .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64);
        if let Some(owner) = owner {
            let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
            // Forget the owners of tasks rmcp has dropped (past their time to live), once the
            // table holds more than the tasks that may run.
            if owners.len() >= self.max.saturating_mul(2) {
                owners.retain(|id, _| self.manager.get_task(id).is_ok());
            }
            let task = self.manager.spawn(options, make);
            owners.insert(task.task_id.clone(), owner.to_owned());
            return task;
        }
        self.manager.spawn(options, make)
    }

    /// Refuses `task_id` to a caller other than its owner as if there were no such task.
    fn check_owner(&self, task_id: &str, caller: Option<&str>) -> Result<(), McpError> {
        let owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        match owners.get(task_id) {
            Some(owner) if Some(owner.as_str()) != caller => Err(unknown(task_id)),
            _ => Ok(()),
        }
    }

    /// `tasks/get`.
    pub(crate) fn get(
        &self,
        task_id: &str,
        caller: Option<&str>,
    ) -> Result<DetailedTask, McpError> {
        self.check_owner(task_id, caller)?;
        self.manager.get_task(task_id)
    }

    /// `tasks/update`.
    pub(crate) fn update(
        &self,
        task_id: &str,
        caller: Option<&str>,
        responses: impl IntoIterator<Item = (String, serde_json::Value)>,
    ) -> Result<(), McpError> {
        self.check_owner(task_id, caller)?;
        self.manager.update_task(task_id, responses)
    }

    /// `tasks/cancel`.
    pub(crate) fn cancel(&self, task_id: &str, caller: Option<&str>) -> Result<(), McpError> {
        self.check_owner(task_id, caller)?;
        self.manager.cancel_task(task_id)
    }
}

/// rmcp's answer to an id it does not know (`-32602`), for an id whose task is another's.
fn unknown(task_id: &str) -> McpError {
    let mut shown = task_id.to_owned();
    agentio_core::limits::clip(&mut shown, 128);
    McpError::invalid_params(format!("unknown task: {shown}"), None)
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

    #[tokio::test]
    async fn a_task_is_its_owners_alone() {
        let tasks = Tasks::new(DEFAULT_TASK_TTL, 4);
        let task = tasks.spawn(Some("alice"), idle);
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
        assert!(
            !tasks
                .manager
                .get_task(id)
                .is_ok_and(|t| t.status().is_terminal())
        );
        tasks.cancel(id, Some("alice")).unwrap();
        // A task started without a caller is anyone's who has its id.
        let open = tasks.spawn(None, idle);
        assert!(tasks.get(&open.task_id, Some("bob")).is_ok());
        assert!(tasks.get(&open.task_id, None).is_ok());
        tasks.manager.shutdown();
    }

    #[tokio::test]
    async fn the_bound_counts_running_tasks() {
        let tasks = Tasks::new(DEFAULT_TASK_TTL, 2);
        assert!(tasks.has_room());
        tasks.spawn(None, idle);
        assert!(tasks.has_room());
        tasks.spawn(None, idle);
        assert!(!tasks.has_room());
        let done = tasks.spawn(None, |_| Box::pin(async { Ok(Default::default()) }));
        tokio::task::yield_now().await;
        for _ in 0..100 {
            if tasks
                .get(&done.task_id, None)
                .unwrap()
                .status()
                .is_terminal()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // An ended task does not count.
        assert_eq!(tasks.manager.running_task_count(), 2);
        tasks.manager.shutdown();
        assert!(tasks.has_room());
    }

    #[tokio::test]
    async fn owners_of_dropped_tasks_are_forgotten() {
        let tasks = Tasks::new(DEFAULT_TASK_TTL, 1);
        let first = tasks.spawn(Some("a"), idle);
        tasks.spawn(Some("a"), idle);
        assert_eq!(tasks.owners.lock().unwrap().len(), 2);
        tasks.manager.shutdown();
        // The table is at twice the bound: the next spawn sweeps what rmcp no longer has.
        let third = tasks.spawn(Some("b"), idle);
        let owners = tasks.owners.lock().unwrap();
        assert_eq!(owners.len(), 1);
        assert!(!owners.contains_key(&first.task_id));
        assert_eq!(owners.get(&third.task_id).map(String::as_str), Some("b"));
        drop(owners);
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
