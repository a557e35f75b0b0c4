//! The three documents of the PromptOS IO layer, as Rust types with their schemas.

use agentio_core::rules::Rules;
use agentio_core::{AgentInput, AgentOutput};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::scope::{Pin, Placement, Scope, normalize, normalize_file};

/// The output contract identifier a `submit.json` must carry.
pub const SUBMIT_SCHEMA_VERSION: &str = "scc.submit.v1";
/// The identifier of a verdict in the document's shape.
pub const VERDICT_SCHEMA_VERSION: &str = "scc.verdict.v1";

/// What an executor is asked to do (§1, "Task Input Schema").
///
/// Unknown fields are accepted (a newer producer may add some); the rules of §1 run after the
/// schema, through [`task_input`].
///
/// ```
/// use agentio_core::AgentInput;
/// use agentio_promptos::TaskInput;
/// let task = TaskInput::from_input_value(&serde_json::json!({
///     "task_id": "72c84e9c-0975-4c1a-b9a5-864c2725dc8a",
///     "goal": "Write the docs.",
///     "role": "executor",
///     "pins": { "allowed_paths": ["docs/"], "forbidden_paths": [] }
/// }))?;
/// assert_eq!(task.pins.allowed_paths, ["docs/"]);
/// # Ok::<(), agentio_core::AgentError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(validate = task_input)]
#[schemars(description = "What an executor is asked to do (PromptOS IO layer, task input).")]
pub struct TaskInput {
    /// Stable UUID for correlating all artifacts. (The canonical form is checked by the
    /// `task_id_uuid` rule, not by a `format`, which validators may ignore.)
    pub task_id: String,
    /// What the agent should accomplish, in words.
    pub goal: String,
    /// The execution policy profile ("executor", "reviewer", ...).
    pub role: String,
    /// Scope guardrails.
    pub pins: Pins,
    /// A hint list of the files the agent is expected to touch (for preflight and review).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Structured helper data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<TaskContext>,
}

/// Scope guardrails: what the agent may touch, and what it may not even then.
///
/// A pin with a glob character (`*`, `?`) is a glob (`*` one path segment or part of one, `?`
/// one character, `**` any number of segments); any other pin is a path that matches itself
/// and, as a directory, everything beneath it. See [`crate::scope`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(
    description = "Scope guardrails. A pin with `*` or `?` is a glob (`*` within one segment, `?` one character, `**` any number of segments); any other pin matches itself and everything beneath it. Forbidden wins over allowed."
)]
pub struct Pins {
    /// The only paths the agent may read or write.
    pub allowed_paths: Vec<String>,
    /// Paths disallowed even when they match `allowed_paths` (absent means none).
    #[serde(default)]
    pub forbidden_paths: Vec<String>,
}

/// Structured helper data of a task.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskContext {
    /// A precomputed repository map.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<Map<String, Value>>,
    /// Links or ids of documentation and prior decisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docs: Option<Map<String, Value>>,
    /// Prior attempts, failures, or important constraints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Map<String, Value>>,
}

/// An executor's `submit.json` (§2, `scc.submit.v1`).
///
/// The rules of §2 that need only the submission run after the schema
/// ([`submit`]); those that need the task too (the `task_id` matches, every path
/// is in scope) are the gateway's ([`crate::gateway`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(validate = submit)]
#[schemars(description = "An executor's submit.json (scc.submit.v1).")]
pub struct Submit {
    /// The output contract identifier: exactly `scc.submit.v1`.
    pub schema_version: String,
    /// The task this answers.
    pub task_id: String,
    /// How the attempt ended.
    pub status: Status,
    /// A machine-actionable failure reason: one of the fail codes (`CI_FAILED`, ...), by the
    /// specification's SHOULD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// Paths changed within the allowed scope.
    pub changed_files: Vec<String>,
    /// Paths created within the allowed scope.
    pub new_files: Vec<String>,
    /// What was run and how it went.
    pub tests: Tests,
    /// The evidence files of the task, relative to the workspace.
    pub artifacts: Artifacts,
    /// The executor's overall exit code.
    pub exit_code: i64,
    /// Concrete questions, when `status` is `NEED_INPUT`.
    pub needs_input: Vec<String>,
}

/// How an attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Work completed successfully.
    Done,
    /// Blocked: needs user or system input to proceed.
    NeedInput,
    /// The attempt completed but was unsuccessful.
    Failed,
}

/// What an executor ran to test its work.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tests {
    /// Commands the gateway could run again.
    pub commands: Vec<String>,
    /// The test verdict.
    pub passed: bool,
    /// In words.
    pub summary: String,
}

