//! The gateway: judges a submission against its task and the workspace.
//!
//! [`judge`] runs four checks, in this order, and the verdict's `reason_code` is the code of
//! the first failure found:
//!
//! 1. `schema_valid` (`SCHEMA_VIOLATION`): `submit.json` parses, matches its schema and the
//!    rules of [`crate::types::submit`], and its `task_id` is the task's.
//! 2. `scope_valid` (`SCOPE_CONFLICT`): every changed and new file is allowed by the pins
//!    (forbidden wins), and the files the patch writes are exactly the declared changed and
//!    new files, read as `git apply` reads them ([`crate::patch`]: `--- docs/a.md` without
//!    prefixes writes `a.md`); what it reads (a copy's source) and every symlink's target are
//!    allowed by the pins too; and `git apply` itself, asked, writes nothing the gateway did
//!    not judge (it is asked for `--numstat`, `--summary` and `--check` only). (A patch that cannot be read, that `git apply` refuses, or
//!    that applies to the workspace in neither direction fails `evidence_present`, not this
//!    check.)
//! 3. `tests_passed` (`CI_FAILED`): `tests.passed` is true.
//! 4. `evidence_present` (`EVIDENCE_MISSING` when an artifact does not exist,
//!    `EVIDENCE_INVALID` otherwise): each artifact is a regular file (or, `evidence_dir`, a
//!    directory) inside the workspace, the last line of `selftest.log` is `EXIT_CODE=<int>`
//!    equal to `exit_code`, and `git apply` accepts the patch and applies it to the workspace
//!    in reverse (the workspace holds the change, as an executor leaves it) or forward (the
//!    workspace is the base).
//!
//! The gateway needs `git` on its `PATH` (any version with `apply --numstat -z`); without it
//! there is nothing to judge a patch by, and the input is [`Unusable`].
//!
//! Then the submission's own status: `NEED_INPUT` fails with `NEEDS_CLARIFICATION`, `FAILED`
//! with its `reason_code` (or `EXECUTOR_ERROR`), when no check failed first.
//!
//! **Nothing is read outside the workspace.** Every artifact is opened beneath one directory
//! descriptor (cap-std): a symlink, however placed, cannot lead a read outside it, and an
//! artifact path is refused before any open when it is absolute, has `..`, a NUL or a
//! backslash. Reads are bounded ([`MAX_ARTIFACT_BYTES`]).
//!
//! **Unusable input** ([`Unusable`], exit status 2) is what leaves nothing to judge: a task
//! input that does not parse or breaks its schema or rules (the gateway's own input, not the
//! executor's work), or a workspace that is not a directory. A `submit.json` that does not
//! parse is the executor's failure: a FAIL with `SCHEMA_VIOLATION`.

use std::io::Read;
use std::path::Path;
use std::time::SystemTime;

use agentio_core::AgentInput;
use agentio_core::files::{PathError, Workspace};
use cap_std::fs::Dir;
use serde_json::Value;

use crate::git::GitRefusal as PatchRefused;
use crate::patch::effects;
use crate::scope::{Placement, Scope, normalize_file};
use crate::types::{
    Checks, Decision, DeployedVerdict, FailCode, Links, Outcome, Reason, Status, Submit, TaskInput,
    Timestamps, VERDICT_SCHEMA_VERSION, Verdict,
};

/// The most the gateway reads of one artifact (64 MiB): a larger one is `EVIDENCE_INVALID`.
pub const MAX_ARTIFACT_BYTES: u64 = 64 << 20;

