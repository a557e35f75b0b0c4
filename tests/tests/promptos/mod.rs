//! The PromptOS IO layer: the document's clauses (see the clause table in agentio-promptos's crate
//! documentation), the gateway's checks and verdicts, and the command.

mod hostile;

use std::path::Path;

use agentio_core::{AgentInput, AgentOutput, ErrorCode, rules::Rules};
use agentio_promptos::gateway::{Judgement, Unusable, judge, parse_task};
use agentio_promptos::{
    Decision, FailCode, Outcome, Status, Submit, TaskInput, Verdict, cli, rules,
};
use serde_json::{Value, json};

/// The task input example of the document, verbatim: its `files` array is closed with `}`.
const DOCUMENT_EXAMPLE: &str = r#"{
  "task_id": "72c84e9c-0975-4c1a-b9a5-864c2725dc8a",
  "goal": "Create IO layer documentation for schemas, fail codes, and evidence.",
  "role": "executor",
  "pins": {
    "allowed_paths": ["docs/prompt_os/io/"],
    "forbidden_paths": []
  },
  "files": [
    "docs/prompt_os/io/schemas.md",
    "docs/prompt_os/io/fail_codes.md",
    "docs/prompt_os/io/evidence_spec.md"
  },
  "context": {
    "map": {},
    "docs": {},
    "history": {}
  }
}"#;

pub(crate) const TASK_ID: &str = "72c84e9c-0975-4c1a-b9a5-864c2725dc8a";

pub(crate) fn task() -> TaskInput {
    parse_task(&DOCUMENT_EXAMPLE.replacen("evidence_spec.md\"\n  }", "evidence_spec.md\"\n  ]", 1))
        .expect("the fixed example is a valid task")
}

fn keywords(err: &agentio_core::AgentError) -> Vec<(String, String)> {
    err.violations()
        .iter()
        .map(|v| (v.pointer.clone(), v.keyword.clone()))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

/// A workspace with an in-scope change and all its evidence; `submit` is what it declares.
pub(crate) struct Workspace {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) submit: Value,
}

pub(crate) const PATCH: &str = "\
diff --git a/docs/prompt_os/io/schemas.md b/docs/prompt_os/io/schemas.md
--- a/docs/prompt_os/io/schemas.md
+++ b/docs/prompt_os/io/schemas.md
@@ -1,2 +1,2 @@
 # Schemas
-old
+new
diff --git a/docs/prompt_os/io/fail_codes.md b/docs/prompt_os/io/fail_codes.md
new file mode 100644
--- /dev/null
+++ b/docs/prompt_os/io/fail_codes.md
@@ -0,0 +1,2 @@
+# Fail codes
+--- a/not/a/header (content, inside the hunk)
";

