//! Tasks that outlive their server process (feature `task-store`): each task's record on disk,
//! in an embedded database ([redb]), so that a client polling a task across a crash, a deploy
//! or a restart gets an answer instead of `unknown task`.
//!
//! [`McpServer::with_task_store`](crate::McpServer::with_task_store) keeps, for every task the
//! server starts, its owner, its times and its state as `tasks/get` gives it:
//!
//! - **Started**: written before the body runs and before `tools/call` is answered with the
//!   `CreateTaskResult` (one committed, fsync'd transaction, off the runtime's threads): a
//!   task a client was told of is on disk (SEP-2663: a server must not return the
//!   `CreateTaskResult` before the task is durably created), and a crash at any moment after
//!   leaves it known. The answer waits for that write: a task's start costs its caller one
//!   fsync. When the write fails (a full disk), the task is not run and the client is not
//!   told of it: `tools/call` is answered `-32603`, saying the task could not be recorded and
//!   the call did not run, so the caller may make it again (what failed, and the store's
//!   path, are the operator's: [`TaskStore::failed_writes`], [`TaskStore::last_failure`]).
//! - **Ended**: its terminal state (`completed` with the result, `failed` with the error,
//!   `cancelled`), written before the server reports it, so a client never reads an end the
//!   store does not have.
//! - **After a restart**, when the store is opened again: a task that had ended is answered
//!   from its record, to its owner only, until its time to live after its end, as it was
//!   before; a task that was still running when the process stopped is `failed`, its error
//!   (`-32603`) saying the server stopped while it ran and that it may have done part of its
//!   work. It is not run again: its body may have had effects, and only its caller can tell
//!   whether to start it again. (One still running past its time to live is `failed` as rmcp
//!   fails it, `task expired`.) `tasks/cancel` and `tasks/update` of an ended task change
//!   nothing, as for one in memory.
//! - **Expiry**: records are deleted once their task would have been released from memory (a
//!   time to live after its end), at open and as new tasks are written; the file does not grow
//!   with the tasks ever run.
//!
//! One store belongs to one server process: redb locks the file, and a second process (or a
//! second open in the same process) is refused, naming the file. Servers behind a load
//! balancer each have their own, under the instance name that routes a task's polls to them
//! ([`McpServer::with_instance`](crate::McpServer::with_instance)). A start that cannot be
//! written refuses its call (above); an end that cannot be written does not change how the
//! task ended for its client in this process (the body has run): it is counted, and
//! [`TaskStore::failed_writes`] says so (after a restart, that task reads as one the server
//! stopped while it ran).
//!
//! [redb]: https://docs.rs/redb

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, TaskPayload};
use serde::{Deserialize, Serialize};

/// Task id (rmcp's, without an instance's prefix) -> its record, as JSON.
const TASKS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("agentio_mcp_tasks");
/// (When the record may be deleted, in Unix milliseconds; the task id) -> nothing: the records
/// in the order they expire.
const EXPIRY: TableDefinition<'static, (u64, &str), ()> =
    TableDefinition::new("agentio_mcp_task_expiry");

