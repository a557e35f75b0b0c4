//! Hostile submissions: each is a FAIL with the right code, and nothing outside the workspace
//! is read.

use agentio_promptos::FailCode;
use agentio_promptos::gateway::judge;
use serde_json::json;

use super::{Workspace, codes, task};

#[test]
fn a_parent_segment_in_a_changed_file_is_refused() {
    let mut workspace = Workspace::new();
    workspace.submit["changed_files"] = json!(["docs/prompt_os/io/../../../etc/passwd"]);
    let judgement = workspace.judge();
    // The path breaks the submission's own rules first.
    assert_eq!(
        judgement.verdict.reason_code,
        Some(FailCode::SchemaViolation)
    );
    assert!(!judgement.verdict.checks.schema_valid);
    assert!(judgement.verdict.messages[0].contains("`..`"));
}

#[test]
fn an_absolute_path_a_nul_or_a_backslash_is_refused_in_every_list() {
    for (list, path) in [
        ("changed_files", "/etc/passwd"),
        ("new_files", "docs/prompt_os/io/a\u{0}b"),
        ("changed_files", "docs\\prompt_os\\io\\schemas.md"),
    ] {
        let mut workspace = Workspace::new();
        workspace.submit[list] = json!([path]);
        let judgement = workspace.judge();
        assert_eq!(
            judgement.verdict.reason_code,
            Some(FailCode::SchemaViolation),
            "{path:?}"
        );
    }
    for artifact in ["/etc/passwd", "../outside.md", "evidence\\report.md"] {
        let mut workspace = Workspace::new();
        workspace.submit["artifacts"]["report_md"] = json!(artifact);
        let judgement = workspace.judge();
        assert_eq!(
            judgement.verdict.reason_code,
            Some(FailCode::SchemaViolation),
            "{artifact}"
        );
        assert!(!judgement.verdict.checks.schema_valid);
    }
}

#[test]
fn a_forbidden_file_is_a_scope_conflict_even_inside_an_allowed_directory() {
    let workspace = Workspace::new();
    let mut task = task();
    task.pins.forbidden_paths = vec!["docs/prompt_os/io/fail_codes.md".into()];
    workspace.write_submit();
    let judgement = judge(&task, &workspace.submit.to_string(), workspace.root(), None).unwrap();
    assert_eq!(codes(&judgement), [FailCode::ScopeConflict]);
    assert!(judgement.verdict.messages[0].contains("forbidden by the pin"));
}

#[test]
fn a_patch_touching_files_it_does_not_declare_is_a_scope_conflict() {
    let workspace = Workspace::new();
    let sneaky = format!(
        "{}diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml\n--- a/.github/workflows/ci.yml\n+++ b/.github/workflows/ci.yml\n@@ -1 +1 @@\n-a\n+b\n",
        super::PATCH
    );
    workspace.write("evidence/patch.diff", &sneaky);
    // The workspace holds the change, so that `git apply` finds the patch applies.
    workspace.write(".github/workflows/ci.yml", "b\n");
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::ScopeConflict]);
    assert!(judgement.verdict.messages[0].contains(".github/workflows/ci.yml"));
    // A patch that climbs out of the workspace.
    workspace.write(
        "evidence/patch.diff",
        &format!(
            "{}--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n",
            super::PATCH
        ),
    );
    let judgement = workspace.judge();
    assert_eq!(judgement.verdict.reason_code, Some(FailCode::ScopeConflict));
    assert!(
        judgement
            .verdict
            .messages
            .iter()
            .any(|m| m.contains("outside the workspace"))
    );
}

#[test]
fn a_binary_change_to_an_undeclared_file_is_a_scope_conflict() {
    let workspace = Workspace::new();
    workspace.write(
        "evidence/patch.diff",
        &format!(
            "{}diff --git a/bin/tool b/bin/tool\nindex 20b5be91886d0b6f26dc98a225c0dac05fe2c86e..0b41465af69d64d6cc3b8a86f0f78caa70eaf31b 100644\nGIT binary patch\nliteral 4\nLcmb<msH_4215g2M\n\nliteral 3\nKcmYdfNCE%>hycU@\n\n",
            super::PATCH
        ),
    );
    // A real binary patch (`git diff --binary`), the workspace holding its result.
    workspace.write("bin/tool", "x\u{0}yz");
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::ScopeConflict]);
    assert!(judgement.verdict.messages[0].contains("`bin/tool`"));
}