impl Workspace {
    pub(crate) fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("docs/prompt_os/io/schemas.md", "# Schemas\nnew\n"),
            (
                "docs/prompt_os/io/fail_codes.md",
                "# Fail codes\n--- a/not/a/header (content, inside the hunk)\n",
            ),
            ("evidence/report.md", "# Report\nAll done.\n"),
            ("evidence/selftest.log", "running...\nok\nEXIT_CODE=0\n"),
            ("evidence/patch.diff", PATCH),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        let submit = json!({
            "schema_version": "scc.submit.v1",
            "task_id": TASK_ID,
            "status": "DONE",
            "changed_files": ["docs/prompt_os/io/schemas.md"],
            "new_files": ["docs/prompt_os/io/fail_codes.md"],
            "tests": { "commands": ["cargo test"], "passed": true, "summary": "12 passed" },
            "artifacts": {
                "report_md": "evidence/report.md",
                "selftest_log": "evidence/selftest.log",
                "evidence_dir": "evidence",
                "patch_diff": "evidence/patch.diff",
                "submit_json": "evidence/submit.json"
            },
            "exit_code": 0,
            "needs_input": []
        });
        let workspace = Workspace { dir, submit };
        workspace.write_submit();
        workspace
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn write(&self, path: &str, text: &str) {
        let full = self.root().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    pub(crate) fn write_submit(&self) {
        self.write(
            "evidence/submit.json",
            &serde_json::to_string_pretty(&self.submit).unwrap(),
        );
    }

    pub(crate) fn judge(&self) -> Judgement {
        self.write_submit();
        judge(&task(), &self.submit.to_string(), self.root(), None).unwrap()
    }
}

pub(crate) fn codes(judgement: &Judgement) -> Vec<FailCode> {
    judgement.failures.iter().map(|(code, _)| *code).collect()
}

#[test]
fn the_documents_example_task_is_malformed_json_and_the_parser_says_where() {
    let Err(Unusable::TaskNotJson { line, column, .. }) = parse_task(DOCUMENT_EXAMPLE) else {
        panic!("the document's example is not JSON");
    };
    // The `}` that closes the `files` array, on line 13.
    assert_eq!((line, column), (13, 3));
    let rendered = Unusable::TaskNotJson {
        line,
        column,
        message: String::new(),
    }
    .to_json();
    assert_eq!(rendered["line"], 13);
    assert_eq!(rendered["error"], "unusable_input");
}

#[test]
fn the_documents_example_task_is_a_valid_task_once_its_bracket_is_fixed() {
    let task = task();
    assert_eq!(task.pins.allowed_paths, ["docs/prompt_os/io/"]);
    assert_eq!(task.files.len(), 3);
    assert!(task.context.is_some());
    // Optional fields may be left out.
    let minimal = json!({
        "task_id": TASK_ID, "goal": "g", "role": "reviewer",
        "pins": { "allowed_paths": ["docs/"] }
    });
    let task = TaskInput::from_input_value(&minimal).unwrap();
    assert!(
        task.files.is_empty() && task.context.is_none() && task.pins.forbidden_paths.is_empty()
    );
    // A task input round-trips through its own output form.
    let value = task.to_output_value().unwrap();
    assert_eq!(TaskInput::from_input_value(&value).unwrap(), task);
}

#[test]
fn task_input_requires_its_fields() {
    for field in ["task_id", "goal", "role", "pins"] {
        let mut value = task().to_output_value().unwrap();
        value.as_object_mut().unwrap().remove(field);
        let err = TaskInput::validate_input(&value).unwrap_err();
        assert_eq!(
            keywords(&err),
            pairs(&[(&format!("/{field}"), "required")]),
            "{field}"
        );
    }
    let err = TaskInput::validate_input(&json!({
        "task_id": TASK_ID, "goal": "g", "role": "r", "pins": { "forbidden_paths": [] }
    }))
    .unwrap_err();
    assert_eq!(
        keywords(&err),
        pairs(&[("/pins/allowed_paths", "required")])
    );
}

#[test]
fn task_rules_are_reported_with_pointers() {
    let err = TaskInput::validate_input(&json!({
        "task_id": "uuid",
        "goal": "g",
        "role": "executor",
        "pins": { "allowed_paths": [], "forbidden_paths": ["docs/", "../etc"] },
        "files": ["/etc/passwd"]
    }))
    .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::InputInvalid);
    assert_eq!(
        keywords(&err),
        pairs(&[
            ("/task_id", "task_id_uuid"),
            ("/pins/allowed_paths", "allowed_paths_non_empty"),
            ("/pins/forbidden_paths/1", "pin_well_formed"),
            ("/files/0", "path_well_formed"),
        ])
    );
    // The same path in both lists, written two ways.
    let err = TaskInput::validate_input(&json!({
        "task_id": TASK_ID, "goal": "g", "role": "executor",
        "pins": { "allowed_paths": ["docs/io/"], "forbidden_paths": ["./docs//io"] }
    }))
    .unwrap_err();
    assert_eq!(
        keywords(&err),
        pairs(&[("/pins/forbidden_paths/0", "allowed_and_forbidden")])
    );
    // The gateway refuses such a task as unusable input.
    let text = json!({
        "task_id": "nope", "goal": "g", "role": "executor",
        "pins": { "allowed_paths": ["docs/"] }
    })
    .to_string();
    assert!(matches!(parse_task(&text), Err(Unusable::TaskInvalid(_))));
}

#[test]
fn a_file_outside_the_pins_is_a_warning_not_an_error() {
    let value = json!({
        "task_id": TASK_ID, "goal": "g", "role": "executor",
        "pins": { "allowed_paths": ["docs/"], "forbidden_paths": ["docs/secret"] },
        "files": ["docs/a.md", "src/lib.rs", "docs/secret/key.md"]
    });
    let task = TaskInput::from_input_value(&value).expect("a SHOULD does not fail");
    let mut found = Rules::new();
    rules::task_input(&task, &mut found);
    assert!(found.errors().is_empty());
    let warned: Vec<_> = found
        .warnings()
        .iter()
        .map(|w| (w.pointer.as_str(), w.keyword.as_str()))
        .collect();
    assert_eq!(
        warned,
        [
            ("/files/1", "files_in_scope"),
            ("/files/2", "files_in_scope")
        ]
    );
    assert!(found.warnings()[1].message.contains("forbidden"));
}

