//! PromptOS: a small executor core (typed `TaskInput` in, `Submit` out) edits a file in a
//! temporary workspace and writes its evidence; the gateway judges it. Twice: once in scope
//! (PASS), once touching a forbidden file (FAIL, `SCOPE_CONFLICT`).
//!
//! Run it with `cargo run --example promptos_gateway`.

use std::path::{Path, PathBuf};

use agentio::core::{AgentContext, AgentCore, AgentError, AgentRuntime};
use agentio::promptos::gateway::{judge, parse_task};
use agentio::promptos::{Artifacts, Status, Submit, TaskInput, Tests};
use agentio::serde_json::json;

/// Edits the files it is told to and writes the evidence a gateway asks for.
struct DocsExecutor {
    workspace: PathBuf,
    /// Which files to edit (the task's `files` hint, or, to show a failure, others).
    edits: Vec<String>,
}

impl AgentCore for DocsExecutor {
    type Input = TaskInput;
    type Output = Submit;

    fn core_type(&self) -> &str {
        "executor"
    }

    async fn run_turn(
        &mut self,
        task: TaskInput,
        _ctx: &mut AgentContext,
    ) -> Result<Submit, AgentError> {
        let root = &self.workspace;
        let mut patch = String::new();
        let (mut changed, mut created) = (Vec::new(), Vec::new());
        for file in &self.edits {
            let path = root.join(file);
            let before = std::fs::read_to_string(&path).ok();
            let after = format!("# {file}\n\n{}\n", task.goal);
            write(&path, &after)?;
            let old = before.as_deref().map_or(0, |b| b.lines().count());
            let (from, list) = match &before {
                Some(_) => (format!("a/{file}"), &mut changed),
                None => ("/dev/null".to_owned(), &mut created),
            };
            patch += &format!(
                "diff --git a/{file} b/{file}\n--- {from}\n+++ b/{file}\n@@ -{},{old} +1,{} @@\n",
                usize::from(old > 0),
                after.lines().count()
            );
            for line in before.iter().flat_map(|b| b.lines()) {
                patch += &format!("-{line}\n");
            }
            for line in after.lines() {
                patch += &format!("+{line}\n");
            }
            list.push(file.clone());
        }
        write(&root.join("evidence/patch.diff"), &patch)?;
        write(
            &root.join("evidence/report.md"),
            "# Report\n\nDocs written.\n",
        )?;
        write(
            &root.join("evidence/selftest.log"),
            "markdown lint: ok\nEXIT_CODE=0\n",
        )?;
        let submit = Submit {
            schema_version: agentio::promptos::SUBMIT_SCHEMA_VERSION.to_owned(),
            task_id: task.task_id,
            status: Status::Done,
            reason_code: None,
            changed_files: changed,
            new_files: created,
            tests: Tests {
                commands: vec!["markdownlint docs".into()],
                passed: true,
                summary: "lint clean".into(),
            },
            artifacts: Artifacts {
                report_md: "evidence/report.md".into(),
                selftest_log: "evidence/selftest.log".into(),
                evidence_dir: "evidence".into(),
                patch_diff: "evidence/patch.diff".into(),
                submit_json: "evidence/submit.json".into(),
            },
            exit_code: 0,
            needs_input: Vec::new(),
        };
        write(
            &root.join("evidence/submit.json"),
            &agentio::serde_json::to_string_pretty(&submit)?,
        )?;
        Ok(submit)
    }
}

fn write(path: &Path, text: &str) -> Result<(), AgentError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| AgentError::from(e.to_string()))?;
    }
    std::fs::write(path, text).map_err(|e| AgentError::from(e.to_string()))
}

fn run(task: &TaskInput, edits: &[&str]) -> Result<(), Box<dyn std::error::Error>> {
    let workspace = tempfile_dir()?;
    write(
        &workspace.join("docs/prompt_os/io/schemas.md"),
        "# Schemas\n",
    )?;
    write(
        &workspace.join("docs/prompt_os/io/private/keys.md"),
        "secret\n",
    )?;
    let core = DocsExecutor {
        workspace: workspace.clone(),
        edits: edits.iter().map(|e| (*e).to_owned()).collect(),
    };
    // The runtime validates the task going in and the submission coming out (schema and rules).
    let mut runtime = AgentRuntime::new(core);
    let tokio = agentio::tokio::runtime::Builder::new_current_thread().build()?;
    let submit = tokio.block_on(runtime.run_turn(agentio::serde_json::to_value(task)?))?;
    let judgement = judge(task, &submit.to_string(), &workspace, None)?;
    println!("edits {edits:?}:");
    println!(
        "{}",
        agentio::serde_json::to_string_pretty(&judgement.verdict)?
    );
    println!(
        "deployed: {}\n",
        agentio::serde_json::to_string(&judgement.deployed())?
    );
    std::fs::remove_dir_all(&workspace)?;
    Ok(())
}

/// A fresh directory under the system's temporary directory.
fn tempfile_dir() -> std::io::Result<PathBuf> {
    let dir =
        std::env::temp_dir().join(format!("promptos-example-{}", agentio::core::new_run_id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let task = parse_task(
        &json!({
            "task_id": "72c84e9c-0975-4c1a-b9a5-864c2725dc8a",
            "goal": "Create IO layer documentation for schemas, fail codes, and evidence.",
            "role": "executor",
            "pins": {
                "allowed_paths": ["docs/prompt_os/io/"],
                "forbidden_paths": ["docs/prompt_os/io/private/"]
            },
            "files": ["docs/prompt_os/io/schemas.md", "docs/prompt_os/io/fail_codes.md"]
        })
        .to_string(),
    )?;
    // In scope: PASS.
    run(
        &task,
        &[
            "docs/prompt_os/io/schemas.md",
            "docs/prompt_os/io/fail_codes.md",
        ],
    )?;
    // Touching a forbidden file: FAIL with SCOPE_CONFLICT.
    run(
        &task,
        &[
            "docs/prompt_os/io/schemas.md",
            "docs/prompt_os/io/private/keys.md",
        ],
    )?;
    Ok(())
}
