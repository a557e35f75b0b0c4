//! The durable journal of workflow runs: every transition of a run written to an embedded
//! database (redb) before the run acts on it, so a run can be reopened by id after its process
//! dies and go on from its last recorded transition.
//!
//! One file holds any number of runs. Each run is its record (the workflow's name and phases,
//! the trigger, the initial state, the document when it came from one) and its entries, in
//! order. Each entry is one committed write transaction with [`redb::Durability::Immediate`]
//! (fsync) unless [`Journal::with_durability`] says otherwise.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Workflow;
use crate::run::Suspension;

/// How deep a value a run records may nest (an object holding an array is two levels): an
/// agent's output, a resumption's answer, the trigger and the initial state. Entries are read
/// back with serde_json, which reads at most 127 levels, and a recorded value sits one level
/// inside its entry; so a deeper value could be written and never read again. The executor
/// refuses deeper outputs as the agent's `output_invalid` error, on every backend; a deeper
/// trigger, initial state or answer is refused before anything is recorded.
pub const MAX_RECORDED_DEPTH: usize = 126;

/// `Err` names where `value` nests deeper than [`MAX_RECORDED_DEPTH`].
pub(crate) fn too_deep(value: &Value) -> Result<(), agentio_core::Violation> {
    agentio_core::limits::check_depth(value, MAX_RECORDED_DEPTH)
}

/// Why `what` (the output, the trigger, ...) cannot be recorded: it nests too deep, at
/// `violation` ([`too_deep`]).
pub(crate) fn too_deep_message(what: &str, violation: &agentio_core::Violation) -> String {
    format!(
        "the {what} nests deeper than {MAX_RECORDED_DEPTH} levels, the most a run records ({violation})"
    )
}

/// run id → its [`RunRecord`] as JSON.
const RUNS: TableDefinition<'static, &str, &[u8]> = TableDefinition::new("agentio_workflow_runs");
/// (run id, sequence number) → an [`Entry`] as JSON.
const ENTRIES: TableDefinition<'static, (&str, u64), &[u8]> =
    TableDefinition::new("agentio_workflow_entries");

/// What a run is: enough to reopen it against the same workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id.
    pub run_id: String,
    /// The workflow's name.
    pub workflow: String,
    /// The workflow's phases, in document order: a run is reopened only against a workflow with
    /// the same name and phases.
    pub phases: Vec<String>,
    /// What `$trigger.*` reads.
    pub trigger: Value,
    /// What `$initial_state.*` reads.
    pub initial_state: Value,
    /// The workflow document (YAML) the run was started from, when it was started from one;
    /// `agentio-workflow show` draws its graph from it.
    pub document: Option<String>,
    /// When the run started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
}

impl RunRecord {
    pub(crate) fn new(
        workflow: &Workflow,
        run_id: &str,
        trigger: Value,
        initial_state: Value,
        document: Option<String>,
    ) -> Self {
        RunRecord {
            run_id: run_id.to_owned(),
            workflow: workflow.name.clone(),
            phases: workflow.phases.iter().map(|p| p.name.clone()).collect(),
            trigger,
            initial_state,
            document,
            started_at_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    /// Whether `workflow` is the one this run was started with (same name, same phases in the
    /// same order).
    pub fn matches(&self, workflow: &Workflow) -> bool {
        self.workflow == workflow.name
            && self.phases.len() == workflow.phases.len()
            && self
                .phases
                .iter()
                .zip(&workflow.phases)
                .all(|(a, b)| *a == b.name)
    }
}

/// One recorded transition of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Entry {
    /// The phase was claimed: its agent is about to start.
    Claimed {
        /// The phase.
        phase: String,
    },
    /// The phase's claim was refused for good (an unresolvable input); `event` is the named
    /// error's JSON.
    ClaimRefused {
        /// The phase.
        phase: String,
        /// The `UnresolvableInputError` event.
        event: Value,
    },
    /// The phase completed with this output (validated, as recorded).
    Completed {
        /// The phase.
        phase: String,
        /// The recorded output.
        output: Map<String, Value>,
    },
    /// The phase's agent returned this output and it was rejected; the task stays running.
    Rejected {
        /// The phase.
        phase: String,
        /// The rejected output.
        output: Value,
    },
    /// The phase failed for good; `event` is the named error's JSON.
    Failed {
        /// The phase.
        phase: String,
        /// The error event.
        event: Value,
    },
    /// The phase suspended awaiting input.
    Suspended {
        /// The phase.
        phase: String,
        /// The intent, since when, and until when.
        intent_id: String,
        /// Since when (ISO-8601).
        suspended_since: String,
        /// When the suspension expires, if it does.
        expires_at: Option<String>,
        /// When the host expects the phase to resume, if it knows.
        expected_resume_at: Option<String>,
    },
    /// The phase was resumed with this input; it is offered to its agent again, which sees the
    /// input in [`crate::TaskContext::resumed_with`].
    Resumed {
        /// The phase.
        phase: String,
        /// What the resuming side supplied.
        input: Value,
    },
    /// A phase claimed before the process stopped, and not completed, was offered again.
    Released {
        /// The phase.
        phase: String,
    },
}

impl Entry {
    /// The phase the entry is about.
    pub fn phase(&self) -> &str {
        match self {
            Entry::Claimed { phase }
            | Entry::ClaimRefused { phase, .. }
            | Entry::Completed { phase, .. }
            | Entry::Rejected { phase, .. }
            | Entry::Failed { phase, .. }
            | Entry::Suspended { phase, .. }
            | Entry::Resumed { phase, .. }
            | Entry::Released { phase } => phase,
        }
    }