/// The evidence of a submission, as paths relative to the workspace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Artifacts {
    /// The report (a regular file).
    pub report_md: String,
    /// The self-test log (a regular file whose last line is `EXIT_CODE=<int>`).
    pub selftest_log: String,
    /// The evidence directory.
    pub evidence_dir: String,
    /// The patch, as a unified diff (a regular file).
    pub patch_diff: String,
    /// The submission itself (a regular file).
    pub submit_json: String,
}

impl Artifacts {
    /// Each artifact with its field name and whether it must be a directory.
    pub fn entries(&self) -> [(&'static str, &str, bool); 5] {
        [
            ("report_md", &self.report_md, false),
            ("selftest_log", &self.selftest_log, false),
            ("evidence_dir", &self.evidence_dir, true),
            ("patch_diff", &self.patch_diff, false),
            ("submit_json", &self.submit_json, false),
        ]
    }
}

/// The gateway's judgement in the document's shape (§3, `scc.verdict.v1`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema, AgentInput, AgentOutput)]
#[agent(validate = verdict)]
#[schemars(description = "The gateway's judgement of a submission (scc.verdict.v1).")]
pub struct Verdict {
    /// Exactly `scc.verdict.v1`.
    pub schema_version: String,
    /// The task judged.
    pub task_id: String,
    /// PASS when every check holds.
    pub verdict: Outcome,
    /// The first blocking failure, when the verdict is FAIL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<FailCode>,
    /// What the gateway found, in words, first the failures.
    pub messages: Vec<String>,
    /// Each check's outcome.
    pub checks: Checks,
    /// When the submission was made and judged.
    pub timestamps: Timestamps,
    /// Where the evidence is.
    pub links: Links,
}

/// PASS or FAIL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// Every check holds.
    Pass,
    /// At least one does not.
    Fail,
}

/// The four checks of a verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Checks {
    /// The task input and the submission match their schemas and rules, and each other.
    pub schema_valid: bool,
    /// Every changed and new file is in scope, and the patch touches exactly those.
    pub scope_valid: bool,
    /// The executor's tests passed.
    pub tests_passed: bool,
    /// Every artifact exists inside the workspace as named, and the log's exit code agrees.
    pub evidence_present: bool,
}

/// RFC 3339 instants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Timestamps {
    /// When `submit.json` was last written.
    #[schemars(extend("format" = "date-time"))]
    pub submitted_at: String,
    /// When the gateway judged it.
    #[schemars(extend("format" = "date-time"))]
    pub evaluated_at: String,
}

/// The evidence paths of a verdict (as the submission named them).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Links {
    /// The submission.
    pub submit_json: String,
    /// The report.
    pub report_md: String,
    /// The self-test log.
    pub selftest_log: String,
    /// The patch.
    pub patch_diff: String,
    /// The evidence directory.
    pub evidence_dir: String,
}

/// The machine-actionable failure reasons (`fail_codes.md`).
///
/// ```
/// use agentio_promptos::FailCode;
/// assert_eq!(serde_json::to_value(FailCode::ScopeConflict).unwrap(), "SCOPE_CONFLICT");
/// assert_eq!("CI_FAILED".parse::<FailCode>(), Ok(FailCode::CiFailed));
/// assert_eq!(FailCode::EvidenceMissing.to_string(), "EVIDENCE_MISSING");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(description = "A machine-actionable failure reason (fail_codes.md).")]
pub enum FailCode {
    /// A changed file is outside the pins, or the patch and the declared files disagree.
    ScopeConflict,
    /// The tests did not pass.
    CiFailed,
    /// A document does not match its schema or its rules.
    SchemaViolation,
    /// The pins do not cover what the task needs.
    PinsInsufficient,
    /// A policy forbids what was done.
    PolicyViolation,
    /// The budget ran out.
    BudgetExceeded,
    /// The time ran out.
    TimeoutExceeded,
    /// The executor itself failed.
    ExecutorError,
    /// A preflight check failed.
    PreflightFailed,
    /// A named file does not exist.
    FileNotFound,
    /// A file could not be read or written.
    PermissionDenied,
    /// The change does not apply cleanly.
    MergeConflict,
    /// A dependency is missing.
    DependencyMissing,
    /// Output is not in the required format.
    FormatViolation,
    /// An artifact is missing.
    EvidenceMissing,
    /// An artifact exists but is not what it claims (wrong kind, outside the workspace, a log
    /// whose exit code disagrees).
    EvidenceInvalid,
    /// The executor needs input to go on.
    NeedsClarification,
    /// The base changed under the task.
    UpstreamChanged,
}

