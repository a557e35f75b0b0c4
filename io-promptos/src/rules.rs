//! The document's validation rules that a JSON Schema cannot express, as cross-field rules
//! ([`agentio_core::rules`]): they run wherever the types are validated. Each rule's name is the
//! violation's `keyword`.
//!
//! | Rule | Document | Kind |
//! |---|---|---|
//! | `task_id_uuid` | §1 `task_id` MUST be a UUID string | error |
//! | `allowed_paths_non_empty` | §1 `pins.allowed_paths` MUST be non-empty | error |
//! | `pin_well_formed` | a pin is a relative path (see [`crate::scope`]) | error |
//! | `allowed_and_forbidden` | §1 no path MAY appear in both lists | error |
//! | `path_well_formed` | every listed path is a relative path | error |
//! | `files_in_scope` | §1 `files` SHOULD be within `allowed_paths` | warning |
//! | `schema_version` | §2 MUST be `scc.submit.v1` (§3: `scc.verdict.v1`) | error |
//! | `done_exit_code` | §2 `status=DONE` implies `exit_code=0` | error |
//! | `failed_tests_status` | §2 `tests.passed=false`: `status` SHOULD be `FAILED` | warning |
//! | `failed_tests_reason` | §2 ... and `reason_code` SHOULD be `CI_FAILED` | warning |
//! | `needs_input_present` | §2 `needs_input` lists the questions when `NEED_INPUT` | error |
//! | `reason_code_known` | §3 `reason_code` SHOULD be a code of `fail_codes.md` | warning |
//! | `verdict_matches_checks` | §3 PASS exactly when every check holds | error |

use agentio_core::rules::Rules;

use crate::scope::{Pin, Placement, Scope, normalize, normalize_file};
use crate::types::{
    FailCode, Outcome, SUBMIT_SCHEMA_VERSION, Status, Submit, TaskInput, VERDICT_SCHEMA_VERSION,
    Verdict,
};

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

#[cfg(test)]
mod tests {
    use super::is_uuid;
    use crate::{Checks, Links, Outcome, Timestamps, Verdict};
    use agentio_core::rules::Rules;

    fn verdict(outcome: Outcome, all: bool, reason: Option<crate::FailCode>) -> Rules {
        let checks = Checks {
            schema_valid: true,
            scope_valid: true,
            tests_passed: all,
            evidence_present: true,
        };
        let verdict = Verdict {
            schema_version: "scc.verdict.v1".into(),
            task_id: "t".into(),
            verdict: outcome,
            reason_code: reason,
            messages: Vec::new(),
            checks,
            timestamps: Timestamps {
                submitted_at: "2026-01-01T00:00:00Z".into(),
                evaluated_at: "2026-01-01T00:00:00Z".into(),
            },
            links: Links::default(),
        };
        let mut rules = Rules::new();
        super::verdict(&verdict, &mut rules);
        rules
    }

    #[test]
    fn a_verdict_passes_exactly_when_every_check_holds() {
        let keywords = |rules: &Rules| -> (Vec<String>, Vec<String>) {
            (
                rules.errors().iter().map(|v| v.keyword.clone()).collect(),
                rules.warnings().iter().map(|v| v.keyword.clone()).collect(),
            )
        };
        let ci = Some(crate::FailCode::CiFailed);
        let none: Vec<String> = Vec::new();
        assert_eq!(
            keywords(&verdict(Outcome::Pass, true, None)),
            (none.clone(), none.clone())
        );
        assert_eq!(
            keywords(&verdict(Outcome::Pass, false, None)).0,
            ["verdict_matches_checks"]
        );
        assert_eq!(
            keywords(&verdict(Outcome::Pass, true, ci)).0,
            ["verdict_matches_checks"]
        );
        assert_eq!(
            keywords(&verdict(Outcome::Fail, false, ci)),
            (none.clone(), none.clone())
        );
        // A FAIL should name its reason: a warning, not an error.
        assert_eq!(
            keywords(&verdict(Outcome::Fail, false, None)),
            (none, vec!["reason_code_known".to_owned()])
        );
    }

    #[test]
    fn a_uuid_is_five_hexadecimal_groups_of_8_4_4_4_12() {
        assert!(is_uuid("72c84e9c-0975-4c1a-b9a5-864c2725dc8a"));
        assert!(is_uuid("72C84E9C-0975-4C1A-B9A5-864C2725DC8A"));
        for not in [
            "",
            "uuid",
            "72c84e9c-0975",
            "72c84e9c-0975-4c1a-b9a5",
            "72c84e9c-0975-4c1a-b9a5-864c2725dc8a-0000",
            "72c84e9c-0975-4c1a-b9a5-864c2725dc8z",
            "72c84e9c-0975-4c1a-b9a55-864c2725dc8",
            "72c84e9c09754c1ab9a5864c2725dc8a",
            "{72c84e9c-0975-4c1a-b9a5-864c2725dc8a}",
            "72c84e9c-0975-4c1a-b9a5-864c2725dc8é",
        ] {
            assert!(!is_uuid(not), "{not}");
        }
    }
}
