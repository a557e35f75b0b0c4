//! The PromptOS IO layer on agent-io: the task input an executor receives, the
//! `submit.json` (`scc.submit.v1`) it writes, and the verdict of the gateway that judges it
//! (`../shared/specs/promptos-io-schemas.md`), built with the library's own machinery: typed
//! documents with derived schemas, cross-field rules ([`agentio_core::rules`]), descriptor-relative
//! file access and structured errors.
//!
//! - [`TaskInput`], [`Submit`], [`Verdict`] (and the deployed [`DeployedVerdict`]) with their
//!   JSON Schemas, checked in under `schemas/` (a test fails when types and files drift).
//! - [`rules`]: every rule of the document a schema cannot say.
//! - [`scope`]: workspace-relative paths and the pins that allow or forbid them.
//! - [`gateway`]: the four checks and the verdict; the `promptos-gateway` command runs it.
//!
//! ```
//! use agentio_core::AgentInput;
//! use agentio_promptos::{Submit, TaskInput};
//! use serde_json::json;
//!
//! let err = TaskInput::validate_input(&json!({
//!     "task_id": "not-a-uuid", "goal": "g", "role": "executor",
//!     "pins": { "allowed_paths": ["docs/"], "forbidden_paths": ["docs/"] }
//! })).unwrap_err();
//! let rules: Vec<_> = err.violations().iter().map(|v| v.keyword.as_str()).collect();
//! assert_eq!(rules, ["task_id_uuid", "allowed_and_forbidden"]);
//! ```
//!
//! # Clauses and their tests
//!
//! Each clause of the document, and the test (in the workspace's `tests/tests/promptos/`
//! unless named) that holds it:
//!
//! | Clause | Test |
//! |---|---|
//! | §1 canonical shape; `task_id`, `goal`, `role`, `pins` required | `task_input_requires_its_fields` |
//! | §1 `files`, `context` optional | `the_documents_example_task_is_a_valid_task_once_its_bracket_is_fixed` |
//! | §1 `task_id` MUST be a UUID | `task_rules_are_reported_with_pointers` |
//! | §1 `allowed_paths` MUST be non-empty | `task_rules_are_reported_with_pointers` |
//! | §1 no path in both lists | `task_rules_are_reported_with_pointers` |
//! | §1 `files` SHOULD be within `allowed_paths` (warning) | `a_file_outside_the_pins_is_a_warning_not_an_error` |
//! | §1 the example (malformed JSON in the document) | `the_documents_example_task_is_malformed_json_and_the_parser_says_where` |
//! | §2 canonical shape, every field but `reason_code` required | `submit_requires_its_fields` |
//! | §2 `schema_version` MUST be `scc.submit.v1` | `submit_rules_are_reported_with_pointers` |
//! | §2 `task_id` must match the input's | `a_submission_for_another_task_fails_schema_valid` |
//! | §2 `status` is `DONE`, `NEED_INPUT` or `FAILED` | `submit_requires_its_fields` |
//! | §2 `DONE` implies `exit_code = 0` | `submit_rules_are_reported_with_pointers` |
//! | §2 failed tests: status `FAILED`, reason `CI_FAILED` (warnings) | `failed_tests_without_failed_status_are_warnings` |
//! | §2 `needs_input` lists questions when `NEED_INPUT` | `submit_rules_are_reported_with_pointers` |
//! | §2 changed and new files within pins, not forbidden | `hostile::*`, `a_change_outside_the_pins_is_a_scope_conflict` |
//! | §2 every artifact exists and is readable | `hostile::*`, `a_missing_artifact_is_evidence_missing` |
//! | §3 verdict shape, `PASS | FAIL`, `checks`, `timestamps`, `links` | `an_in_scope_submission_passes_with_every_check` |
//! | §3 `reason_code` maps to `fail_codes.md` | `every_fail_code_round_trips` |
//! | fail codes: the first blocking code per failed check | `the_first_failed_check_names_the_reason_code` |
//! | deployed verdict: NEED_INPUT → ESCALATE, pass → DONE, else RETRY | `deployed_verdicts_map_as_documented` |
//! | path scope: exact-or-prefix, globs, `..`/absolute/NUL/backslash refused, forbidden wins | `scope::tests::*` |
//! | schemas checked in match the types | `checked_in_schemas_match_the_types` |
//!
//! Decisions where the document is silent or loose, each tested: `forbidden_paths` may be
//! absent (none); unknown fields are accepted in every document; a `submit.json` that does not
//! parse is a FAIL (`SCHEMA_VIOLATION`), while a task input that does not is unusable input
//! (exit 2); `submitted_at` is the modification time of `submit.json`.

pub mod cli;
pub mod gateway;
mod git;
pub mod patch;
pub mod rules;
pub mod scope;
mod types;

pub use crate::types::{
    Artifacts, Checks, Decision, DeployedVerdict, FailCode, Links, Outcome, Pins, Reason,
    SUBMIT_SCHEMA_VERSION, Status, Submit, TaskContext, TaskInput, Tests, Timestamps,
    VERDICT_SCHEMA_VERSION, Verdict,
};

/// The checked-in schemas (`schemas/*.schema.json`): what other implementations read.
#[cfg(test)]
mod checked_in_schemas {
    use agentio_core::{AgentInput, AgentOutput};
    use serde_json::Value;

    use crate::{DeployedVerdict, Submit, TaskInput, Verdict};

    fn schemas() -> [(&'static str, &'static Value); 4] {
        [
            ("task_input", TaskInput::input_schema()),
            // What the gateway accepts as `submit.json`.
            ("submit", Submit::input_schema()),
            ("verdict", Verdict::output_schema()),
            ("deployed_verdict", DeployedVerdict::output_schema()),
        ]
    }

    /// Re-bless with `PROMPTOS_BLESS_SCHEMAS=1 cargo test -p agentio-promptos`, and read the diff.
    #[test]
    fn checked_in_schemas_match_the_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let bless = std::env::var_os("PROMPTOS_BLESS_SCHEMAS").is_some();
        for (name, schema) in schemas() {
            let path = dir.join(format!("{name}.schema.json"));
            let generated = serde_json::to_string_pretty(schema).unwrap() + "\n";
            if bless {
                std::fs::write(&path, &generated).unwrap();
                continue;
            }
            let checked_in = std::fs::read_to_string(&path)
                .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            assert!(
                checked_in == generated,
                "{} has drifted from the Rust types; re-bless with PROMPTOS_BLESS_SCHEMAS=1 and read the diff",
                path.display()
            );
        }
    }
}