#[test]
fn a_log_without_its_exit_code_line_is_evidence_invalid() {
    for log in [
        "all good\n",
        "EXIT_CODE=0\ntrailing line\n",
        "EXIT_CODE=zero\n",
        "EXIT_CODE=1\n",
        "",
    ] {
        let workspace = Workspace::new();
        workspace.write("evidence/selftest.log", log);
        let judgement = workspace.judge();
        assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid], "{log:?}");
        assert!(!judgement.verdict.checks.evidence_present);
    }
    // Trailing blank lines after the exit code are fine.
    let workspace = Workspace::new();
    workspace.write("evidence/selftest.log", "x\nEXIT_CODE=0\n\n\n");
    assert!(workspace.judge().passed());
}

#[test]
fn an_artifact_of_the_wrong_kind_is_evidence_invalid() {
    let mut workspace = Workspace::new();
    workspace.submit["artifacts"]["evidence_dir"] = json!("evidence/report.md");
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid]);
    assert!(judgement.verdict.messages[0].ends_with("not a directory"));
    let mut workspace = Workspace::new();
    workspace.submit["artifacts"]["report_md"] = json!("evidence");
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid]);
    assert!(judgement.verdict.messages[0].ends_with("not a regular file"));
}

#[cfg(unix)]
#[test]
fn a_symlinked_artifact_pointing_out_of_the_workspace_is_never_read() {
    // Outside the workspace: a log that would pass, and a report.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("selftest.log"), "EXIT_CODE=0\n").unwrap();
    std::fs::write(outside.path().join("patch.diff"), super::PATCH).unwrap();
    for (artifact, target) in [
        ("evidence/selftest.log", outside.path().join("selftest.log")),
        ("evidence/patch.diff", outside.path().join("patch.diff")),
        (
            "evidence/report.md",
            std::path::PathBuf::from("/etc/passwd"),
        ),
    ] {
        let workspace = Workspace::new();
        std::fs::remove_file(workspace.root().join(artifact)).unwrap();
        std::os::unix::fs::symlink(&target, workspace.root().join(artifact)).unwrap();
        let judgement = workspace.judge();
        // Had the gateway followed the link, the copy outside would have passed.
        assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid], "{artifact}");
        assert!(
            judgement.verdict.messages[0].contains("leads outside"),
            "{:?}",
            judgement.verdict.messages
        );
        assert!(!judgement.verdict.checks.evidence_present);
    }
    // A symlinked directory on the way out, too.
    let workspace = Workspace::new();
    std::fs::create_dir(outside.path().join("ev")).unwrap();
    std::fs::write(outside.path().join("ev/selftest.log"), "EXIT_CODE=0\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("ev"), workspace.root().join("escape")).unwrap();
    let mut workspace = workspace;
    workspace.submit["artifacts"]["selftest_log"] = json!("escape/selftest.log");
    workspace.submit["artifacts"]["evidence_dir"] = json!("escape");
    let judgement = workspace.judge();
    assert_eq!(
        codes(&judgement),
        [FailCode::EvidenceInvalid, FailCode::EvidenceInvalid]
    );
    for message in &judgement.verdict.messages {
        assert!(message.contains("leads outside"), "{message}");
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_that_stays_inside_the_workspace_is_followed() {
    let workspace = Workspace::new();
    std::fs::rename(
        workspace.root().join("evidence/report.md"),
        workspace.root().join("evidence/real-report.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "real-report.md",
        workspace.root().join("evidence/report.md"),
    )
    .unwrap();
    assert!(workspace.judge().passed());
}

#[test]
fn huge_and_deep_submissions_get_an_answer() {
    let workspace = Workspace::new();
    let deep = "[".repeat(100_000);
    let judgement = judge(&task(), &deep, workspace.root(), None).unwrap();
    assert_eq!(codes(&judgement), [FailCode::SchemaViolation]);
    let mut submit = workspace.submit.clone();
    let outside: Vec<String> = (0..50_000).map(|i| format!("src/f{i}.rs")).collect();
    submit["changed_files"] = json!(outside);
    let judgement = judge(&task(), &submit.to_string(), workspace.root(), None).unwrap();
    assert_eq!(judgement.verdict.reason_code, Some(FailCode::ScopeConflict));
    // The verdict lists the first messages and counts the rest.
    let messages = &judgement.verdict.messages;
    assert_eq!(messages.len(), agentio_promptos::gateway::MAX_MESSAGES + 1);
    let rest: usize = messages
        .last()
        .and_then(|m| m.strip_prefix("... and "))
        .and_then(|m| m.strip_suffix(" more"))
        .and_then(|n| n.parse().ok())
        .expect("a count of the rest");
    assert!(rest >= 50_000 - agentio_promptos::gateway::MAX_MESSAGES);
    // The judgement the deployed verdict is built from is bounded the same way.
    assert_eq!(
        judgement.failures.len(),
        agentio_promptos::gateway::MAX_MESSAGES + 1
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_planted_as_an_artifact_is_refused_without_waiting_for_a_writer() {
    let workspace = Workspace::new();
    let log = workspace.root().join("evidence/selftest.log");
    std::fs::remove_file(&log).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&log)
        .status()
        .unwrap();
    assert!(made.success());
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid]);
    assert!(judgement.verdict.messages[0].contains("not a regular file"));
}

#[cfg(unix)]
#[test]
fn a_hard_link_to_a_file_outside_is_refused() {
    // A hard link leaves no trace but its link count: the file outside becomes readable
    // through a path inside the workspace.
    let outside = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let secret = outside.path().join("selftest.log");
    std::fs::write(&secret, "EXIT_CODE=0\n").unwrap();
    let workspace = Workspace::new();
    let log = workspace.root().join("evidence/selftest.log");
    std::fs::remove_file(&log).unwrap();
    // Both temporary folders are on one file system.
    std::fs::hard_link(&secret, &log).unwrap();
    let judgement = workspace.judge();
    assert_eq!(codes(&judgement), [FailCode::EvidenceInvalid]);
    assert!(
        judgement.verdict.messages[0].contains("hard link"),
        "{:?}",
        judgement.verdict.messages
    );
}

#[test]
fn a_hostile_glob_pin_and_a_hostile_path_are_refused_at_once() {
    // Matching a glob against a path takes time and memory growing with both lengths: a
    // 20 KB pin against a 20 KB path took 18 s and 400 MB before paths and pins were bounded.
    let workspace = Workspace::new();
    let mut submit = workspace.submit.clone();
    submit["changed_files"] = json!(["a".repeat(100_000)]);
    let judgement = judge(&task(), &submit.to_string(), workspace.root(), None).unwrap();
    assert_eq!(
        judgement.verdict.reason_code,
        Some(FailCode::SchemaViolation)
    );
    assert!(
        judgement.verdict.messages[0].ends_with("is longer than 1024 bytes"),
        "{:?}",
        judgement.verdict.messages
    );
    // The message quotes the path clipped, not whole.
    assert!(judgement.verdict.messages[0].len() < 1_000);

    let mut hostile = task();
    hostile
        .pins
        .allowed_paths
        .push(format!("{}x", "*a".repeat(50_000)));
    let refused = judge(
        &hostile,
        &workspace.submit.to_string(),
        workspace.root(),
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(refused.contains("is longer than 1024 bytes"), "{refused}");
    assert!(refused.len() < 2_000);
}

/// A workspace whose patch is `patch` (its files already written, as an executor leaves them)
/// and whose submission declares `new_files` as new.
fn with_patch(patch: &str, new_files: &[&str]) -> Workspace {
    let mut workspace = Workspace::new();
    workspace.write("evidence/patch.diff", patch);
    workspace.submit["changed_files"] = json!([]);
    workspace.submit["new_files"] = json!(new_files);
    workspace
}

fn assert_not_pass(workspace: &Workspace, expected: FailCode, needle: &str) {
    let judgement = workspace.judge();
    assert!(!judgement.passed(), "{:?}", judgement.verdict.messages);
    assert_eq!(
        judgement.verdict.reason_code,
        Some(expected),
        "{:?}",
        judgement.verdict.messages
    );
    assert!(
        judgement
            .verdict
            .messages
            .iter()
            .any(|m| m.contains(needle)),
        "`{needle}` in {:?}",
        judgement.verdict.messages
    );
}

const LINK_OUT: &str = "\
diff --git a/docs/prompt_os/io/link b/docs/prompt_os/io/link
new file mode 120000
--- /dev/null
+++ b/docs/prompt_os/io/link
@@ -0,0 +1 @@
+../../../../../etc/passwd
\\ No newline at end of file
";

#[test]
fn a_symlink_pointing_outside_the_workspace_or_the_pins_is_a_scope_conflict() {
    let workspace = with_patch(LINK_OUT, &["docs/prompt_os/io/link"]);
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        "../../../../../etc/passwd",
        workspace.root().join("docs/prompt_os/io/link"),
    )
    .unwrap();
    assert_not_pass(
        &workspace,
        FailCode::ScopeConflict,
        "leads outside the workspace",
    );

    // Inside the workspace, but outside the pins.
    let inside = LINK_OUT.replace("../../../../../etc/passwd", "../../../Cargo.toml");
    let workspace = with_patch(&inside, &["docs/prompt_os/io/link"]);
    assert_not_pass(
        &workspace,
        FailCode::ScopeConflict,
        "outside `pins.allowed_paths`",
    );

    // Within the pins: judged like any new file.
    let fine = LINK_OUT.replace("../../../../../etc/passwd", "schemas.md");
    let workspace = with_patch(&fine, &["docs/prompt_os/io/link"]);
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            "schemas.md",
            workspace.root().join("docs/prompt_os/io/link"),
        )
        .unwrap();
        let judgement = workspace.judge();
        assert!(judgement.passed(), "{:?}", judgement.verdict.messages);
    }
}

