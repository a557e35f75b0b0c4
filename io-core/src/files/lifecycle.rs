//! The host side of the file contract: stage, inject, run, sync, clean up.

use std::future::Future;
use std::io::Read;
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{AgentError, ErrorCode};
use crate::files::handle::{FS_ROOT_FIELD, IoHandle, path_error, refuse_caller_fs_root};
use crate::files::mutates::covers_workspace_path;
use crate::files::path::{PathError, RunVars, Workspace, WriteError, copy_hashed, interpolate};

/// What the host reports about files, with the run each belongs to (the AIP-7 audit channel).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FileEvent {
    /// An input file was copied from the workspace into the scratch root.
    Staged {
        /// The run.
        run_id: String,
        /// The file key.
        key: String,
        /// The workspace path read.
        workspace_path: String,
        /// Bytes copied.
        bytes: u64,
        /// SHA-256 of the content, lowercase hex.
        sha256: String,
    },
    /// An input file could not be staged; the run did not start.
    StageFailed {
        /// The run.
        run_id: String,
        /// The file key.
        key: String,
        /// The workspace path, as declared.
        workspace_path: String,
        /// Why.
        reason: String,
    },
    /// A declared output was copied from the scratch root into the workspace.
    Synced {
        /// The run.
        run_id: String,
        /// The file key.
        key: String,
        /// The workspace path written (after interpolation).
        workspace_path: String,
        /// Bytes copied.
        bytes: u64,
        /// SHA-256 of the content, lowercase hex.
        sha256: String,
    },
    /// A declared output was not produced (a warning; the run goes on).
    OutputMissing {
        /// The run.
        run_id: String,
        /// The file key.
        key: String,
    },
    /// A declared output could not be synced (logged; the run goes on).
    SyncFailed {
        /// The run.
        run_id: String,
        /// The file key.
        key: String,
        /// The workspace path, as declared.
        workspace_path: String,
        /// Why.
        reason: String,
    },
    /// The scratch root could not be removed (logged; the run goes on).
    CleanupFailed {
        /// The run.
        run_id: String,
        /// Why.
        reason: String,
    },
}

/// Receives [`FileEvent`]s. Any `Fn(&FileEvent)` is one.
pub trait FileObserver: Send + Sync {
    /// Records one event.
    fn observe(&self, event: &FileEvent);
}

impl<F: Fn(&FileEvent) + Send + Sync> FileObserver for F {
    fn observe(&self, event: &FileEvent) {
        self(event);
    }
}

/// One staged or synced file: the attestation of a run (AIP-16 leaves "hash + size" open;
/// agent-io records both, so a run can be audited and replayed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileRecord {
    /// The file key.
    pub key: String,
    /// The workspace path.
    pub workspace_path: String,
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256, lowercase hex.
    pub sha256: String,
}

/// What a run did with files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FileRunRecord {
    /// The run.
    pub run_id: String,
    /// Inputs staged, in key order.
    pub staged: Vec<FileRecord>,
    /// Outputs synced, in key order.
    pub synced: Vec<FileRecord>,
    /// Warnings: outputs not produced, syncs that failed, a scratch root left behind.
    pub warnings: Vec<String>,
}

/// Where file contracts run: the workspace, who hears about each file, and which workspace
/// paths the unit may write.
///
/// ```
/// use agentio_core::files::{FileHost, Workspace};
/// let dir = tempfile::tempdir()?;
/// let workspace = Workspace::open(dir.path())?;
/// let mutates = vec!["workspace:/reports/*".to_owned()];
/// let host = FileHost::new(&workspace).with_mutates(&mutates);
/// assert!(host.may_write("reports/q3.md"));
/// assert!(!host.may_write("notes/q3.md"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct FileHost<'a> {
    /// The workspace files are read from and written to.
    pub workspace: &'a Workspace,
    /// The audit channel, if any.
    pub observer: Option<&'a dyn FileObserver>,
    /// The unit's declared mutations (AIP-14 `mutates`). `Some`: a declared output is synced
    /// only to a path a `workspace:` entry covers (see [`covers_workspace_path`]); `None`: the unit
    /// has no tool contract (an agent core) and the workspace is its scope.
    pub mutates: Option<&'a [String]>,
}

impl<'a> FileHost<'a> {
    /// A host for `workspace`, with no observer and no `mutates` restriction (an example is on
    /// the type).
    pub fn new(workspace: &'a Workspace) -> Self {
        FileHost {
            workspace,
            observer: None,
            mutates: None,
        }
    }