/// What a store failed to do.
#[derive(Debug)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The database could not be opened, read or written (another process holds it, the disk
    /// is full, the file is not a store).
    Store {
        /// The store's file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl std::fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskStoreError::Store { path, message } => {
                write!(f, "the task store {}: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// One task's record.
#[derive(Serialize, Deserialize)]
struct Record {
    /// The subject of the caller who started it, when one did.
    owner: Option<String>,
    /// When it started, in Unix milliseconds.
    created_ms: u64,
    /// Its time to live, in milliseconds.
    ttl_ms: u64,
    /// When it ended, in Unix milliseconds.
    ended_ms: Option<u64>,
    /// The task as `tasks/get` gives it (rmcp's wire form).
    task: DetailedTask,
}

impl Record {
    /// When the record may be deleted: a time to live after the task's end (or after its
    /// time to live, for one that never ended), as rmcp releases a task from memory.
    fn expires_ms(&self) -> u64 {
        let ended = self
            .ended_ms
            .unwrap_or(self.created_ms.saturating_add(self.ttl_ms));
        ended.saturating_add(self.ttl_ms)
    }
}

/// The records of a server's tasks, on disk (see the module's documentation).
///
/// ```
/// use agentio_mcp::task_store::TaskStore;
/// let dir = tempfile::tempdir()?;
/// let store = TaskStore::open(dir.path().join("tasks.redb"))?;
/// assert_eq!(store.failed_writes(), 0);
/// // The file is this process's while the store is open.
/// let again = TaskStore::open(dir.path().join("tasks.redb")).unwrap_err();
/// assert!(again.to_string().contains("tasks.redb"), "{again}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TaskStore {
    db: redb::Database,
    path: PathBuf,
    failed: AtomicU64,
    last_failure: Mutex<Option<String>>,
    /// Every write fails (tests: a full disk on demand).
    refuse_writes: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for TaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskStore")
            .field("path", &self.path)
            .field("failed_writes", &self.failed_writes())
            .finish_non_exhaustive()
    }
}

/// Now, in Unix milliseconds.
fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// The error of a task that was running when its server stopped.
pub(crate) fn interrupted() -> McpError {
    McpError::internal_error(
        "the server stopped while this task ran: it may have done part of its work, and it \
         was not run again; start it again if it should run",
        None,
    )
}

