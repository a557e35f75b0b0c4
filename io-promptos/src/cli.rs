//! The command behind `promptos-gateway`: [`run`] takes the arguments and an output and returns
//! the exit status, so it is tested in-process.

use std::io::Write;
use std::path::PathBuf;

use crate::gateway::{Unusable, judge, parse_task};

const HELP: &str = "\
promptos-gateway: judge an executor's submit.json against its task and workspace

USAGE:
    promptos-gateway --task TASK.json --submit SUBMIT.json --workspace DIR
                     [--verdict OUT.json] [--format scc|deployed]

Checks schema_valid, scope_valid, tests_passed and evidence_present (see the agentio-promptos
crate documentation), prints the verdict as JSON and, with --verdict, writes it to OUT.json.

OPTIONS:
    --format scc       The document's verdict: PASS | FAIL, checks, messages, timestamps,
                       links (default).
    --format deployed  The deployed shape: DONE | RETRY | ESCALATE, reasons, actions.
    -h, --help         This text.

EXIT STATUS:
    0 pass, 1 fail, 2 unusable input (a task input that does not parse or is invalid, a
    workspace that is not a directory, a file that cannot be read, wrong usage).
";

/// Runs the command; returns its exit status.
pub fn run(args: &[String], out: &mut impl Write) -> u8 {
    match run_inner(args, out) {
        Ok(code) => code,
        Err(problem) => {
            let _ = writeln!(out, "{problem}");
            2
        }
    }
}

fn run_inner(args: &[String], out: &mut impl Write) -> Result<u8, serde_json::Value> {
    let mut task = None;
    let mut submit = None;
    let mut workspace = None;
    let mut verdict_out = None;
    let mut deployed = false;
    let mut rest = args.iter();
    let usage = |message: String| serde_json::json!({ "error": "usage", "message": message });
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| {
            rest.next()
                .cloned()
                .ok_or_else(|| usage(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "-h" | "--help" => {
                let _ = out.write_all(HELP.as_bytes());
                return Ok(0);
            }
            "--task" => task = Some(PathBuf::from(value("--task")?)),
            "--submit" => submit = Some(PathBuf::from(value("--submit")?)),
            "--workspace" => workspace = Some(PathBuf::from(value("--workspace")?)),
            "--verdict" => verdict_out = Some(PathBuf::from(value("--verdict")?)),
            "--format" => match value("--format")?.as_str() {
                "scc" => deployed = false,
                "deployed" => deployed = true,
                other => return Err(usage(format!("unknown format `{other}` (scc or deployed)"))),
            },
            other => return Err(usage(format!("unknown argument `{other}`; see --help"))),
        }
    }
    let (Some(task), Some(submit), Some(workspace)) = (task, submit, workspace) else {
        return Err(usage(
            "--task, --submit and --workspace are required; see --help".into(),
        ));
    };
    let unreadable = |path: &PathBuf, err: std::io::Error| {
        Unusable::Unreadable(format!("{} cannot be read: {err}", path.display())).to_json()
    };
    let task_text = read_bounded(&task).map_err(|err| unreadable(&task, err))?;
    let task = parse_task(&task_text).map_err(|err| err.to_json())?;
    let submit_text = read_bounded(&submit).map_err(|err| unreadable(&submit, err))?;
    let submitted_at = std::fs::metadata(&submit).and_then(|m| m.modified()).ok();
    let judgement =
        judge(&task, &submit_text, &workspace, submitted_at).map_err(|err| err.to_json())?;
    let rendered = if deployed {
        serde_json::to_value(judgement.deployed())
    } else {
        serde_json::to_value(&judgement.verdict)
    }
    .unwrap_or_default();
    let text = serde_json::to_string_pretty(&rendered).unwrap_or_default();
    if let Some(path) = verdict_out {
        std::fs::write(&path, format!("{text}\n")).map_err(|err| {
            Unusable::Unreadable(format!("{} cannot be written: {err}", path.display())).to_json()
        })?;
    }
    let _ = writeln!(out, "{text}");
    Ok(if judgement.passed() { 0 } else { 1 })
}

/// Reads a document the command was given: a regular file of at most
/// [`MAX_ARTIFACT_BYTES`](crate::gateway::MAX_ARTIFACT_BYTES), opened without blocking (a FIFO
/// is refused, not waited on), as UTF-8 ([`agentio_core::limits::read_file_bounded`]).
fn read_bounded(path: &std::path::Path) -> std::io::Result<String> {
    let bytes = agentio_core::limits::read_file_bounded(path, crate::gateway::MAX_ARTIFACT_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not UTF-8"))
}