    /// Sets the audit channel (an example is on [`run_with_files`]).
    #[must_use]
    pub fn with_observer(mut self, observer: &'a dyn FileObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Restricts synced outputs to the paths `mutates` covers (an example is on the type).
    #[must_use]
    pub fn with_mutates(mut self, mutates: &'a [String]) -> Self {
        self.mutates = Some(mutates);
        self
    }

    /// Whether this host lets a unit write the workspace path `relative` (an example is on the
    /// type; without `mutates`, every path).
    pub fn may_write(&self, relative: &str) -> bool {
        self.mutates
            .is_none_or(|mutates| covers_workspace_path(mutates, relative))
    }

    fn emit(&self, event: FileEvent) {
        if let Some(observer) = self.observer {
            observer.observe(&event);
        }
    }
}

/// Runs `body` under the file contract of `io`, in the order AIP-16 gives:
///
/// 1. a fresh private scratch root (a new directory, mode `0700` on Unix, unique per run);
/// 2. each `inputsFiles` entry copied from the workspace to `<root>/<key>`; a missing file,
///    or one whose path leaves the workspace, fails the run before the body starts;
/// 3. `_workflowFsRoot` set in the input, overwriting any value the caller supplied;
/// 4. the input validated against the handle's (augmented) input schema;
/// 5. the body run;
/// 6. each `outputsFiles` entry copied from `<root>/<key>` to its workspace path (tokens
///    replaced in one pass), whether the body succeeded or failed; an output not produced is a
///    warning, a sync failure is logged, and neither fails the run;
/// 7. the scratch root removed (best effort); undeclared scratch files go with it.
///
/// Every staged and synced file is reported to the observer and recorded, with its size and
/// SHA-256, in the returned [`FileRunRecord`], which comes back whatever the outcome.
///
/// ```
/// use agentio_core::files::{FileEntry, FileEvent, FileHost, FsRoot, IoDefinition, RunVars, Workspace, define_io_handle, run_with_files};
/// use serde_json::json;
/// use std::sync::Mutex;
///
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("in.txt"), "hello").unwrap();
/// let workspace = Workspace::open(dir.path()).unwrap();
/// let io = define_io_handle(
///     IoDefinition::default()
///         .input_file("source", FileEntry::new("in.txt"))
///         .output_file("shout", FileEntry::new("out/<runId>.txt")),
/// )
/// .unwrap();
/// let seen = Mutex::new(Vec::new());
/// let observer = |event: &FileEvent| seen.lock().unwrap().push(event.clone());
/// let host = FileHost::new(&workspace).with_observer(&observer);
///
/// let (result, record) = pollster::block_on(run_with_files(&io, host, &RunVars::new("r1", "demo"), json!({}), |input| async move {
///     // The body finds its files under the injected scratch root.
///     let root: FsRoot = serde_json::from_value(input["_workflowFsRoot"].clone()).unwrap();
///     let text = std::fs::read_to_string(root.file("source")).unwrap();
///     std::fs::write(root.file("shout"), text.to_uppercase()).unwrap();
///     Ok(json!({ "done": true }))
/// }));
/// assert_eq!(result.unwrap(), json!({ "done": true }));
/// assert_eq!(std::fs::read_to_string(dir.path().join("out/r1.txt")).unwrap(), "HELLO");
/// assert_eq!((record.staged.len(), record.synced.len()), (1, 1));
/// assert_eq!(record.synced[0].bytes, 5);
/// assert_eq!(seen.lock().unwrap().len(), 2);
/// ```
pub async fn run_with_files<F, Fut>(
    io: &IoHandle,
    host: FileHost<'_>,
    vars: &RunVars,
    input: Value,
    body: F,
) -> (Result<Value, AgentError>, FileRunRecord)
where
    F: FnOnce(Value) -> Fut,
    Fut: Future<Output = Result<Value, AgentError>>,
{
    let mut record = FileRunRecord {
        run_id: vars.run_id.clone(),
        ..FileRunRecord::default()
    };
    let mut input = if input.is_null() { json!({}) } else { input };
    if !io.has_files() {
        // No scratch root is injected, so a caller's `_workflowFsRoot` would reach the body.
        let checked = refuse_caller_fs_root(&input).and_then(|()| io.validate_input(&input));
        let result = match checked {
            Ok(()) => body(input).await,
            Err(err) => {
                crate::limits::dismantle(input);
                Err(err)
            }
        };
        return (result, record);
    }

    let prefix = scratch_prefix(&vars.run_id);
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix);
    // Private from the moment it exists: tempfile's default follows the umask (0755 here).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    let scratch = match builder.tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            let error = AgentError::internal("the run's scratch space could not be created")
                .with_operator_detail(err.to_string());
            return (Err(error), record);
        }
    };
    let root = std::fs::canonicalize(scratch.path()).unwrap_or_else(|_| scratch.path().to_owned());

    if let Err(err) = stage_inputs(io, host, vars, &root, &mut record) {
        cleanup(scratch, host, vars, &mut record);
        return (Err(err), record);
    }

    let Some(object) = input.as_object_mut() else {
        cleanup(scratch, host, vars, &mut record);
        let err = AgentError::new(ErrorCode::InputInvalid, "the input must be a JSON object");
        return (Err(err), record);
    };
    // AIP-16: the host overwrites whatever the caller put here.
    object.insert(
        FS_ROOT_FIELD.to_owned(),
        Value::String(root.to_string_lossy().into_owned()),
    );

    let result = match io.validate_input(&input) {
        Ok(()) => body(input).await,
        Err(err) => {
            crate::limits::dismantle(input);
            Err(err)
        }
    };
    sync_outputs(io, host, vars, &root, &mut record);
    cleanup(scratch, host, vars, &mut record);
    (result, record)
}