    /// The entry's kind: `claimed`, `claim_refused`, `completed`, `rejected`, `failed`,
    /// `suspended`, `resumed` or `released`.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Claimed { .. } => "claimed",
            Entry::ClaimRefused { .. } => "claim_refused",
            Entry::Completed { .. } => "completed",
            Entry::Rejected { .. } => "rejected",
            Entry::Failed { .. } => "failed",
            Entry::Suspended { .. } => "suspended",
            Entry::Resumed { .. } => "resumed",
            Entry::Released { .. } => "released",
        }
    }

    pub(crate) fn suspended(phase: &str, s: &Suspension) -> Entry {
        Entry::Suspended {
            phase: phase.to_owned(),
            intent_id: s.intent_id.clone(),
            suspended_since: s.suspended_since.clone(),
            expires_at: s.expires_at.clone(),
            expected_resume_at: s.expected_resume_at.clone(),
        }
    }
}

/// What went wrong with a journal: each names the file and, where there is one, the run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalError {
    /// The database could not be opened, read or written.
    Store {
        /// The journal's file.
        path: PathBuf,
        /// What the database said.
        message: String,
    },
    /// A run with this id is already in the journal (start it under another id, or reopen it).
    RunExists {
        /// The journal's file.
        path: PathBuf,
        /// The run.
        run_id: String,
    },
    /// No run with this id is in the journal.
    UnknownRun {
        /// The journal's file.
        path: PathBuf,
        /// The run asked for.
        run_id: String,
    },
    /// The run was started with another workflow (name or phases differ).
    WorkflowMismatch {
        /// The run.
        run_id: String,
        /// The workflow and phases recorded.
        recorded: String,
        /// The workflow and phases given.
        given: String,
    },
    /// A recorded entry cannot be read or does not apply to the run as replayed so far.
    Corrupt {
        /// The journal's file.
        path: PathBuf,
        /// The run.
        run_id: String,
        /// The entry's sequence number.
        seq: u64,
        /// What is wrong with it.
        message: String,
    },
}