#[test]
fn submit_requires_its_fields() {
    let workspace = Workspace::new();
    let full = workspace.submit.clone();
    assert!(Submit::validate_input(&full).is_ok());
    for field in [
        "schema_version",
        "task_id",
        "status",
        "changed_files",
        "new_files",
        "tests",
        "artifacts",
        "exit_code",
        "needs_input",
    ] {
        let mut value = full.clone();
        value.as_object_mut().unwrap().remove(field);
        let err = Submit::validate_input(&value).unwrap_err();
        assert_eq!(
            keywords(&err),
            pairs(&[(&format!("/{field}"), "required")]),
            "{field}"
        );
    }
    let mut value = full.clone();
    value.as_object_mut().unwrap().remove("reason_code");
    assert!(
        Submit::validate_input(&value).is_ok(),
        "reason_code is optional"
    );
    let mut value = full;
    value["status"] = json!("MAYBE");
    assert!(Submit::validate_input(&value).is_err());
}

#[test]
fn submit_rules_are_reported_with_pointers() {
    let mut value = Workspace::new().submit;
    value["schema_version"] = json!("scc.submit.v2");
    value["exit_code"] = json!(3);
    value["changed_files"] = json!(["docs/../../etc/passwd"]);
    let err = Submit::validate_input(&value).unwrap_err();
    assert_eq!(
        keywords(&err),
        pairs(&[
            ("/schema_version", "schema_version"),
            ("/exit_code", "done_exit_code"),
            ("/changed_files/0", "path_well_formed"),
        ])
    );
    let mut value = Workspace::new().submit;
    value["status"] = json!("NEED_INPUT");
    value["exit_code"] = json!(4);
    let err = Submit::validate_input(&value).unwrap_err();
    assert_eq!(
        keywords(&err),
        pairs(&[("/needs_input", "needs_input_present")])
    );
    value["needs_input"] = json!(["Which format?"]);
    assert!(Submit::validate_input(&value).is_ok());
}

#[test]
fn failed_tests_without_failed_status_are_warnings() {
    let mut value = Workspace::new().submit;
    value["tests"]["passed"] = json!(false);
    value["reason_code"] = json!("FLAKY");
    let submit = Submit::from_input_value(&value).expect("SHOULDs do not fail");
    let mut found = Rules::new();
    rules::submit(&submit, &mut found);
    let warned: Vec<_> = found
        .warnings()
        .iter()
        .map(|w| w.keyword.as_str())
        .collect();
    assert_eq!(
        warned,
        [
            "failed_tests_status",
            "failed_tests_reason",
            "reason_code_known"
        ]
    );
    // FAILED with CI_FAILED is what the document asks for: no warning.
    let mut value = value;
    value["status"] = json!("FAILED");
    value["reason_code"] = json!("CI_FAILED");
    value["exit_code"] = json!(1);
    let submit = Submit::from_input_value(&value).unwrap();
    let mut found = Rules::new();
    rules::submit(&submit, &mut found);
    assert!(found.warnings().is_empty() && found.errors().is_empty());
}

#[test]
fn an_in_scope_submission_passes_with_every_check() {
    let workspace = Workspace::new();
    let judgement = workspace.judge();
    assert_eq!(judgement.failures, []);
    let verdict = &judgement.verdict;
    assert_eq!(verdict.verdict, Outcome::Pass);
    assert_eq!(verdict.schema_version, "scc.verdict.v1");
    assert_eq!(verdict.task_id, TASK_ID);
    assert!(verdict.checks.schema_valid && verdict.checks.scope_valid);
    assert!(verdict.checks.tests_passed && verdict.checks.evidence_present);
    assert_eq!(verdict.reason_code, None);
    assert_eq!(verdict.links.patch_diff, "evidence/patch.diff");
    // The verdict is valid against its own schema and rules.
    let value = verdict.to_output_value().unwrap();
    Verdict::validate_output(&value).unwrap();
    assert!(
        value["timestamps"]["evaluated_at"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
}

#[test]
fn a_submission_for_another_task_fails_schema_valid() {
    let mut workspace = Workspace::new();
    workspace.submit["task_id"] = json!("00000000-0000-4000-8000-000000000000");
    let judgement = workspace.judge();
    assert!(!judgement.verdict.checks.schema_valid);
    assert_eq!(
        judgement.verdict.reason_code,
        Some(FailCode::SchemaViolation)
    );
    // The other checks still ran.
    assert!(judgement.verdict.checks.scope_valid && judgement.verdict.checks.evidence_present);
}

#[test]
fn a_change_outside_the_pins_is_a_scope_conflict() {
    let mut workspace = Workspace::new();
    workspace.submit["changed_files"] = json!(["docs/prompt_os/io/schemas.md", "README.md"]);
    let judgement = workspace.judge();
    assert!(!judgement.verdict.checks.scope_valid);
    assert_eq!(judgement.verdict.reason_code, Some(FailCode::ScopeConflict));
    let messages = judgement.verdict.messages.join("\n");
    assert!(messages.contains("`README.md` is outside"), "{messages}");
    // ... and the patch does not touch it either.
    assert!(
        messages.contains("declares `README.md`, which the patch does not touch"),
        "{messages}"
    );
}

#[test]
fn a_missing_artifact_is_evidence_missing() {
    let workspace = Workspace::new();
    std::fs::remove_file(workspace.root().join("evidence/report.md")).unwrap();
    let judgement = workspace.judge();
    assert!(!judgement.verdict.checks.evidence_present);
    assert!(judgement.verdict.checks.scope_valid);
    assert_eq!(codes(&judgement), [FailCode::EvidenceMissing]);
    // A missing directory artifact is missing too, not invalid.
    let mut workspace = Workspace::new();
    workspace.submit["artifacts"]["evidence_dir"] = json!("no-such-dir");
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::EvidenceMissing]);
    assert!(
        judgement.verdict.messages[0].ends_with("does not exist"),
        "{:?}",
        judgement.verdict.messages
    );
}

