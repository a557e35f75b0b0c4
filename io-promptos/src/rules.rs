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

pub use crate::types::{is_uuid, submit, task_input, verdict};

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