impl FailCode {
    /// Every code, in the order of `fail_codes.md`.
    pub const ALL: [FailCode; 18] = [
        FailCode::ScopeConflict,
        FailCode::CiFailed,
        FailCode::SchemaViolation,
        FailCode::PinsInsufficient,
        FailCode::PolicyViolation,
        FailCode::BudgetExceeded,
        FailCode::TimeoutExceeded,
        FailCode::ExecutorError,
        FailCode::PreflightFailed,
        FailCode::FileNotFound,
        FailCode::PermissionDenied,
        FailCode::MergeConflict,
        FailCode::DependencyMissing,
        FailCode::FormatViolation,
        FailCode::EvidenceMissing,
        FailCode::EvidenceInvalid,
        FailCode::NeedsClarification,
        FailCode::UpstreamChanged,
    ];

    /// The code as written on the wire (`SCOPE_CONFLICT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FailCode::ScopeConflict => "SCOPE_CONFLICT",
            FailCode::CiFailed => "CI_FAILED",
            FailCode::SchemaViolation => "SCHEMA_VIOLATION",
            FailCode::PinsInsufficient => "PINS_INSUFFICIENT",
            FailCode::PolicyViolation => "POLICY_VIOLATION",
            FailCode::BudgetExceeded => "BUDGET_EXCEEDED",
            FailCode::TimeoutExceeded => "TIMEOUT_EXCEEDED",
            FailCode::ExecutorError => "EXECUTOR_ERROR",
            FailCode::PreflightFailed => "PREFLIGHT_FAILED",
            FailCode::FileNotFound => "FILE_NOT_FOUND",
            FailCode::PermissionDenied => "PERMISSION_DENIED",
            FailCode::MergeConflict => "MERGE_CONFLICT",
            FailCode::DependencyMissing => "DEPENDENCY_MISSING",
            FailCode::FormatViolation => "FORMAT_VIOLATION",
            FailCode::EvidenceMissing => "EVIDENCE_MISSING",
            FailCode::EvidenceInvalid => "EVIDENCE_INVALID",
            FailCode::NeedsClarification => "NEEDS_CLARIFICATION",
            FailCode::UpstreamChanged => "UPSTREAM_CHANGED",
        }
    }
}

impl std::fmt::Display for FailCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for FailCode {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        FailCode::ALL
            .into_iter()
            .find(|code| code.as_str() == text)
            .ok_or(())
    }
}

/// The verdict in the reference project's deployed shape: `DONE`, `RETRY` or `ESCALATE`, with
/// reasons and next actions. [`crate::gateway::Judgement::deployed`] maps a judgement to it:
/// a submission with `status = NEED_INPUT` is `ESCALATE`; every check passing is `DONE`;
/// anything else is `RETRY`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, AgentOutput)]
#[schemars(
    description = "The gateway's verdict in the deployed shape: DONE, RETRY or ESCALATE, with reasons and actions."
)]
pub struct DeployedVerdict {
    /// The task judged.
    pub task_id: String,
    /// What happens next.
    pub verdict: Decision,
    /// Why, most blocking first: a code and what the gateway found.
    pub reasons: Vec<Reason>,
    /// What the executor (or a person) should do next.
    pub actions: Vec<String>,
}

/// What happens to a task after judgement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// Accepted.
    Done,
    /// Another attempt should fix it.
    Retry,
    /// A person (or a stronger role) must decide.
    Escalate,
}

/// One reason of a deployed verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Reason {
    /// The failure code.
    pub code: FailCode,
    /// What was found.
    pub message: String,
}

// --- The rules a schema cannot say (see the table in `crate::rules`), beside their types ---