/// Why there is nothing to judge.
#[derive(Debug)]
pub enum Unusable {
    /// The task input is not JSON: where, and what.
    TaskNotJson {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// serde_json's message.
        message: String,
    },
    /// The task input breaks its schema or rules.
    TaskInvalid(agentio_core::AgentError),
    /// The workspace cannot be opened as a directory.
    Workspace(String),
    /// A file the gateway was given cannot be read.
    Unreadable(String),
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::TaskNotJson {
                line,
                column,
                message,
            } => write!(
                f,
                "the task input is not JSON (line {line}, column {column}): {message}"
            ),
            Unusable::TaskInvalid(err) => write!(f, "the task input is invalid: {}", err.message()),
            Unusable::Workspace(why) => write!(f, "the workspace cannot be used: {why}"),
            Unusable::Unreadable(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Unusable {}

impl Unusable {
    /// The problem as JSON, for the command's output.
    pub fn to_json(&self) -> Value {
        let mut out = serde_json::json!({ "error": "unusable_input", "message": self.to_string() });
        match self {
            Unusable::TaskNotJson { line, column, .. } => {
                out["line"] = (*line).into();
                out["column"] = (*column).into();
            }
            Unusable::TaskInvalid(err) => {
                out["violations"] = serde_json::to_value(err.violations()).unwrap_or_default();
            }
            _ => {}
        }
        out
    }
}

/// Parses a task input, reporting where malformed JSON breaks.
///
/// ```
/// use agentio_promptos::gateway::{Unusable, parse_task};
/// let err = parse_task("{\n  \"files\": [\"a\"\n  }").unwrap_err();
/// assert!(matches!(err, Unusable::TaskNotJson { line: 3, .. }));
/// ```
pub fn parse_task(text: &str) -> Result<TaskInput, Unusable> {
    let value: Value = serde_json::from_str(text).map_err(|err| Unusable::TaskNotJson {
        line: err.line(),
        column: err.column(),
        message: err.to_string(),
    })?;
    TaskInput::from_input_value(&value).map_err(Unusable::TaskInvalid)
}

/// A judgement: the verdict, and every failure found (most blocking first).
#[derive(Clone, Debug)]
pub struct Judgement {
    /// The verdict in the document's shape.
    pub verdict: Verdict,
    /// Every failure, in check order: its code and what was found.
    pub failures: Vec<(FailCode, String)>,
    /// The submission's status, when it could be read.
    pub status: Option<Status>,
}

impl Judgement {
    /// Whether every check held and the submission is DONE.
    pub fn passed(&self) -> bool {
        self.verdict.verdict == Outcome::Pass
    }

    /// The verdict in the deployed shape: `NEED_INPUT` → `ESCALATE`, a pass → `DONE`, anything
    /// else → `RETRY`.
    ///
    /// The mapping is decided here (the deployed schema is not published with the
    /// specification): `ESCALATE` only for a submission that asks for input, since another
    /// attempt cannot supply it.
    pub fn deployed(&self) -> DeployedVerdict {
        let verdict = if self.status == Some(Status::NeedInput) {
            Decision::Escalate
        } else if self.passed() {
            Decision::Done
        } else {
            Decision::Retry
        };
        let reasons = self
            .failures
            .iter()
            .map(|(code, message)| Reason {
                code: *code,
                message: message.clone(),
            })
            .collect();
        let actions = match verdict {
            Decision::Done => vec!["merge the patch".to_owned()],
            Decision::Escalate => {
                vec!["answer the submission's needs_input, then re-run the task".to_owned()]
            }
            Decision::Retry => self
                .failures
                .iter()
                .map(|(code, _)| action_for(*code).to_owned())
                .fold(Vec::new(), |mut actions, action| {
                    if !actions.contains(&action) {
                        actions.push(action);
                    }
                    actions
                }),
        };
        DeployedVerdict {
            task_id: self.verdict.task_id.clone(),
            verdict,
            reasons,
            actions,
        }
    }
}

fn action_for(code: FailCode) -> &'static str {
    match code {
        FailCode::SchemaViolation => "write submit.json to the scc.submit.v1 schema",
        FailCode::ScopeConflict => {
            "keep every change within the pins, and declare exactly the files the patch touches"
        }
        FailCode::CiFailed => "make the tests pass",
        FailCode::EvidenceMissing => "write every artifact the submission names",
        FailCode::EvidenceInvalid => {
            "write each artifact inside the workspace, as the kind it is named, with the log's EXIT_CODE line"
        }
        _ => "retry the task",
    }
}

/// Judges `submit_text` (the contents of `submit.json`) for `task` in `workspace`.
/// `submitted_at` is when the submission was written (the file's modification time, when the
/// command judges a file).
///
/// ```
/// use agentio_promptos::FailCode;
/// use agentio_promptos::gateway::{judge, parse_task};
/// use serde_json::json;
///
/// let task = parse_task(r#"{
///     "task_id": "72c84e9c-0975-4c1a-b9a5-864c2725dc8a",
///     "goal": "Document the schemas.",
///     "role": "executor",
///     "pins": { "allowed_paths": ["docs/"], "forbidden_paths": ["docs/private/"] },
///     "files": ["docs/schemas.md"],
///     "context": { "map": {}, "docs": {}, "history": {} }
/// }"#).unwrap();
///
/// let workspace = tempfile::tempdir().unwrap();
/// let write = |path: &str, text: &str| {
///     let full = workspace.path().join(path);
///     std::fs::create_dir_all(full.parent().unwrap()).unwrap();
///     std::fs::write(full, text).unwrap();
/// };
/// write("docs/schemas.md", "# Schemas\n");
/// write("evidence/report.md", "# Report\n");
/// write("evidence/selftest.log", "ok\nEXIT_CODE=0\n");
/// write("evidence/patch.diff", "--- /dev/null\n+++ b/docs/schemas.md\n@@ -0,0 +1 @@\n+# Schemas\n");
/// let mut submit = json!({
///     "schema_version": "scc.submit.v1",
///     "task_id": "72c84e9c-0975-4c1a-b9a5-864c2725dc8a",
///     "status": "DONE",
///     "changed_files": [],
///     "new_files": ["docs/schemas.md"],
///     "tests": { "commands": ["cargo test"], "passed": true, "summary": "3 passed" },
///     "artifacts": {
///         "report_md": "evidence/report.md", "selftest_log": "evidence/selftest.log",
///         "evidence_dir": "evidence", "patch_diff": "evidence/patch.diff",
///         "submit_json": "evidence/submit.json"
///     },
///     "exit_code": 0,
///     "needs_input": []
/// });
/// write("evidence/submit.json", &submit.to_string());
/// let judgement = judge(&task, &submit.to_string(), workspace.path(), None).unwrap();
/// assert!(judgement.passed(), "{:?}", judgement.failures);
///
/// // A change under a forbidden pin fails the scope check, whatever the tests say.
/// submit["changed_files"] = json!(["docs/private/keys.md"]);
/// let judgement = judge(&task, &submit.to_string(), workspace.path(), None).unwrap();
/// assert!(!judgement.passed());
/// assert_eq!(judgement.failures[0].0, FailCode::ScopeConflict);
/// ```
pub fn judge(
    task: &TaskInput,
    submit_text: &str,
    workspace: &Path,
    submitted_at: Option<SystemTime>,
) -> Result<Judgement, Unusable> {
    let unusable =
        |err: std::io::Error| Unusable::Workspace(format!("{}: {err}", workspace.display()));
    let files = Workspace::open(workspace)
        .map_err(unusable)?
        .with_max_input_bytes(MAX_ARTIFACT_BYTES);
    // Directories (`evidence_dir`) are opened beneath the same root.
    let dir =
        Dir::open_ambient_dir(files.root(), cap_std::ambient_authority()).map_err(unusable)?;
    let mut failures: Vec<(FailCode, String)> = Vec::new();
    let mut checks = Checks::default();
    let evaluated_at = SystemTime::now();

    // 1. schema_valid
    let submit = match serde_json::from_str::<Value>(submit_text) {
        Err(err) => {
            failures.push((
                FailCode::SchemaViolation,
                format!(
                    "submit.json is not JSON (line {}, column {}): {err}",
                    err.line(),
                    err.column()
                ),
            ));
            None
        }
        Ok(value) => match Submit::from_input_value(&value) {
            Err(err) => {
                for violation in err.violations() {
                    failures.push((
                        FailCode::SchemaViolation,
                        format!("submit.json: {violation}"),
                    ));
                }
                if err.violations().is_empty() {
                    failures.push((
                        FailCode::SchemaViolation,
                        format!("submit.json: {}", err.message()),
                    ));
                }
                None
            }
            Ok(submit) => Some(submit),
        },
    };
    let Some(submit) = submit else {
        let links = Links::default();
        return Ok(finish(
            task,
            None,
            checks,
            failures,
            links,
            submitted_at,
            evaluated_at,
        ));
    };
    if submit.task_id != task.task_id {
        failures.push((
            FailCode::SchemaViolation,
            format!(
                "submit.json answers task `{}`, not `{}`",
                submit.task_id, task.task_id
            ),
        ));
    }
    checks.schema_valid = failures.is_empty();

    // 2. scope_valid
    let before = failures.len();
    // The task input was validated: its pins parse.
    let scope =
        Scope::new(&task.pins.allowed_paths, &task.pins.forbidden_paths).map_err(|err| {
            Unusable::TaskInvalid(agentio_core::AgentError::input_invalid(
                err.to_string(),
                Vec::new(),
            ))
        })?;
    let mut declared = std::collections::BTreeSet::new();
    for path in submit.changed_files.iter().chain(&submit.new_files) {
        match scope.place(path) {
            Ok(Placement::Allowed) => {
                if let Ok(normal) = normalize_file(path) {
                    declared.insert(normal);
                }
            }
            Ok(Placement::Forbidden(pin)) => failures.push((
                FailCode::ScopeConflict,
                format!("`{path}` is forbidden by the pin `{pin}`"),
            )),
            Ok(Placement::Outside) => failures.push((
                FailCode::ScopeConflict,
                format!("`{path}` is outside `pins.allowed_paths`"),
            )),
            Err(err) => failures.push((FailCode::ScopeConflict, err.to_string())),
        }
    }
    let mut patch = read_artifact(&files, &submit.artifacts.patch_diff);
    if let Ok(bytes) = &patch {
        let all_declared: std::collections::BTreeSet<String> = submit
            .changed_files
            .iter()
            .chain(&submit.new_files)
            .filter_map(|p| normalize_file(p).ok())
            .collect();
        match judge_patch(bytes, files.root(), &scope, &all_declared) {
            Ok((problems, not_applicable)) => {
                failures.extend(problems);
                if let Some(why) = not_applicable {
                    patch = Err((FailCode::EvidenceInvalid, clip(&why)));
                }
            }
            Err(PatchRefused::Unavailable(why)) | Err(PatchRefused::Unreadable(why)) => {
                return Err(Unusable::Unreadable(why));
            }
        }
    }
    checks.scope_valid = failures.len() == before;

    // 3. tests_passed
    checks.tests_passed = submit.tests.passed;
    if !submit.tests.passed {
        failures.push((
            FailCode::CiFailed,
            format!("the tests did not pass: {}", clip(&submit.tests.summary)),
        ));
    }

    // 4. evidence_present
    let before = failures.len();
    for (name, path, directory) in submit.artifacts.entries() {
        let found = if directory {
            open_dir(&dir, path).map(|_| ())
        } else if name == "patch_diff" {
            patch.as_ref().map(|_| ()).map_err(Clone::clone)
        } else if name == "selftest_log" {
            read_artifact(&files, path).and_then(|log| exit_code_agrees(&log, submit.exit_code))
        } else {
            read_artifact(&files, path).map(|_| ())
        };
        if let Err((code, why)) = found {
            failures.push((code, format!("artifact `{name}` (`{}`): {why}", clip(path))));
        }
    }
    checks.evidence_present = failures.len() == before;

    // The submission's own status.
    if failures.is_empty() {
        match submit.status {
            Status::Done => {}
            Status::NeedInput => failures.push((
                FailCode::NeedsClarification,
                format!(
                    "the executor needs input: {}",
                    submit.needs_input.join("; ")
                ),
            )),
            Status::Failed => failures.push((
                submit
                    .reason_code
                    .as_deref()
                    .and_then(|code| code.parse().ok())
                    .unwrap_or(FailCode::ExecutorError),
                "the executor reports that the attempt failed".to_owned(),
            )),
        }
    }
    let links = Links {
        submit_json: submit.artifacts.submit_json.clone(),
        report_md: submit.artifacts.report_md.clone(),
        selftest_log: submit.artifacts.selftest_log.clone(),
        patch_diff: submit.artifacts.patch_diff.clone(),
        evidence_dir: submit.artifacts.evidence_dir.clone(),
    };
    Ok(finish(
        task,
        Some(submit.status),
        checks,
        failures,
        links,
        submitted_at,
        evaluated_at,
    ))
}

/// The scope check of a patch, as `git apply` would apply it (see `crate::git`): every path
/// it writes is declared and every declared path written; every path it reads (a copy's
/// source) and every symlink's target is allowed by the pins; git writes nothing the gateway
/// did not read. Also why the patch does not apply to the workspace, if it does not (an
/// evidence failure, not a scope one). `Err` when git refuses the patch or cannot be asked.
fn judge_patch(
    bytes: &[u8],
    workspace: &Path,
    scope: &Scope,
    declared: &std::collections::BTreeSet<String>,
) -> Result<JudgedPatch, PatchRefused> {
    let text = String::from_utf8_lossy(bytes);
    let effects = effects(&text);
    let mut failures = Vec::new();
    let conflict = |message: String| (FailCode::ScopeConflict, message);
    let mut written = std::collections::BTreeSet::new();
    for path in &effects.written {
        match normalize_file(path) {
            Ok(normal) => {
                written.insert(normal);
            }
            Err(err) => failures.push(conflict(format!(
                "the patch touches a path outside the workspace: {err}"
            ))),
        }
    }
    for path in written.difference(declared) {
        failures.push(conflict(format!(
            "the patch touches `{}`, which the submission does not declare",
            clip(path)
        )));
    }
    for path in declared.difference(&written) {
        failures.push(conflict(format!(
            "the submission declares `{}`, which the patch does not touch",
            clip(path)
        )));
    }
    // A copy reads its source: the pins say what may be read, too.
    for path in &effects.read {
        if let Some(why) = not_allowed(scope, path) {
            failures.push(conflict(format!("the patch copies from {why}")));
        }
    }
    for link in &effects.symlinks {
        let Some(target) = &link.target else {
            failures.push(conflict(format!(
                "the patch makes `{}` a symlink whose target it does not spell out",
                clip(&link.path)
            )));
            continue;
        };
        let resolved = resolve_link(&link.path, target);
        let why = match resolved {
            None => Some(format!(
                "`{}`, which leads outside the workspace",
                clip(target)
            )),
            Some(resolved) => not_allowed(scope, &resolved),
        };
        if let Some(why) = why {
            failures.push(conflict(format!(
                "the patch makes `{}` a symlink to {why}",
                clip(&link.path)
            )));
        }
    }
    let git = match crate::git::view(workspace, bytes) {
        Ok(git) => git,
        // git does not read the patch: nothing it would write to compare; the patch is not
        // evidence of anything.
        Err(PatchRefused::Unreadable(why)) => {
            return Ok((failures, Some(format!("`git apply` refuses it: {why}"))));
        }
        Err(unavailable) => return Err(unavailable),
    };
    for path in &git.written {
        let judged = normalize_file(path).is_ok_and(|normal| written.contains(&normal));
        if !judged {
            failures.push(conflict(format!(
                "`git apply` would write `{}`, which the gateway reads differently in the patch",
                clip(path)
            )));
        }
    }
    for path in &git.symlinks {
        let judged = effects
            .symlinks
            .iter()
            .any(|link| normalize_file(&link.path).ok() == normalize_file(path).ok());
        if !judged {
            failures.push(conflict(format!(
                "`git apply` would make `{}` a symlink, which the gateway reads differently in the patch",
                clip(path)
            )));
        }
    }
    Ok((failures, git.not_applicable))
}

/// The scope failures of a patch, and why it does not apply, if it does not.
type JudgedPatch = (Vec<(FailCode, String)>, Option<String>);

/// Where a symlink at `link` pointing to `target` leads, from the workspace root; `None` when
/// it leads outside (an absolute target, or more `..` than the link has directories above it).
fn resolve_link(link: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.is_empty() {
        return None;
    }
    let mut parts: Vec<&str> = link.split('/').collect();
    parts.pop();
    for component in target.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

/// Why the pins do not allow `path`, or `None` when they do.
fn not_allowed(scope: &Scope, path: &str) -> Option<String> {
    match scope.place(path) {
        Ok(Placement::Allowed) => None,
        Ok(Placement::Forbidden(pin)) => {
            Some(format!("`{}`, which the pin `{pin}` forbids", clip(path)))
        }
        Ok(Placement::Outside) => Some(format!(
            "`{}`, which is outside `pins.allowed_paths`",
            clip(path)
        )),
        Err(err) => Some(format!("`{}`: {err}", clip(path))),
    }
}

fn finish(
    task: &TaskInput,
    status: Option<Status>,
    checks: Checks,
    mut failures: Vec<(FailCode, String)>,
    mut links: Links,
    submitted_at: Option<SystemTime>,
    evaluated_at: SystemTime,
) -> Judgement {
    // Every verdict is bounded, whatever the submission holds: at most MAX_MESSAGES failures
    // of at most MAX_MESSAGE_BYTES each, then a count of the rest; links of at most a path's
    // length.
    bound(&mut failures);
    for link in [
        &mut links.submit_json,
        &mut links.report_md,
        &mut links.selftest_log,
        &mut links.patch_diff,
        &mut links.evidence_dir,
    ] {
        agentio_core::limits::clip(link, 4_096);
    }
    let verdict = Verdict {
        schema_version: VERDICT_SCHEMA_VERSION.to_owned(),
        task_id: task.task_id.clone(),
        verdict: if failures.is_empty() {
            Outcome::Pass
        } else {
            Outcome::Fail
        },
        reason_code: failures.first().map(|(code, _)| *code),
        messages: messages(&failures),
        checks,
        timestamps: Timestamps {
            submitted_at: rfc3339(submitted_at.unwrap_or(evaluated_at)),
            evaluated_at: rfc3339(evaluated_at),
        },
        links,
    };
    Judgement {
        verdict,
        failures,
        status,
    }
}

/// The most messages a verdict lists; a hostile submission with thousands of bad paths gets a
/// count of the rest (one more message, `... and N more`).
pub const MAX_MESSAGES: usize = 100;

/// The longest message a verdict holds, in bytes; a longer one is cut and ends in `…`.
pub const MAX_MESSAGE_BYTES: usize = 1_024;

/// At most [`MAX_MESSAGES`] failures of at most [`MAX_MESSAGE_BYTES`] each, then one that
/// counts the rest.
fn bound(failures: &mut Vec<(FailCode, String)>) {
    let total = failures.len();
    failures.truncate(MAX_MESSAGES);
    for (_, message) in failures.iter_mut() {
        agentio_core::limits::clip(message, MAX_MESSAGE_BYTES);
    }
    if total > MAX_MESSAGES {
        let code = failures[MAX_MESSAGES - 1].0;
        failures.push((code, format!("... and {} more", total - MAX_MESSAGES)));
    }
}

fn messages(failures: &[(FailCode, String)]) -> Vec<String> {
    failures
        .iter()
        .map(|(_, message)| message.clone())
        .collect()
}

type Found<T> = Result<T, (FailCode, String)>;

/// Reads one artifact with the library's own workspace reader ([`agentio_core::files::Workspace`]):
/// beneath the root descriptor, a regular file (never a FIFO or a device, checked on the open
/// descriptor), with one link (a hard link could make a file outside readable through a path
/// inside), bounded.
fn read_artifact(files: &Workspace, path: &str) -> Found<Vec<u8>> {
    let normal =
        normalize_file(path).map_err(|err| (FailCode::EvidenceInvalid, err.to_string()))?;
    let refused = |why: String| (FailCode::EvidenceInvalid, why);
    match files.open_input_within(&normal, MAX_ARTIFACT_BYTES) {
        Ok(Some(opened)) => read_limited(opened.file, MAX_ARTIFACT_BYTES).map_err(refused),
        Ok(None) => Err((FailCode::EvidenceMissing, "does not exist".to_owned())),
        Err(PathError::EscapesWorkspace) => Err(refused(
            "it leads outside the workspace (through a symlink)".to_owned(),
        )),
        Err(PathError::NotRegularFile) => Err(refused("not a regular file".to_owned())),
        Err(PathError::TooLarge { limit, .. }) => {
            Err(refused(format!("larger than {limit} bytes")))
        }
        Err(other) => Err(refused(other.to_string())),
    }
}

/// Reads at most `limit` bytes; more is an error (the reader is not drained past `limit + 1`).
pub(crate) fn read_limited(reader: impl Read, limit: u64) -> Result<Vec<u8>, String> {
    agentio_core::limits::read_limited(reader, limit).map_err(|err| err.to_string())
}

fn open_dir(dir: &Dir, path: &str) -> Found<Dir> {
    let normal =
        normalize_file(path).map_err(|err| (FailCode::EvidenceInvalid, err.to_string()))?;
    dir.open_dir(&normal).map_err(open_error)
}

fn open_error(err: std::io::Error) -> (FailCode, String) {
    match err.kind() {
        std::io::ErrorKind::NotFound => (FailCode::EvidenceMissing, "does not exist".to_owned()),
        // cap-std refuses a path (a symlink included) that would resolve outside the
        // workspace with `PermissionDenied`.
        std::io::ErrorKind::PermissionDenied => (
            FailCode::EvidenceInvalid,
            "cannot be read inside the workspace (it leads outside it, or access is denied)"
                .to_owned(),
        ),
        std::io::ErrorKind::NotADirectory => {
            (FailCode::EvidenceInvalid, "not a directory".to_owned())
        }
        _ => (FailCode::EvidenceInvalid, err.to_string()),
    }
}

/// The last non-empty line of the log must be `EXIT_CODE=<int>`, equal to `exit_code`.
fn exit_code_agrees(log: &[u8], exit_code: i64) -> Found<()> {
    let text = String::from_utf8_lossy(log);
    let last = text.lines().rev().find(|line| !line.trim().is_empty());
    let Some(value) = last.and_then(|line| line.trim().strip_prefix("EXIT_CODE=")) else {
        return Err((
            FailCode::EvidenceInvalid,
            "its last line is not `EXIT_CODE=<int>`".to_owned(),
        ));
    };
    match value.parse::<i64>() {
        Ok(logged) if logged == exit_code => Ok(()),
        Ok(logged) => Err((
            FailCode::EvidenceInvalid,
            format!("it ends with EXIT_CODE={logged}, but the submission says {exit_code}"),
        )),
        Err(_) => Err((
            FailCode::EvidenceInvalid,
            format!("`EXIT_CODE={}` is not an integer", clip(value)),
        )),
    }
}

fn clip(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// An instant as RFC 3339 in UTC, to the second (`2026-11-23T03:35:42Z`).
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// let at = UNIX_EPOCH + Duration::from_secs(1_795_405_542);
/// assert_eq!(agentio_promptos::gateway::rfc3339(at), "2026-11-23T03:45:42Z");
/// ```
pub fn rfc3339(at: SystemTime) -> String {
    let secs = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_link_resolves_inside_the_workspace_or_not_at_all() {
        assert_eq!(resolve_link("a/b/link", "c").as_deref(), Some("a/b/c"));
        assert_eq!(resolve_link("a/b/link", "../c").as_deref(), Some("a/c"));
        assert_eq!(resolve_link("a/link", "./c/./d").as_deref(), Some("a/c/d"));
        // Absolute, empty, or climbing out: nowhere in the workspace.
        assert_eq!(resolve_link("a/link", "/etc/passwd"), None);
        assert_eq!(resolve_link("a/link", ""), None);
        assert_eq!(resolve_link("a/link", "../../x"), None);
        assert_eq!(resolve_link("link", "../x"), None);
    }

    #[test]
    fn reads_are_bounded_exactly_at_the_limit() {
        assert_eq!(read_limited(&b"0123456789"[..], 10).unwrap().len(), 10);
        assert_eq!(
            read_limited(&b"0123456789a"[..], 10).unwrap_err(),
            "larger than 10 bytes"
        );
        assert_eq!(read_limited(&b""[..], 0).unwrap(), b"");
        assert!(read_limited(&b"x"[..], 0).is_err());
        assert!(read_limited(&b"x"[..], u64::MAX).is_ok());
    }

    #[test]
    fn a_verdict_lists_at_most_max_messages_and_counts_the_rest() {
        let failures = |n: usize| -> Vec<(FailCode, String)> {
            (0..n)
                .map(|i| (FailCode::ScopeConflict, format!("m{i}")))
                .collect()
        };
        let bounded = |n: usize| {
            let mut listed = failures(n);
            bound(&mut listed);
            messages(&listed)
        };
        assert_eq!(bounded(MAX_MESSAGES).len(), MAX_MESSAGES);
        let over = bounded(MAX_MESSAGES + 1);
        assert_eq!(over.len(), MAX_MESSAGES + 1);
        assert_eq!(over[MAX_MESSAGES - 1], format!("m{}", MAX_MESSAGES - 1));
        assert_eq!(over[MAX_MESSAGES], "... and 1 more");
        assert!(bounded(0).is_empty());
        // Each message is cut to its bound.
        let mut long = vec![(FailCode::ScopeConflict, "é".repeat(MAX_MESSAGE_BYTES))];
        bound(&mut long);
        assert!(long[0].0 == FailCode::ScopeConflict && long[0].1.len() <= MAX_MESSAGE_BYTES + 3);
        assert!(long[0].1.ends_with('…'));
    }

    #[test]
    fn timestamps_are_rfc3339_in_utc() {
        let at = |secs: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(951_868_800), "2000-03-01T00:00:00Z");
        assert_eq!(at(946_684_799), "1999-12-31T23:59:59Z");
        assert_eq!(at(1_709_164_800), "2024-02-29T00:00:00Z");
        assert_eq!(at(4_107_542_400), "2100-03-01T00:00:00Z");
        assert_eq!(at(1_795_405_542), "2026-11-23T03:45:42Z");
        assert_eq!(at(86_399), "1970-01-01T23:59:59Z");
        assert_eq!(at(3_661), "1970-01-01T01:01:01Z");
        assert_eq!(at(253_402_300_799), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn long_texts_are_clipped_at_a_character_boundary() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(300);
        let clipped = clip(&long);
        assert_eq!(clipped.chars().count(), 201);
        assert!(clipped.ends_with('…'));
        assert_eq!(clip(&"x".repeat(200)), "x".repeat(200));
    }

    #[test]
    fn every_retry_reason_has_its_own_action() {
        let actions: Vec<&str> = [
            FailCode::SchemaViolation,
            FailCode::ScopeConflict,
            FailCode::CiFailed,
            FailCode::EvidenceMissing,
            FailCode::EvidenceInvalid,
            FailCode::MergeConflict,
        ]
        .into_iter()
        .map(action_for)
        .collect();
        assert!(actions[0].contains("scc.submit.v1"));
        assert!(actions[1].contains("pins"));
        assert!(actions[2].contains("tests pass"));
        assert!(actions[3].contains("write every artifact"));
        assert!(actions[4].contains("EXIT_CODE"));
        assert_eq!(actions[5], "retry the task");
    }

    #[test]
    fn an_invalid_task_is_reported_with_its_violations() {
        let err = parse_task(
            r#"{"task_id": "x", "goal": "g", "role": "r", "pins": {"allowed_paths": ["a"]}}"#,
        )
        .unwrap_err();
        let json = err.to_json();
        assert_eq!(json["violations"][0]["keyword"], "task_id_uuid");
        assert!(
            json["message"]
                .as_str()
                .unwrap()
                .contains("task input is invalid")
        );
    }
}
