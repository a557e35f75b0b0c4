//! The host side of the file contract: stage, inject, run, sync, clean up.

use std::future::Future;
use std::io::{Read, Write};
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::error::{AgentError, ErrorCode};
use crate::files::handle::{FS_ROOT_FIELD, IoHandle, path_error};
use crate::files::path::{RunVars, Workspace, interpolate};

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

/// Where file contracts run: the workspace, and who hears about each file.
#[derive(Clone, Copy)]
pub struct FileHost<'a> {
    /// The workspace files are read from and written to.
    pub workspace: &'a Workspace,
    /// The audit channel, if any.
    pub observer: Option<&'a dyn FileObserver>,
}

impl FileHost<'_> {
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
        let result = match io.validate_input(&input) {
            Ok(()) => body(input).await,
            Err(err) => Err(err),
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
        Err(err) => Err(err),
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
        let source = match host.workspace.resolve_existing(&path) {
            Ok(Some(real)) if real.is_file() => real,
            Ok(Some(_)) => {
                host.emit(failed("not a regular file".into()));
                return Err(AgentError::new(
                    ErrorCode::InputInvalid,
                    format!("input file `{key}` (`{path}`) is not a regular file"),
                ));
            }
            Ok(None) => {
                host.emit(failed("the file does not exist".into()));
                return Err(AgentError::new(
                    ErrorCode::NotFound,
                    format!("input file `{key}` (`{path}`) does not exist in the workspace"),
                ));
            }
            Err(err) => {
                host.emit(failed(err.to_string()));
                return Err(path_error(
                    format!("input file `{key}` (`{path}`) is refused: {err}"),
                    &err,
                    &pointer,
                ));
            }
        };
        match copy_hashed(&source, &root.join(key), true) {
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

fn sync_outputs(
    io: &IoHandle,
    host: FileHost<'_>,
    vars: &RunVars,
    root: &Path,
    record: &mut FileRunRecord,
) {
    for (key, entry) in io.outputs_files() {
        let source = root.join(key);
        let meta = std::fs::symlink_metadata(&source);
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
        match meta {
            Err(_) => {
                record
                    .warnings
                    .push(format!("output `{key}` was declared but not produced"));
                host.emit(FileEvent::OutputMissing {
                    run_id: vars.run_id.clone(),
                    key: key.clone(),
                });
                continue;
            }
            // A body could point `<root>/<key>` at any file it can name; only a regular file
            // the body wrote inside its own scratch root is synced.
            Ok(meta) if !meta.file_type().is_file() => {
                failed(
                    record,
                    "it is not a regular file in the scratch root (a link or a directory)".into(),
                );
                continue;
            }
            Ok(_) => {}
        }
        let path = match interpolate(&entry.path, vars) {
            Ok(path) => path,
            Err(err) => {
                failed(record, err.to_string());
                continue;
            }
        };
        let target = match host.workspace.prepare_write(&path) {
            Ok(target) => target,
            Err(err) => {
                failed(record, err.to_string());
                continue;
            }
        };
        match write_atomically(&source, &target) {
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
            Err(err) => failed(record, err.to_string()),
        }
    }
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

/// Copies `from` to a new file `to`, returning its size and SHA-256.
fn copy_hashed(from: &Path, to: &Path, create_new: bool) -> std::io::Result<(u64, String)> {
    let mut source = std::fs::File::open(from)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    if create_new {
        options.create_new(true);
    } else {
        options.create(true).truncate(true);
    }
    let mut target = options.open(to)?;
    let (bytes, sha256) = copy_into(&mut source, &mut target)?;
    target.sync_all()?;
    Ok((bytes, sha256))
}

fn copy_into(source: &mut impl Read, target: &mut impl Write) -> std::io::Result<(u64, String)> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let read = source.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
        target.write_all(&buffer[..read])?;
        total += read as u64;
    }
    let digest = hasher.finalize();
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((total, hex))
}

/// Writes `source`'s content to `target` through a temporary file in the same directory and a
/// rename: a reader never sees half a file, and a rename replaces a path without following it.
fn write_atomically(source: &Path, target: &Path) -> std::io::Result<(u64, String)> {
    let dir = target
        .parent()
        .ok_or_else(|| std::io::Error::other("the target has no directory"))?;
    let mut temporary = tempfile::NamedTempFile::new_in(dir)?;
    let mut from = std::fs::File::open(source)?;
    let (bytes, sha256) = copy_into(&mut from, temporary.as_file_mut())?;
    temporary.as_file().sync_all()?;
    temporary.persist(target).map_err(|err| err.error)?;
    Ok((bytes, sha256))
}