/// Whether `text` is a UUID in its canonical form: 8-4-4-4-12 hexadecimal digits.
///
/// ```
/// assert!(agentio_promptos::rules::is_uuid("72c84e9c-0975-4c1a-b9a5-864c2725dc8a"));
/// assert!(!agentio_promptos::rules::is_uuid("uuid"));
/// assert!(!agentio_promptos::rules::is_uuid("72c84e9c09754c1ab9a5864c2725dc8a"));
/// ```
pub fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The rules of §1 over a task input.
pub fn task_input(task: &TaskInput, rules: &mut Rules) {
    if !is_uuid(&task.task_id) {
        rules.error(
            "/task_id",
            "task_id_uuid",
            "`task_id` must be a UUID (8-4-4-4-12 hexadecimal digits)",
        );
    }
    let pins = &task.pins;
    if pins.allowed_paths.is_empty() {
        rules.error(
            "/pins/allowed_paths",
            "allowed_paths_non_empty",
            "`pins.allowed_paths` must name at least one path",
        );
    }
    let mut well_formed = true;
    for (list, pins) in [
        ("allowed_paths", &pins.allowed_paths),
        ("forbidden_paths", &pins.forbidden_paths),
    ] {
        for (i, pin) in pins.iter().enumerate() {
            if let Err(err) = Pin::parse(pin) {
                well_formed = false;
                rules.error(
                    format!("/pins/{list}/{i}"),
                    "pin_well_formed",
                    err.to_string(),
                );
            }
        }
    }
    for (j, forbidden) in pins.forbidden_paths.iter().enumerate() {
        let Ok(normal) = normalize(forbidden) else {
            continue;
        };
        let twin = pins
            .allowed_paths
            .iter()
            .any(|allowed| normalize(allowed).is_ok_and(|a| a == normal));
        if twin {
            rules.error(
                format!("/pins/forbidden_paths/{j}"),
                "allowed_and_forbidden",
                format!("`{forbidden}` is both allowed and forbidden"),
            );
        }
    }
    let scope = if well_formed {
        Scope::new(&pins.allowed_paths, &pins.forbidden_paths).ok()
    } else {
        None
    };
    for (i, file) in task.files.iter().enumerate() {
        let pointer = format!("/files/{i}");
        match (normalize_file(file), &scope) {
            (Err(err), _) => rules.error(pointer, "path_well_formed", err.to_string()),
            (Ok(_), Some(scope)) => match scope.place(file) {
                Ok(Placement::Allowed) => {}
                Ok(Placement::Forbidden(pin)) => rules.warning(
                    pointer,
                    "files_in_scope",
                    format!("`{file}` is forbidden by the pin `{pin}`"),
                ),
                Ok(Placement::Outside) | Err(_) => rules.warning(
                    pointer,
                    "files_in_scope",
                    format!("`{file}` is not within `pins.allowed_paths`"),
                ),
            },
            (Ok(_), None) => {}
        }
    }
}

/// The rules of §2 that need only the submission.
pub fn submit(submit: &Submit, rules: &mut Rules) {
    if submit.schema_version != SUBMIT_SCHEMA_VERSION {
        rules.error(
            "/schema_version",
            "schema_version",
            format!("`schema_version` must be `{SUBMIT_SCHEMA_VERSION}`"),
        );
    }
    if submit.status == Status::Done && submit.exit_code != 0 {
        rules.error(
            "/exit_code",
            "done_exit_code",
            "a submission with `status = DONE` must have `exit_code = 0`",
        );
    }
    if !submit.tests.passed {
        if submit.status != Status::Failed {
            rules.warning(
                "/status",
                "failed_tests_status",
                "tests did not pass: `status` should be `FAILED`",
            );
        }
        if submit.reason_code.as_deref() != Some(FailCode::CiFailed.as_str()) {
            rules.warning(
                "/reason_code",
                "failed_tests_reason",
                "tests did not pass: `reason_code` should be `CI_FAILED`",
            );
        }
    }
    if submit.status == Status::NeedInput && submit.needs_input.is_empty() {
        rules.error(
            "/needs_input",
            "needs_input_present",
            "a submission with `status = NEED_INPUT` must list what it needs",
        );
    }
    if let Some(code) = &submit.reason_code
        && code.parse::<FailCode>().is_err()
    {
        rules.warning(
            "/reason_code",
            "reason_code_known",
            format!("`{code}` is not a code of fail_codes.md"),
        );
    }
    for (list, paths) in [
        ("changed_files", &submit.changed_files),
        ("new_files", &submit.new_files),
    ] {
        for (i, path) in paths.iter().enumerate() {
            if let Err(err) = normalize_file(path) {
                rules.error(format!("/{list}/{i}"), "path_well_formed", err.to_string());
            }
        }
    }
    for (name, path, _) in submit.artifacts.entries() {
        if let Err(err) = normalize_file(path) {
            rules.error(
                format!("/artifacts/{name}"),
                "path_well_formed",
                err.to_string(),
            );
        }
    }
}

/// The rules of §3 over a verdict.
pub fn verdict(verdict: &Verdict, rules: &mut Rules) {
    if verdict.schema_version != VERDICT_SCHEMA_VERSION {
        rules.error(
            "/schema_version",
            "schema_version",
            format!("`schema_version` must be `{VERDICT_SCHEMA_VERSION}`"),
        );
    }
    let checks = verdict.checks;
    let all =
        checks.schema_valid && checks.scope_valid && checks.tests_passed && checks.evidence_present;
    let pass = verdict.verdict == Outcome::Pass;
    if pass && (!all || verdict.reason_code.is_some()) {
        rules.error(
            "/verdict",
            "verdict_matches_checks",
            "a PASS verdict needs every check to hold and no reason code",
        );
    }
    if !pass && verdict.reason_code.is_none() {
        rules.warning(
            "/reason_code",
            "reason_code_known",
            "a FAIL verdict should name its reason code",
        );
    }
}