#[test]
fn the_first_failed_check_names_the_reason_code() {
    // Tests failed and evidence is missing: CI_FAILED comes first.
    let mut workspace = Workspace::new();
    workspace.submit["tests"]["passed"] = json!(false);
    workspace.submit["status"] = json!("FAILED");
    workspace.submit["exit_code"] = json!(1);
    workspace.write("evidence/selftest.log", "EXIT_CODE=1\n");
    std::fs::remove_file(workspace.root().join("evidence/report.md")).unwrap();
    let judgement = workspace.judge();
    assert_eq!(
        codes(&judgement),
        [FailCode::CiFailed, FailCode::EvidenceMissing]
    );
    assert_eq!(judgement.verdict.reason_code, Some(FailCode::CiFailed));
    // A scope conflict comes before both.
    workspace.submit["new_files"] = json!(["docs/prompt_os/io/fail_codes.md", "src/x.rs"]);
    let judgement = workspace.judge();
    assert_eq!(judgement.verdict.reason_code, Some(FailCode::ScopeConflict));
    // A submission that does not parse fails schema_valid and nothing else can be judged.
    let judgement = judge(&task(), "{ not json", workspace.root(), None).unwrap();
    assert_eq!(codes(&judgement), [FailCode::SchemaViolation]);
    assert_eq!(
        judgement.verdict.checks,
        agentio_promptos::Checks::default()
    );
    assert!(judgement.verdict.messages[0].contains("line 1"));
}

#[test]
fn deployed_verdicts_map_as_documented() {
    let workspace = Workspace::new();
    let deployed = workspace.judge().deployed();
    assert_eq!(deployed.verdict, Decision::Done);
    assert!(deployed.reasons.is_empty());

    let mut workspace = Workspace::new();
    workspace.submit["status"] = json!("NEED_INPUT");
    workspace.submit["exit_code"] = json!(2);
    workspace.write("evidence/selftest.log", "EXIT_CODE=2\n");
    workspace.submit["needs_input"] = json!(["Which fail codes are in scope?"]);
    let judgement = workspace.judge();
    assert_eq!(judgement.status, Some(Status::NeedInput));
    assert_eq!(
        judgement.verdict.reason_code,
        Some(FailCode::NeedsClarification)
    );
    let deployed = judgement.deployed();
    assert_eq!(deployed.verdict, Decision::Escalate);
    assert_eq!(deployed.reasons[0].code, FailCode::NeedsClarification);

    let mut workspace = Workspace::new();
    workspace.submit["changed_files"] = json!(["README.md"]);
    let deployed = workspace.judge().deployed();
    assert_eq!(deployed.verdict, Decision::Retry);
    assert_eq!(deployed.reasons[0].code, FailCode::ScopeConflict);
    assert!(!deployed.actions.is_empty());
    agentio_promptos::DeployedVerdict::validate_output(&serde_json::to_value(&deployed).unwrap())
        .unwrap();
}