fn scratch_prefix(run_id: &str) -> String {
    let safe: String = run_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(48)
        .collect();
    format!("agent-io-{safe}-")
}

fn stage_inputs(
    io: &IoHandle,
    host: FileHost<'_>,
    vars: &RunVars,
    root: &Path,
    record: &mut FileRunRecord,
) -> Result<(), AgentError> {
    for (key, entry) in io.inputs_files() {
        let failed = |reason: String| FileEvent::StageFailed {
            run_id: vars.run_id.clone(),
            key: key.clone(),
            workspace_path: entry.path.clone(),
            reason,
        };
        let pointer = format!("/inputsFiles/{key}/path");
        let path = match interpolate(&entry.path, vars) {
            Ok(path) => path,
            Err(err) => {
                host.emit(failed(err.to_string()));
                return Err(path_error(
                    format!("input file `{key}` has an invalid path: {err}"),
                    &err,
                    &pointer,
                ));
            }
        };
        // The contract's limit, under the host's: one check, before a byte is copied.
        let limit = io
            .max_input_bytes()
            .unwrap_or(u64::MAX)
            .min(host.workspace.max_input_bytes());
        let opened = match host.workspace.open_input_within(&path, limit) {
            Ok(Some(opened)) => opened,
            Ok(None) => {
                host.emit(failed("the file does not exist".into()));
                return Err(AgentError::new(
                    ErrorCode::NotFound,
                    format!("input file `{key}` (`{path}`) does not exist in the workspace"),
                ));
            }
            Err(err) => {
                host.emit(failed(err.to_string()));
                let message = match err {
                    PathError::NotRegularFile => {
                        format!("input file `{key}` (`{path}`) is not a regular file")
                    }
                    _ => format!("input file `{key}` (`{path}`) is refused: {err}"),
                };
                return Err(path_error(message, &err, &pointer));
            }
        };
        match stage_one(opened, limit, &root.join(key)) {
            Ok((bytes, sha256)) => {
                host.emit(FileEvent::Staged {
                    run_id: vars.run_id.clone(),
                    key: key.clone(),
                    workspace_path: path.clone(),
                    bytes,
                    sha256: sha256.clone(),
                });
                record.staged.push(FileRecord {
                    key: key.clone(),
                    workspace_path: path,
                    bytes,
                    sha256,
                });
            }
            Err(err) => {
                host.emit(failed(err.to_string()));
                return Err(AgentError::internal(format!(
                    "input file `{key}` could not be staged"
                ))
                .with_operator_detail(err.to_string()));
            }
        }
    }
    Ok(())
}