impl TaskStore {
    /// Opens the store at `path`, creating the file when it does not exist; every task it
    /// records as still running is now `failed` (its server stopped), and expired records
    /// are deleted. Refused, naming the file, when another open store holds it.
    pub fn open(path: impl AsRef<Path>) -> Result<TaskStore, TaskStoreError> {
        let path = path.as_ref().to_path_buf();
        let db = redb::Database::create(&path).map_err(|e| fault(&path, e))?;
        let store = TaskStore {
            db,
            path,
            failed: AtomicU64::new(0),
            last_failure: Mutex::new(None),
            refuse_writes: std::sync::atomic::AtomicBool::new(false),
        };
        store.recover(now_ms())?;
        Ok(store)
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many writes have failed since the store was opened (each a task whose start or
    /// end may not survive a restart), and what the last one said.
    pub fn failed_writes(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    /// What the last failed write said, if one failed.
    pub fn last_failure(&self) -> Option<String> {
        self.last_failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The store's one writer, held: every other write waits until it is dropped.
    #[cfg(test)]
    pub(crate) fn hold_writes(&self) -> redb::WriteTransaction {
        self.db.begin_write().unwrap()
    }

    /// Not public API: from now on every write fails (`refuse`) or works again, as a full
    /// disk would make it fail, so that tests can see what a failed write does.
    #[doc(hidden)]
    pub fn __refuse_writes(&self, refuse: bool) {
        self.refuse_writes.store(refuse, Ordering::SeqCst);
    }

    fn write<T>(
        &self,
        body: impl FnOnce(&redb::WriteTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, TaskStoreError> {
        if self.refuse_writes.load(Ordering::SeqCst) {
            return Err(TaskStoreError::Store {
                path: self.path.clone(),
                message: "the write was refused (no space left on device)".to_owned(),
            });
        }
        let txn = self.db.begin_write().map_err(|e| fault(&self.path, e))?;
        let value = body(&txn).map_err(|e| fault(&self.path, e))?;
        txn.commit().map_err(|e| fault(&self.path, e))?;
        Ok(value)
    }

    /// Fails what was running when the last process stopped, and deletes what has expired.
    fn recover(&self, now: u64) -> Result<(), TaskStoreError> {
        self.write(|txn| {
            let mut tasks = txn.open_table(TASKS)?;
            let mut expiry = txn.open_table(EXPIRY)?;
            purge(&mut tasks, &mut expiry, now)?;
            let mut running = Vec::new();
            for entry in tasks.iter()? {
                let (id, bytes) = entry?;
                let Ok(record) = serde_json::from_slice::<Record>(bytes.value()) else {
                    continue;
                };
                if record.ended_ms.is_none() {
                    running.push((id.value().to_owned(), record));
                }
            }
            for (id, mut record) in running {
                expiry.remove((record.expires_ms(), id.as_str()))?;
                let deadline = record.created_ms.saturating_add(record.ttl_ms);
                let (ended, error) = if now >= deadline {
                    let error = McpError::internal_error(
                        "task expired: TTL elapsed before completion",
                        None,
                    );
                    (deadline, error)
                } else {
                    (now, interrupted())
                };
                record.ended_ms = Some(ended);
                record.task = ended_task(record.task, failed(&error));
                put(&mut tasks, &mut expiry, &id, &record)?;
            }
            Ok(())
        })
    }

    /// Records a task that has started, unless its end is recorded already.
    pub(crate) fn started(
        &self,
        id: &str,
        owner: Option<&str>,
        ttl: Duration,
        task: &DetailedTask,
    ) -> Result<(), TaskStoreError> {
        let record = Record {
            owner: owner.map(str::to_owned),
            created_ms: now_ms(),
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            ended_ms: None,
            task: task.clone(),
        };
        let outcome = self.write(|txn| {
            let mut tasks = txn.open_table(TASKS)?;
            let mut expiry = txn.open_table(EXPIRY)?;
            purge(&mut tasks, &mut expiry, now_ms())?;
            if tasks.get(id)?.is_none() {
                put(&mut tasks, &mut expiry, id, &record)?;
            }
            Ok(())
        });
        self.count(&outcome);
        outcome
    }

    /// Records how a task ended, with `payload` its terminal state.
    pub(crate) fn ended(
        &self,
        id: &str,
        owner: Option<&str>,
        ttl: Duration,
        task: DetailedTask,
        payload: TaskPayload,
    ) {
        let now = now_ms();
        let outcome = self.write(|txn| {
            let mut tasks = txn.open_table(TASKS)?;
            let mut expiry = txn.open_table(EXPIRY)?;
            let started = tasks
                .get(id)?
                .and_then(|bytes| serde_json::from_slice::<Record>(bytes.value()).ok());
            let created_ms = started.as_ref().map_or(now, |record| record.created_ms);
            if let Some(started) = &started {
                expiry.remove((started.expires_ms(), id))?;
            }
            let record = Record {
                owner: owner.map(str::to_owned),
                created_ms,
                ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
                ended_ms: Some(now),
                task: ended_task(task, payload),
            };
            put(&mut tasks, &mut expiry, id, &record)
        });
        self.count(&outcome);
    }

    fn count(&self, outcome: &Result<(), TaskStoreError>) {
        if let Err(err) = outcome {
            self.failed.fetch_add(1, Ordering::Relaxed);
            *self
                .last_failure
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(err.to_string());
        }
    }

    /// The recorded task `id` and its owner, unless it has expired.
    pub(crate) fn get(&self, id: &str) -> Option<(Option<String>, DetailedTask)> {
        self.get_at(id, now_ms())
    }

    /// [`Self::get`] at `now` (Unix milliseconds): a record is gone at its expiry.
    fn get_at(&self, id: &str, now: u64) -> Option<(Option<String>, DetailedTask)> {
        let txn = self.db.begin_read().ok()?;
        let tasks = txn.open_table(TASKS).ok()?;
        let bytes = tasks.get(id).ok()??;
        let record = serde_json::from_slice::<Record>(bytes.value()).ok()?;
        (now < record.expires_ms()).then_some((record.owner, record.task))
    }
}

/// `task` settled in `payload`, updated now.
fn ended_task(task: DetailedTask, payload: TaskPayload) -> DetailedTask {
    let mut task = task.task;
    task.last_updated_at = rmcp::task_manager::current_timestamp();
    DetailedTask::new(task, payload)
}

/// `failed`, with `error` as its JSON-RPC error object.
fn failed(error: &McpError) -> TaskPayload {
    TaskPayload::Failed {
        error: object_of(error),
    }
}

/// How a task whose body came to `outcome` ended, as rmcp records it: `completed` with the
/// result, `cancelled`, or `failed` with the error.
pub(crate) fn settled(
    outcome: &Result<rmcp::model::CallToolResult, rmcp::task_manager::TaskExit>,
) -> TaskPayload {
    match outcome {
        Ok(result) => TaskPayload::Completed {
            result: object_of(result),
        },
        Err(rmcp::task_manager::TaskExit::Cancelled) => TaskPayload::Cancelled,
        Err(rmcp::task_manager::TaskExit::Error(error)) => failed(error),
    }
}

/// `value` as a JSON object (rmcp's results and errors are objects; anything else is empty,
/// as rmcp records it).
fn object_of(value: &impl Serialize) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(object)) => object,
        _ => serde_json::Map::new(),
    }
}

fn put(
    tasks: &mut redb::Table<'_, &str, &[u8]>,
    expiry: &mut redb::Table<'_, (u64, &str), ()>,
    id: &str,
    record: &Record,
) -> Result<(), redb::Error> {
    let bytes = serde_json::to_vec(record).map_err(|e| redb::Error::Corrupted(e.to_string()))?;
    tasks.insert(id, bytes.as_slice())?;
    expiry.insert((record.expires_ms(), id), ())?;
    Ok(())
}

/// Deletes every record that expired before `now`.
fn purge(
    tasks: &mut redb::Table<'_, &str, &[u8]>,
    expiry: &mut redb::Table<'_, (u64, &str), ()>,
    now: u64,
) -> Result<(), redb::Error> {
    let mut expired = Vec::new();
    for entry in expiry.range::<(u64, &str)>(..(now, ""))? {
        let (key, _) = entry?;
        let (at, id) = key.value();
        expired.push((at, id.to_owned()));
    }
    for (at, id) in expired {
        expiry.remove((at, id.as_str()))?;
        tasks.remove(id.as_str())?;
    }
    Ok(())
}

fn fault(path: &Path, err: impl Into<redb::Error>) -> TaskStoreError {
    TaskStoreError::Store {
        path: path.to_path_buf(),
        message: err.into().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{Task, TaskStatus};
    use serde_json::json;

    fn working(id: &str) -> DetailedTask {
        let now = rmcp::task_manager::current_timestamp();
        DetailedTask::new(
            Task::new(id, TaskStatus::Working, now.clone(), now).with_ttl_ms(60_000),
            TaskPayload::Working,
        )
    }

    fn completed(said: &str) -> TaskPayload {
        let result = json!({ "content": [], "structuredContent": { "said": said } });
        TaskPayload::Completed {
            result: result.as_object().unwrap().clone(),
        }
    }

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn an_ended_task_is_read_back_after_a_reopen_and_a_running_one_is_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.redb");
        {
            let store = TaskStore::open(&path).unwrap();
            store
                .started("done", Some("alice"), TTL, &working("done"))
                .unwrap();
            store.ended("done", Some("alice"), TTL, working("done"), completed("hi"));
            // A start written after the end (the writes race) does not undo it.
            store
                .started("done", Some("alice"), TTL, &working("done"))
                .unwrap();
            store
                .started("running", None, TTL, &working("running"))
                .unwrap();
            let (owner, task) = store.get("running").unwrap();
            assert_eq!(owner, None);
            assert_eq!(task.status(), TaskStatus::Working);
            assert!(store.get("nothing").is_none());
            assert_eq!(store.failed_writes(), 0);
        }
        let store = TaskStore::open(&path).unwrap();
        let (owner, done) = store.get("done").unwrap();
        assert_eq!(owner.as_deref(), Some("alice"));
        assert_eq!(done.status(), TaskStatus::Completed);
        let TaskPayload::Completed { result } = &done.payload else {
            panic!("{done:?}")
        };
        assert_eq!(result["structuredContent"]["said"], "hi");
        assert_eq!(done.task.task_id, "done");
        let (_, running) = store.get("running").unwrap();
        assert_eq!(running.status(), TaskStatus::Failed);
        let TaskPayload::Failed { error } = &running.payload else {
            panic!("{running:?}")
        };
        assert_eq!(error["code"], -32603);
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("the server stopped while this task ran"),
            "{message}"
        );
    }

    #[test]
    fn records_expire_a_time_to_live_after_their_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.redb");
        let store = TaskStore::open(&path).unwrap();
        let short = Duration::from_millis(50);
        store.started("a", None, short, &working("a")).unwrap();
        store.ended("a", None, short, working("a"), completed("a"));
        store.started("b", None, TTL, &working("b")).unwrap();
        assert!(store.get("a").is_some());
        std::thread::sleep(Duration::from_millis(120));
        assert!(store.get("a").is_none(), "read past its expiry");
        // The next write deletes it, and its place in the expiry order.
        store.started("c", None, TTL, &working("c")).unwrap();
        let txn = store.db.begin_read().unwrap();
        let tasks = txn.open_table(TASKS).unwrap();
        assert!(tasks.get("a").unwrap().is_none());
        assert!(tasks.get("b").unwrap().is_some());
        let expiry = txn.open_table(EXPIRY).unwrap();
        let ids: Vec<String> = expiry
            .iter()
            .unwrap()
            .map(|entry| entry.unwrap().0.value().1.to_owned())
            .collect();
        assert_eq!(ids.len(), 2, "{ids:?}");
        assert!(ids.contains(&"b".to_owned()) && ids.contains(&"c".to_owned()));
    }

    #[test]
    fn a_task_running_past_its_time_to_live_when_the_server_stopped_has_expired() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.redb");
        let ttl = Duration::from_millis(100);
        {
            let store = TaskStore::open(&path).unwrap();
            store.started("slow", None, ttl, &working("slow")).unwrap();
        }
        std::thread::sleep(Duration::from_millis(130));
        let store = TaskStore::open(&path).unwrap();
        let (_, slow) = store
            .get("slow")
            .expect("kept a time to live after its end");
        let TaskPayload::Failed { error } = &slow.payload else {
            panic!("{slow:?}")
        };
        assert!(error["message"].as_str().unwrap().contains("task expired"));
    }