#[test]
fn every_fail_code_round_trips() {
    for code in FailCode::ALL {
        let wire = serde_json::to_value(code).unwrap();
        assert_eq!(wire, code.as_str());
        assert_eq!(code.as_str().parse::<FailCode>(), Ok(code));
        assert_eq!(code.to_string(), code.as_str());
        assert_eq!(serde_json::from_value::<FailCode>(wire).unwrap(), code);
    }
    assert!("NOT_A_CODE".parse::<FailCode>().is_err());
}

#[test]
fn the_command_exits_0_on_pass_1_on_fail_2_on_unusable_input() {
    let workspace = Workspace::new();
    let task_file = workspace.root().join("task.json");
    std::fs::write(&task_file, serde_json::to_string(&task()).unwrap()).unwrap();
    let submit = workspace.root().join("evidence/submit.json");
    let verdict_file = workspace.root().join("verdict.json");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--task".to_owned(),
            task_file.display().to_string(),
            "--submit".to_owned(),
            submit.display().to_string(),
            "--workspace".to_owned(),
            workspace.root().display().to_string(),
        ];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    let mut out = Vec::new();
    let verdict_path = verdict_file.display().to_string();
    assert_eq!(cli::run(&args(&["--verdict", &verdict_path]), &mut out), 0);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(&verdict_file).unwrap()).unwrap();
    assert_eq!(written["verdict"], "PASS");
    assert_eq!(written, serde_json::from_slice::<Value>(&out).unwrap());
    // `submitted_at` is when submit.json was last written.
    let modified = std::fs::metadata(&submit).unwrap().modified().unwrap();
    assert_eq!(
        written["timestamps"]["submitted_at"],
        agentio_promptos::gateway::rfc3339(modified)
    );

    let mut out = Vec::new();
    assert_eq!(cli::run(&args(&["--format", "deployed"]), &mut out), 0);
    assert_eq!(
        serde_json::from_slice::<Value>(&out).unwrap()["verdict"],
        "DONE"
    );

    // A failing submission: exit 1.
    std::fs::write(&submit, "{}").unwrap();
    let mut out = Vec::new();
    assert_eq!(cli::run(&args(&[]), &mut out), 1);
    assert_eq!(
        serde_json::from_slice::<Value>(&out).unwrap()["reason_code"],
        "SCHEMA_VIOLATION"
    );

    // Unusable input: exit 2, said as JSON.
    std::fs::write(&task_file, "{ \"task_id\": ").unwrap();
    let mut out = Vec::new();
    assert_eq!(cli::run(&args(&[]), &mut out), 2);
    let said: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(said["error"], "unusable_input");
    assert_eq!(said["line"], 1);
    let mut out = Vec::new();
    assert_eq!(cli::run(&["--task".to_owned()], &mut out), 2);
    let mut out = Vec::new();
    assert_eq!(cli::run(&["--help".to_owned()], &mut out), 0);
    assert!(String::from_utf8(out).unwrap().contains("EXIT STATUS"));
    let mut out = Vec::new();
    let missing = vec![
        "--task".to_owned(),
        "/nonexistent/task.json".to_owned(),
        "--submit".to_owned(),
        "x".to_owned(),
        "--workspace".to_owned(),
        "y".to_owned(),
    ];
    assert_eq!(cli::run(&missing, &mut out), 2);
    // A directory given as the submission: unusable, said as JSON.
    let mut out = Vec::new();
    let dir_submit = vec![
        "--task".to_owned(),
        task_file.display().to_string(),
        "--submit".to_owned(),
        workspace.root().display().to_string(),
        "--workspace".to_owned(),
        workspace.root().display().to_string(),
    ];
    std::fs::write(&task_file, serde_json::to_string(&task()).unwrap()).unwrap();
    assert_eq!(cli::run(&dir_submit, &mut out), 2);
    let said: Value = serde_json::from_slice(&out).unwrap();
    assert!(
        said["message"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{said}"
    );
}

#[test]
fn a_workspace_that_is_not_a_directory_is_unusable() {
    let workspace = Workspace::new();
    let file = workspace.root().join("evidence/report.md");
    let err = judge(&task(), &workspace.submit.to_string(), &file, None).unwrap_err();
    assert!(matches!(err, Unusable::Workspace(_)));
}

#[test]
fn a_verdict_that_contradicts_its_checks_is_refused() {
    let judgement = Workspace::new().judge();
    let mut value = judgement.verdict.to_output_value().unwrap();
    value["checks"]["tests_passed"] = json!(false);
    let err = Verdict::validate_output(&value).unwrap_err();
    assert_eq!(
        keywords(&err),
        pairs(&[("/verdict", "verdict_matches_checks")])
    );
    assert_eq!(err.code(), &ErrorCode::OutputInvalid);
}