#[test]
fn a_copy_from_outside_the_pins_is_a_scope_conflict() {
    let patch = "\
diff --git a/secrets/token.txt b/docs/prompt_os/io/copy.md
similarity index 100%
copy from secrets/token.txt
copy to docs/prompt_os/io/copy.md
";
    let workspace = with_patch(patch, &["docs/prompt_os/io/copy.md"]);
    workspace.write("secrets/token.txt", "hunter2\n");
    workspace.write("docs/prompt_os/io/copy.md", "hunter2\n");
    assert_not_pass(
        &workspace,
        FailCode::ScopeConflict,
        "copies from `secrets/token.txt`",
    );
}

#[test]
fn a_diff_without_prefixes_is_judged_where_git_apply_writes_it() {
    // `--- docs/...` without `a/`: `git apply` strips `docs/` and writes `prompt_os/io/x.md`,
    // outside the pins, whatever the submission declares.
    let patch = "\
--- docs/prompt_os/io/x.md
+++ docs/prompt_os/io/x.md
@@ -1 +1 @@
-old
+new
";
    let mut workspace = with_patch(patch, &[]);
    workspace.submit["changed_files"] = json!(["docs/prompt_os/io/x.md"]);
    workspace.write("prompt_os/io/x.md", "new\n");
    assert_not_pass(&workspace, FailCode::ScopeConflict, "`prompt_os/io/x.md`");
}