/// Copies an opened input into a new scratch file, reading at most `limit` bytes: a file that
/// grows past its limit while it is copied is refused, not truncated.
fn stage_one(
    opened: crate::files::OpenedInput,
    limit: u64,
    to: &Path,
) -> std::io::Result<(u64, String)> {
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)?;
    let mut source = opened.file.take(limit.saturating_add(1));
    let (bytes, sha256) = copy_hashed(&mut source, &mut target)?;
    if bytes > limit {
        return Err(std::io::Error::other(format!(
            "the file grew past the limit of {limit} bytes while it was staged"
        )));
    }
    target.sync_all()?;
    Ok((bytes, sha256))
}

fn sync_outputs(
    io: &IoHandle,
    host: FileHost<'_>,
    vars: &RunVars,
    root: &Path,
    record: &mut FileRunRecord,
) {
    // The scratch root is opened once as a directory descriptor, like the workspace: a body
    // that swaps `<root>/<key>` for a link after it is checked cannot make us read elsewhere.
    let scratch = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority());
    for (key, entry) in io.outputs_files() {
        let failed = |record: &mut FileRunRecord, reason: String| {
            record
                .warnings
                .push(format!("output `{key}` was not synced: {reason}"));
            host.emit(FileEvent::SyncFailed {
                run_id: vars.run_id.clone(),
                key: key.clone(),
                workspace_path: entry.path.clone(),
                reason,
            });
        };
        let scratch = match &scratch {
            Ok(scratch) => scratch,
            Err(err) => {
                failed(
                    record,
                    format!("the scratch root could not be opened: {err}"),
                );
                continue;
            }
        };
        let mut source = match open_scratch_output(scratch, key) {
            Ok(Some(file)) => file,
            Ok(None) => {
                record
                    .warnings
                    .push(format!("output `{key}` was declared but not produced"));
                host.emit(FileEvent::OutputMissing {
                    run_id: vars.run_id.clone(),
                    key: key.clone(),
                });
                continue;
            }
            Err(reason) => {
                failed(record, reason);
                continue;
            }
        };
        let path = match interpolate(&entry.path, vars) {
            Ok(path) => path,
            Err(err) => {
                failed(record, err.to_string());
                continue;
            }
        };
        if !host.may_write(&path) {
            failed(
                record,
                format!(
                    "`workspace:/{path}` is not covered by the contract's `mutates`; declare it to write there"
                ),
            );
            continue;
        }
        match host.workspace.write_file(&path, &mut source) {
            Ok((bytes, sha256)) => {
                host.emit(FileEvent::Synced {
                    run_id: vars.run_id.clone(),
                    key: key.clone(),
                    workspace_path: path.clone(),
                    bytes,
                    sha256: sha256.clone(),
                });
                record.synced.push(FileRecord {
                    key: key.clone(),
                    workspace_path: path,
                    bytes,
                    sha256,
                });
            }
            Err(WriteError::Path(PathError::NotRegularFile)) => failed(
                record,
                "the target, or a folder on its way, is not a regular file or folder".into(),
            ),
            Err(err) => failed(record, err.to_string()),
        }
    }
}

/// Opens `<root>/<key>` for syncing: only a regular file with one link, written by the body
/// inside its own scratch root. A body could point `<root>/<key>` at any file it can name
/// (a symlink, a hard link); neither is synced.
fn open_scratch_output(
    scratch: &cap_std::fs::Dir,
    key: &str,
) -> Result<Option<std::fs::File>, String> {
    const NOT_REGULAR: &str =
        "it is not a regular file in the scratch root (a link or a directory)";
    match scratch.symlink_metadata(key) {
        Err(_) => return Ok(None),
        Ok(meta) if !meta.is_file() => return Err(NOT_REGULAR.into()),
        Ok(_) => {}
    }
    let file = scratch
        .open_with(key, &crate::files::path::read_options())
        .map_err(|_| NOT_REGULAR.to_owned())?
        .into_std();
    let meta = file.metadata().map_err(|err| err.to_string())?;
    if !meta.is_file() {
        return Err(NOT_REGULAR.into());
    }
    #[cfg(unix)]
    if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
        return Err(
            "it has more than one hard link (it may be a file outside the scratch root)".into(),
        );
    }
    Ok(Some(file))
}

fn cleanup(
    scratch: tempfile::TempDir,
    host: FileHost<'_>,
    vars: &RunVars,
    record: &mut FileRunRecord,
) {
    if let Err(err) = scratch.close() {
        record
            .warnings
            .push(format!("the scratch root could not be removed: {err}"));
        host.emit(FileEvent::CleanupFailed {
            run_id: vars.run_id.clone(),
            reason: err.to_string(),
        });
    }
}