impl JournalError {
    /// The error's name (`JournalStoreError`, `RunExistsError`, `UnknownRunError`,
    /// `WorkflowMismatchError`, `CorruptJournalError`).
    pub fn name(&self) -> &'static str {
        match self {
            JournalError::Store { .. } => "JournalStoreError",
            JournalError::RunExists { .. } => "RunExistsError",
            JournalError::UnknownRun { .. } => "UnknownRunError",
            JournalError::WorkflowMismatch { .. } => "WorkflowMismatchError",
            JournalError::Corrupt { .. } => "CorruptJournalError",
        }
    }
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.name())?;
        match self {
            JournalError::Store { path, message } => {
                write!(f, "journal {}: {message}", path.display())
            }
            JournalError::RunExists { path, run_id } => write!(
                f,
                "run '{run_id}' is already in the journal {} (reopen it, or start under another id)",
                path.display()
            ),
            JournalError::UnknownRun { path, run_id } => {
                write!(f, "no run '{run_id}' in the journal {}", path.display())
            }
            JournalError::WorkflowMismatch {
                run_id,
                recorded,
                given,
            } => write!(
                f,
                "run '{run_id}' was started with workflow {recorded}, not {given}"
            ),
            JournalError::Corrupt {
                path,
                run_id,
                seq,
                message,
            } => write!(
                f,
                "journal {}, run '{run_id}', entry {seq}: {message}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for JournalError {}

/// Called after each entry is durable: the run id, the entry's sequence number and the entry.
type Observer = Arc<dyn Fn(&str, u64, &Entry) + Send + Sync>;

/// A file of durable workflow runs (an embedded redb database). Open it with [`Journal::open`];
/// run with [`crate::Executor::start`], reopen with [`crate::Executor::reopen`], resume a
/// suspended phase with [`crate::Executor::resume`].
///
/// One process opens a journal file at a time (a second [`Journal::open`] of the same file, in
/// this process or another, is refused while the first is open).
///
/// ```
/// use agentio_workflow::journal::Journal;
/// let dir = tempfile::tempdir().unwrap();
/// let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
/// assert!(journal.runs().unwrap().is_empty());
/// let missing = journal.load("nope").unwrap_err();
/// assert_eq!(missing.name(), "UnknownRunError");
/// ```
pub struct Journal {
    db: redb::Database,
    path: PathBuf,
    durability: redb::Durability,
    observer: Option<Observer>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("durability", &self.durability)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// Opens the journal at `path`, creating the file when it does not exist.
    pub fn open(path: impl AsRef<Path>) -> Result<Journal, JournalError> {
        let path = path.as_ref().to_path_buf();
        let db = redb::Database::create(&path).map_err(|e| store(&path, e))?;
        let journal = Journal {
            db,
            path,
            durability: redb::Durability::Immediate,
            observer: None,
        };
        // Both tables exist from the start, so reads never meet a missing table.
        journal.write(|txn| {
            txn.open_table(RUNS)?;
            txn.open_table(ENTRIES)?;
            Ok(())
        })?;
        Ok(journal)
    }

    /// Sets how each entry is committed: [`redb::Durability::Immediate`] (the default: on disk,
    /// fsync'd, before the run goes on) or [`redb::Durability::None`] (faster; an entry may be
    /// lost in a machine crash, though not in a process crash).
    #[must_use]
    pub fn with_durability(mut self, durability: redb::Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Calls `observe(run_id, seq, entry)` after each entry is durable, before the run acts on
    /// it (to log, to follow a run from elsewhere, or, in tests, to stop the process at a chosen
    /// transition).
    #[must_use]
    pub fn on_append(
        mut self,
        observe: impl Fn(&str, u64, &Entry) + Send + Sync + 'static,
    ) -> Self {
        self.observer = Some(Arc::new(observe));
        self
    }

    /// The journal's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write<T>(
        &self,
        body: impl FnOnce(&redb::WriteTransaction) -> Result<T, redb::Error>,
    ) -> Result<T, JournalError> {
        let mut txn = self.db.begin_write().map_err(|e| store(&self.path, e))?;
        txn.set_durability(self.durability)
            .map_err(|e| store(&self.path, e))?;
        let value = body(&txn).map_err(|e| store(&self.path, e))?;
        txn.commit().map_err(|e| store(&self.path, e))?;
        Ok(value)
    }

    /// Records a new run; refused with `RunExists` when the id is taken.
    pub(crate) fn create(&self, record: &RunRecord) -> Result<(), JournalError> {
        let bytes = serde_json::to_vec(record).map_err(|e| JournalError::Store {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let created = self.write(|txn| {
            let mut runs = txn.open_table(RUNS)?;
            if runs.get(record.run_id.as_str())?.is_some() {
                return Ok(false);
            }
            runs.insert(record.run_id.as_str(), bytes.as_slice())?;
            Ok(true)
        })?;
        if created {
            Ok(())
        } else {
            Err(JournalError::RunExists {
                path: self.path.clone(),
                run_id: record.run_id.clone(),
            })
        }
    }

    /// Appends `entry` to the run's entries, durably; returns its sequence number (from 0).
    pub(crate) fn append(&self, run_id: &str, entry: &Entry) -> Result<u64, JournalError> {
        let bytes = serde_json::to_vec(entry).map_err(|e| JournalError::Store {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let seq = self.write(|txn| {
            let mut entries = txn.open_table(ENTRIES)?;
            let next = entries
                .range((run_id, 0)..=(run_id, u64::MAX))?
                .next_back()
                .transpose()?
                .map_or(0, |(key, _)| key.value().1 + 1);
            entries.insert((run_id, next), bytes.as_slice())?;
            Ok(next)
        })?;
        if let Some(observe) = &self.observer {
            observe(run_id, seq, entry);
        }
        Ok(seq)
    }

    /// The run's record and its entries, in order.
    pub fn load(&self, run_id: &str) -> Result<(RunRecord, Vec<Entry>), JournalError> {
        let txn = self.db.begin_read().map_err(|e| store(&self.path, e))?;
        let runs = txn.open_table(RUNS).map_err(|e| store(&self.path, e))?;
        let Some(bytes) = runs.get(run_id).map_err(|e| store(&self.path, e))? else {
            return Err(JournalError::UnknownRun {
                path: self.path.clone(),
                run_id: run_id.to_owned(),
            });
        };
        let record: RunRecord =
            serde_json::from_slice(bytes.value()).map_err(|e| JournalError::Corrupt {
                path: self.path.clone(),
                run_id: run_id.to_owned(),
                seq: 0,
                message: format!("the run's record is not readable: {e}"),
            })?;
        let table = txn.open_table(ENTRIES).map_err(|e| store(&self.path, e))?;
        let mut entries = Vec::new();
        for row in table
            .range((run_id, 0)..=(run_id, u64::MAX))
            .map_err(|e| store(&self.path, e))?
        {
            let (key, value) = row.map_err(|e| store(&self.path, e))?;
            let seq = key.value().1;
            let entry =
                serde_json::from_slice(value.value()).map_err(|e| JournalError::Corrupt {
                    path: self.path.clone(),
                    run_id: run_id.to_owned(),
                    seq,
                    message: format!("the entry is not readable: {e}"),
                })?;
            entries.push(entry);
        }
        Ok((record, entries))
    }

    /// Every run's record, by id.
    pub fn runs(&self) -> Result<Vec<RunRecord>, JournalError> {
        let txn = self.db.begin_read().map_err(|e| store(&self.path, e))?;
        let runs = txn.open_table(RUNS).map_err(|e| store(&self.path, e))?;
        let mut records = Vec::new();
        for row in runs.iter().map_err(|e| store(&self.path, e))? {
            let (key, value) = row.map_err(|e| store(&self.path, e))?;
            let record =
                serde_json::from_slice(value.value()).map_err(|e| JournalError::Corrupt {
                    path: self.path.clone(),
                    run_id: key.value().to_owned(),
                    seq: 0,
                    message: format!("the run's record is not readable: {e}"),
                })?;
            records.push(record);
        }
        Ok(records)
    }
}

fn store(path: &Path, error: impl Into<redb::Error>) -> JournalError {
    JournalError::Store {
        path: path.to_path_buf(),
        message: error.into().to_string(),
    }
}

/// Each phase's state as the journal records it, by the last entry about it: `completed`,
/// `running` (claimed, or its output rejected and handed back), `suspended`, `failed`,
/// `blocked` (its claim refused for good), `ready` (resumed, or offered again after its
/// process stopped) or `waiting` (no entry yet: pending or ready). Every recorded phase is
/// listed.
///
/// ```
/// use agentio_workflow::journal::{Entry, RunRecord, phase_states, run_state};
/// use serde_json::json;
/// let record = RunRecord {
///     run_id: "r1".into(), workflow: "w".into(), phases: vec!["a".into(), "b".into()],
///     trigger: json!({}), initial_state: json!({}), document: None, started_at_ms: 0,
/// };
/// let entries = [Entry::Claimed { phase: "a".into() }, Entry::Completed { phase: "a".into(), output: Default::default() }];
/// let states = phase_states(&record, &entries);
/// assert_eq!((states["a"], states["b"]), ("completed", "waiting"));
/// assert_eq!(run_state(&states), "open");
/// ```
pub fn phase_states<'a>(
    record: &'a RunRecord,
    entries: &[Entry],
) -> std::collections::BTreeMap<&'a str, &'static str> {
    let mut states: std::collections::BTreeMap<&str, &str> = record
        .phases
        .iter()
        .map(|p| (p.as_str(), "waiting"))
        .collect();
    for entry in entries {
        let state = match entry {
            Entry::Claimed { .. } | Entry::Rejected { .. } => "running",
            Entry::ClaimRefused { .. } => "blocked",
            Entry::Completed { .. } => "completed",
            Entry::Failed { .. } => "failed",
            Entry::Suspended { .. } => "suspended",
            Entry::Resumed { .. } | Entry::Released { .. } => "ready",
        };
        if let Some(slot) = states.get_mut(entry.phase()) {
            *slot = state;
        }
    }
    states
}

/// A run's state from its phases' ([`phase_states`]): `completed` (every phase), `failed` (a
/// phase failed), `suspended` (a phase awaits input), `blocked` (a claim was refused for good),
/// or `open` (under way, or stopped with its process: reopen it).
pub fn run_state(states: &std::collections::BTreeMap<&str, &str>) -> &'static str {
    let any = |wanted: &str| states.values().any(|s| *s == wanted);
    if any("failed") {
        "failed"
    } else if states.values().all(|s| *s == "completed") {
        "completed"
    } else if any("suspended") {
        "suspended"
    } else if any("blocked") {
        "blocked"
    } else {
        "open"
    }
}