#[test]
fn a_patch_git_apply_refuses_or_that_does_not_apply_is_never_a_pass() {
    for (patch, needle) in [
        ("this is not a patch\n", "refuses it"),
        (
            "diff --git a/docs/prompt_os/io/b.bin b/docs/prompt_os/io/b.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 3\nnot-base85!!\n\n",
            "refuses it",
        ),
        (
            // Well formed, but the workspace holds neither side of it.
            "--- a/docs/prompt_os/io/schemas.md\n+++ b/docs/prompt_os/io/schemas.md\n@@ -1 +1 @@\n-something else\n+entirely\n",
            "neither direction",
        ),
    ] {
        let mut workspace = Workspace::new();
        workspace.write("evidence/patch.diff", patch);
        let declared: Vec<&str> = if patch.contains("b.bin") {
            vec!["docs/prompt_os/io/b.bin"]
        } else {
            vec![]
        };
        workspace.submit["new_files"] = json!(declared);
        workspace.submit["changed_files"] = if patch.contains("schemas.md") {
            json!(["docs/prompt_os/io/schemas.md"])
        } else {
            json!([])
        };
        let judgement = workspace.judge();
        assert!(!judgement.passed(), "{patch}");
        assert!(!judgement.verdict.checks.evidence_present, "{patch}");
        assert!(
            judgement
                .verdict
                .messages
                .iter()
                .any(|m| m.contains(needle)),
            "`{needle}` in {:?}",
            judgement.verdict.messages
        );
    }
}

#[test]
fn a_huge_patch_gets_a_bounded_verdict_with_the_count_of_the_rest() {
    let mut patch = String::new();
    for i in 0..20_000 {
        patch.push_str(&format!(
            "diff --git a/x/{i}/{long} b/x/{i}/{long}\nnew file mode 100644\n--- /dev/null\n+++ b/x/{i}/{long}\n@@ -0,0 +1 @@\n+a\n",
            long = "n".repeat(200)
        ));
    }
    let mut workspace = with_patch(&patch, &[]);
    workspace.submit["tests"]["summary"] = json!("s".repeat(5 << 20));
    workspace.submit["tests"]["passed"] = json!(false);
    workspace.submit["needs_input"] = json!(["q".repeat(1 << 20)]);
    let judgement = workspace.judge();
    assert!(!judgement.passed());
    let messages = &judgement.verdict.messages;
    assert_eq!(messages.len(), 101);
    assert!(messages[100].starts_with("... and "), "{}", messages[100]);
    let whole = serde_json::to_string(&judgement.verdict).unwrap();
    assert!(whole.len() < 256 * 1024, "{}", whole.len());
    let deployed = serde_json::to_string(&judgement.deployed()).unwrap();
    assert!(deployed.len() < 256 * 1024, "{}", deployed.len());
}