    #[test]
    fn a_record_is_gone_at_its_expiry_to_the_millisecond() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskStore::open(dir.path().join("tasks.redb")).unwrap();
        store.started("a", None, TTL, &working("a")).unwrap();
        store.ended("a", None, TTL, working("a"), completed("a"));
        let txn = store.db.begin_read().unwrap();
        let record: Record = serde_json::from_slice(
            txn.open_table(TASKS)
                .unwrap()
                .get("a")
                .unwrap()
                .unwrap()
                .value(),
        )
        .unwrap();
        let expires = record.expires_ms();
        assert_eq!(expires, record.ended_ms.unwrap() + 60_000);
        assert!(store.get_at("a", expires - 1).is_some());
        assert!(store.get_at("a", expires).is_none());
    }

    #[test]
    fn a_failed_write_is_counted_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskStore::open(dir.path().join("tasks.redb")).unwrap();
        assert_eq!(store.last_failure(), None);
        store.count(&Ok(()));
        assert_eq!(store.failed_writes(), 0);
        for message in ["No space left on device", "the disk went away"] {
            store.count(&Err(TaskStoreError::Store {
                path: store.path().to_path_buf(),
                message: message.into(),
            }));
        }
        assert_eq!(store.failed_writes(), 2);
        let last = store.last_failure().unwrap();
        assert!(
            last.contains("the disk went away") && last.contains("tasks.redb"),
            "{last}"
        );
        let shown = format!("{store:?}");
        assert!(
            shown.contains("tasks.redb") && shown.contains("failed_writes: 2"),
            "{shown}"
        );
    }

    #[test]
    fn a_second_open_of_the_same_file_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.redb");
        let _store = TaskStore::open(&path).unwrap();
        let err = TaskStore::open(&path).unwrap_err();
        assert!(err.to_string().contains("tasks.redb"), "{err}");
        let not_a_store = dir.path().join("notes.txt");
        std::fs::write(
            &not_a_store,
            "not a database, only some text that is long enough",
        )
        .unwrap();
        let err = TaskStore::open(&not_a_store).unwrap_err();
        assert!(err.to_string().contains("notes.txt"), "{err}");
    }
}
