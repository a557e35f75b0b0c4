//! Durable runs: a run's process is killed (`SIGKILL`) at chosen transitions and the run is
//! reopened in a new process; every phase's side effect happens exactly once and the outputs
//! are those of an uninterrupted run. Then, in-process: what a reopened run does with an
//! interrupted phase that may not run twice, a rejected attempt, a changed workflow, and a
//! resumption that does not apply.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use agentio_workflow::journal::{Entry, Journal};
use agentio_workflow::{DurableError, Executor, Phase, PhaseProgress, TypeRef, Workflow};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_workflow-durable");

/// Runs one step of the child: to its end (its outcome) or, with `stop_at`, until it reports
/// the transition durable, then kills it with SIGKILL (`None`).
fn step(dir: &std::path::Path, mode: &str, stop_at: Option<&str>) -> Option<Value> {
    let mut command = Command::new(BIN);
    command
        .arg(dir.join("runs.redb"))
        .arg(dir.join("effects"))
        .arg(mode)
        .stdout(Stdio::piped());
    if let Some(at) = stop_at {
        command.arg(at);
    }
    let mut child = command.spawn().expect("the child starts");
    let stdout = child.stdout.take().expect("piped");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines
        .next()
        .expect("the child prints a line")
        .expect("readable");
    match stop_at {
        Some(at) => {
            assert_eq!(first, format!("STOPPED {at}"), "{mode} did not reach {at}");
            child.kill().expect("SIGKILL");
            let status = child.wait().expect("reaped");
            assert_eq!(status.signal(), Some(9), "killed by SIGKILL");
            None
        }
        None => {
            let status = child.wait().expect("reaped");
            assert!(status.success(), "{mode} ended with {status}: {first}");
            Some(serde_json::from_str(&first).expect("the outcome is JSON"))
        }
    }
}

/// How many times each phase's side effect happened (`effects`), or its agent ran
/// (`effects.runs`).
fn counted(dir: &std::path::Path, file: &str) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let phase = line.split(' ').next().unwrap_or_default();
        *counts.entry(phase.to_owned()).or_insert(0) += 1;
    }
    counts
}

fn effects(dir: &std::path::Path) -> BTreeMap<String, usize> {
    counted(dir, "effects")
}

/// The phases whose completion the journal holds (read while no process has it open).
fn recorded_completions(dir: &std::path::Path) -> Vec<String> {
    let journal = Journal::open(dir.join("runs.redb")).unwrap();
    let (_, entries) = journal.load("r1").unwrap();
    entries
        .iter()
        .filter(|e| e.kind() == "completed")
        .map(|e| e.phase().to_owned())
        .collect()
}

fn once_each() -> BTreeMap<String, usize> {
    ["approve", "fetch", "left", "publish", "right"]
        .into_iter()
        .map(|p| (p.to_owned(), 1))
        .collect()
}

/// The uninterrupted run: started, suspended at `approve`, resumed, completed.
fn reference() -> Value {
    let dir = tempfile::tempdir().unwrap();
    let suspended = step(dir.path(), "start", None).unwrap();
    assert_eq!(
        suspended["progress"]["suspended_phases"][0]["phase_name"],
        "approve"
    );
    assert_eq!(suspended["succeeded"], false);
    let done = step(dir.path(), "resume", None).unwrap();
    assert_eq!(done["succeeded"], true);
    assert_eq!(effects(dir.path()), once_each());
    done
}

/// Kills the run at each `(mode, KIND:PHASE)` in turn, then takes it to its end: reopening
/// while nothing is suspended, resuming `approve` once it is.
fn interrupted(kills: &[(&str, &str)]) -> (Value, BTreeMap<String, usize>) {
    let dir = tempfile::tempdir().unwrap();
    // Each phase recorded completed at a kill, with how many times its agent had run then.
    let mut completed_before_a_kill = Vec::new();
    for (mode, at) in kills {
        assert!(step(dir.path(), mode, Some(at)).is_none());
        let runs = counted(dir.path(), "effects.runs");
        for phase in recorded_completions(dir.path()) {
            let then = runs.get(&phase).copied().unwrap_or(0);
            completed_before_a_kill.push((phase, then));
        }
    }
    let mut outcome = step(dir.path(), "reopen", None).unwrap();
    if outcome["progress"]["suspended_phases"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
    {
        outcome = step(dir.path(), "resume", None).unwrap();
    }
    // A phase recorded completed is never run again; one killed between its side effect and
    // its recorded completion may be (its effect is not repeated: `effects` says so).
    let runs = counted(dir.path(), "effects.runs");
    for (phase, then) in &completed_before_a_kill {
        assert!(*then >= 1, "{kills:?}: {phase} completed without running");
        assert_eq!(
            runs[phase], *then,
            "{kills:?}: {phase} ran again after its completion was recorded"
        );
    }
    (outcome, effects(dir.path()))
}

#[test]
fn a_run_killed_at_each_transition_completes_with_each_side_effect_once_and_the_same_outputs() {
    let expected = reference();
    assert_eq!(expected["outputs"]["publish"]["total"], 31);
    let cases: &[&[(&str, &str)]] = &[
        // After a claim: `left` claimed, its agent not yet run.
        &[("start", "claimed:left")],
        // After a completion: `fetch` recorded, nothing downstream claimed.
        &[("start", "completed:fetch")],
        // After the first of two concurrent phases completed.
        &[("start", "completed:left")],
        // During a suspension: `approve` awaits its answer when the process dies.
        &[("start", "suspended:approve")],
        // After the resumption is recorded, before the resumed phase is claimed.
        &[
            ("start", "suspended:approve"),
            ("resume", "resumed:approve"),
        ],
        // After the resumed phase's claim, and after its completion.
        &[
            ("start", "suspended:approve"),
            ("resume", "claimed:approve"),
        ],
        &[
            ("start", "suspended:approve"),
            ("resume", "completed:approve"),
        ],
        // Killed twice: once before the suspension, once in the reopened process.
        &[("start", "completed:right"), ("reopen", "claimed:approve")],
        // The last phase claimed after the resumption.
        &[
            ("start", "suspended:approve"),
            ("resume", "claimed:publish"),
        ],
    ];
    for kills in cases {
        let (outcome, counts) = interrupted(kills);
        assert_eq!(outcome["succeeded"], true, "{kills:?}: {outcome}");
        assert_eq!(outcome["outputs"], expected["outputs"], "{kills:?}");
        assert_eq!(outcome["events"], expected["events"], "{kills:?}");
        assert_eq!(counts, once_each(), "{kills:?}: side effects");
    }
}

fn chain() -> Workflow {
    Workflow::new("chain")
        .with_phase(
            Phase::new("a", "A")
                .assign("a")
                .output("n", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("b", "B")
                .assign("b")
                .depends_on(["a"])
                .input("n", "a.n")
                .output("n", TypeRef::Integer),
        )
}

/// The chain with agents that answer `1` and `2`.
fn fixed_chain() -> Executor {
    Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
        .bind_fn("b", |_| async { Ok(json!({ "n": 2 })) })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// Starts the chain with a `b` whose agent never finishes, and stops the run there (the
/// future dropped: as far as the journal knows, the process died with `b` claimed).
fn interrupted_at_b(journal: &Journal) {
    let hanging = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
        .bind_fn("b", |_| std::future::pending());
    let rt = runtime();
    let stopped = rt.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(50),
            hanging.start(journal, "r1", json!({}), json!({})),
        )
        .await
    });
    assert!(
        stopped.is_err(),
        "the run is still going when it is stopped"
    );
    let (_, entries) = journal.load("r1").unwrap();
    assert_eq!(entries.last(), Some(&Entry::Claimed { phase: "b".into() }));
}

#[test]
fn an_interrupted_phase_is_offered_again_unless_it_may_run_only_once() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    interrupted_at_b(&journal);
    let runs = Arc::new(AtomicU32::new(0));
    let count = runs.clone();
    let executor = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 100 })) })
        .bind_fn("b", move |ctx| {
            count.fetch_add(1, Ordering::SeqCst);
            async move { Ok(json!({ "n": ctx.input["n"].as_i64().unwrap_or(0) + 1 })) }
        });
    let outcome = runtime().block_on(executor.reopen(&journal, "r1")).unwrap();
    assert!(outcome.succeeded());
    // `a` was recorded (n = 1) and is not run again; `b` ran once, on the recorded input.
    assert_eq!(outcome.outputs["a"]["n"], 1);
    assert_eq!(outcome.outputs["b"]["n"], 2);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    let kinds: Vec<&str> = journal
        .load("r1")
        .unwrap()
        .1
        .iter()
        .map(Entry::kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "claimed",
            "completed",
            "claimed",
            "released",
            "claimed",
            "completed"
        ]
    );

    // The same interruption, with `b` marked at most once: the run stops at it, named.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    interrupted_at_b(&journal);
    let never = Arc::new(AtomicU32::new(0));
    let count = never.clone();
    let executor = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
        .bind_fn("b", move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!({ "n": 2 })) }
        })
        .at_most_once("b");
    let outcome = runtime().block_on(executor.reopen(&journal, "r1")).unwrap();
    assert_eq!(never.load(Ordering::SeqCst), 0, "b is not run twice");
    assert_eq!(outcome.progress.failed, ["b"]);
    assert_eq!(
        outcome.events.last().unwrap()["error"],
        "PhaseInterruptedError"
    );
    assert_eq!(outcome.events.last().unwrap()["task_id"], "task_r1_b");
    // Reopened once more, the failure is recorded: nothing changes.
    let again = runtime().block_on(executor.reopen(&journal, "r1")).unwrap();
    assert_eq!(again.progress, outcome.progress);
    assert_eq!(again.events, outcome.events);
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentInput)]
struct Count {
    n: i64,
}
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, agentio_core::AgentOutput)]
struct Counted {
    n: i64,
}

/// Adds one; safe to run twice.
#[agentio_tools::tool(id = "math.increment", idempotent)]
async fn increment(input: Count) -> Result<Counted, agentio_tools::ToolError> {
    Ok(Counted { n: input.n + 1 })
}

/// Adds one, and its contract does not say it is safe to run twice.
#[agentio_tools::tool(id = "math.increment-once")]
async fn increment_once(input: Count) -> Result<Counted, agentio_tools::ToolError> {
    Ok(Counted { n: input.n + 1 })
}

#[test]
fn a_tool_phase_is_offered_again_only_when_its_contract_says_idempotent() {
    let registry =
        Arc::new(agentio_tools::tool_registry![IncrementTool, IncrementOnceTool].unwrap());
    for (tool, reran) in [("math.increment", true), ("math.increment-once", false)] {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
        interrupted_at_b(&journal);
        let executor = Executor::new(chain())
            .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
            .bind_tool("b", registry.clone(), tool);
        let outcome = runtime().block_on(executor.reopen(&journal, "r1")).unwrap();
        assert_eq!(outcome.succeeded(), reran, "{tool}");
        if reran {
            assert_eq!(outcome.outputs["b"]["n"], 2);
        } else {
            assert_eq!(outcome.progress.failed, ["b"]);
            assert_eq!(
                outcome.events.last().unwrap()["error"],
                "PhaseInterruptedError"
            );
        }
    }
}

#[test]
fn rejected_attempts_count_across_a_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    // `b` answers wrongly once, then the process stops while its second attempt works.
    let attempts = Arc::new(AtomicU32::new(0));
    let seen = attempts.clone();
    let first = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
        .bind_fn("b", move |_| {
            let attempt = seen.fetch_add(1, Ordering::SeqCst);
            async move {
                if attempt == 0 {
                    Ok(json!({ "n": "one" }))
                } else {
                    std::future::pending().await
                }
            }
        });
    let rt = runtime();
    let stopped = rt.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_millis(50),
            first.start(&journal, "r1", json!({}), json!({})),
        )
        .await
    });
    assert!(stopped.is_err());
    // Reopened with an agent that keeps answering wrongly: one attempt is left (of two).
    let wrong = Arc::new(AtomicU32::new(0));
    let count = wrong.clone();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let executor = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
        .bind_fn("b", move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!({ "n": "still not" })) }
        })
        .with_progress(move |event: &PhaseProgress| log.lock().unwrap().push(event.clone()));
    let outcome = rt.block_on(executor.reopen(&journal, "r1")).unwrap();
    assert_eq!(wrong.load(Ordering::SeqCst), 1);
    // The reopened run's attempt is the second, as the progress report says.
    assert_eq!(
        seen.lock().unwrap()[0],
        PhaseProgress::Started {
            phase: "b".into(),
            attempt: 2
        }
    );
    assert_eq!(outcome.progress.failed, ["b"]);
    let names: Vec<&str> = outcome
        .events
        .iter()
        .filter_map(|e| e["error"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "OutputTypeMismatchError",
            "OutputTypeMismatchError",
            "PhaseFailedError"
        ]
    );
}

#[test]
fn a_run_is_reopened_only_against_its_own_workflow_and_ids_are_not_reused() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    let executor = fixed_chain();
    let rt = runtime();
    rt.block_on(executor.start(&journal, "r1", json!({}), json!({})))
        .unwrap();
    let taken = rt
        .block_on(executor.start(&journal, "r1", json!({}), json!({})))
        .unwrap_err();
    assert!(
        matches!(&taken, DurableError::Journal(e) if e.name() == "RunExistsError"),
        "{taken}"
    );
    let unknown = rt.block_on(executor.reopen(&journal, "r2")).unwrap_err();
    assert!(matches!(&unknown, DurableError::Journal(e) if e.name() == "UnknownRunError"));

    // Another phase list: refused, naming both.
    let other = Executor::new(Workflow::new("chain").with_phase(Phase::new("a", "A").assign("a")))
        .bind_fn("a", |_| async { Ok(json!({})) });
    let mismatch = rt.block_on(other.reopen(&journal, "r1")).unwrap_err();
    assert!(
        mismatch.to_string().contains("'chain' (a, b)"),
        "{mismatch}"
    );
    assert!(mismatch.to_string().contains("'chain' (a)"), "{mismatch}");

    // The same phases with an output declared otherwise: the recorded completion of `a` no
    // longer applies, and the entry is named.
    let changed = Executor::new(
        Workflow::new("chain")
            .with_phase(
                Phase::new("a", "A")
                    .assign("a")
                    .output("n", TypeRef::String),
            )
            .with_phase(Phase::new("b", "B").assign("b").depends_on(["a"])),
    )
    .bind_fn("a", |_| async { Ok(json!({})) })
    .bind_fn("b", |_| async { Ok(json!({})) });
    let corrupt = rt.block_on(changed.reopen(&journal, "r1")).unwrap_err();
    match corrupt {
        DurableError::Journal(e) => {
            assert_eq!(e.name(), "CorruptJournalError");
            assert!(e.to_string().contains("entry 1"), "{e}");
        }
        other => panic!("{other}"),
    }

    // Resuming a phase that is not suspended is the run's named error.
    let refused = rt
        .block_on(executor.resume(&journal, "r1", "a", json!({})))
        .unwrap_err();
    assert!(matches!(&refused, DurableError::Run(e) if e.name() == "InvalidTransitionError"));
    // None of it wrote anything.
    assert_eq!(journal.load("r1").unwrap().1.len(), 4);
}

#[test]
fn a_journal_lists_its_runs_and_is_refused_to_a_second_opener() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.redb");
    let journal = Journal::open(&path).unwrap();
    let shown = format!("{journal:?}");
    assert!(
        shown.starts_with("Journal { path: ")
            && shown.contains("runs.redb")
            && shown.contains("Immediate"),
        "{shown}"
    );
    let executor = fixed_chain();
    let rt = runtime();
    for id in ["r2", "r1"] {
        rt.block_on(executor.start(&journal, id, json!({ "id": id }), json!({})))
            .unwrap();
    }
    let runs = journal.runs().unwrap();
    let ids: Vec<&str> = runs.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["r1", "r2"]);
    assert_eq!(runs[1].trigger, json!({ "id": "r2" }));
    assert_eq!(runs[0].phases, ["a", "b"]);
    let second = Journal::open(&path).unwrap_err();
    assert_eq!(second.name(), "JournalStoreError");
    drop(journal);
    let reopened = Journal::open(&path).unwrap();
    assert_eq!(reopened.runs().unwrap().len(), 2);
    // A file that is not a journal is a named error, not a panic.
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"not a database at all").unwrap();
    assert_eq!(
        Journal::open(&junk).unwrap_err().name(),
        "JournalStoreError"
    );
}

#[test]
fn the_in_memory_run_and_the_durable_run_agree() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    let executor = Executor::new(chain())
        .bind_fn("a", |_| async { Ok(json!({ "n": 1, "extra": null })) })
        .bind_fn("b", |ctx| async move {
            Ok(json!({ "n": ctx.input["n"].as_i64().unwrap_or(0) + 1 }))
        });
    let rt = runtime();
    let memory = rt
        .block_on(executor.run("r1", json!({}), json!({})))
        .unwrap();
    let durable = rt
        .block_on(executor.start(&journal, "r1", json!({}), json!({})))
        .unwrap();
    assert_eq!(memory.outputs, durable.outputs);
    assert_eq!(memory.progress, durable.progress);
    assert_eq!(memory.events, durable.events);
    let reopened = rt.block_on(executor.reopen(&journal, "r1")).unwrap();
    assert_eq!(reopened.outputs, durable.outputs);
}

fn cli(args: &[&str]) -> (u8, String) {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let mut out = Vec::new();
    let code = agentio_workflow::cli::run_cli(&args, &mut out);
    (code, String::from_utf8(out).unwrap())
}

const DOCUMENT: &str = "\
openintent: \"1.0\"
info:
  name: chain
workflow:
  a:
    title: A
    assign: a
    outputs:
      n: integer
  b:
    title: B
    assign: b
    depends_on: [a]
    inputs:
      n: a.n
    outputs:
      n: integer
";

#[test]
fn the_command_lists_shows_and_resumes_a_run_its_process_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.redb");
    {
        // A run started from the document, stopped with `b` claimed.
        let journal = Journal::open(&path).unwrap();
        let hanging = Executor::new(Workflow::from_yaml(DOCUMENT).unwrap())
            .bind_fn("a", |_| async { Ok(json!({ "n": 1 })) })
            .bind_fn("b", |_| std::future::pending())
            .with_document(DOCUMENT);
        let stopped = runtime().block_on(async {
            tokio::time::timeout(
                std::time::Duration::from_millis(50),
                hanging.start(&journal, "left-behind", json!({}), json!({})),
            )
            .await
        });
        assert!(stopped.is_err());
    }
    let journal = path.to_str().unwrap();
    let (code, out) = cli(&["runs", "--journal", journal]);
    assert_eq!(code, 0, "{out}");
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["run_id"], "left-behind");
    assert_eq!(line["state"], "open");
    assert_eq!(
        (line["completed"].as_u64(), line["transitions"].as_u64()),
        (Some(1), Some(3))
    );

    let (code, out) = cli(&["show", "left-behind", "--journal", journal]);
    assert_eq!(code, 0, "{out}");
    let shown: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        shown["phases"][0],
        json!({ "phase": "a", "state": "completed", "output": { "n": 1 } })
    );
    assert_eq!(
        shown["phases"][1],
        json!({ "phase": "b", "state": "running" })
    );
    let (code, graph) = cli(&[
        "show",
        "left-behind",
        "--journal",
        journal,
        "--graph",
        "mermaid",
    ]);
    assert_eq!(code, 0, "{graph}");
    assert!(graph.contains("a[\"A · completed\"]"), "{graph}");
    assert!(graph.contains("class b running"), "{graph}");
    let (code, dot) = cli(&[
        "show",
        "left-behind",
        "--journal",
        journal,
        "--graph",
        "dot",
    ]);
    assert_eq!(code, 0);
    assert!(
        dot.contains("\"b\" [label=\"B · running\", style=filled, fillcolor=\"lightblue\"];"),
        "{dot}"
    );

    // Resumed by the command (sample agents): `a` is not run again, `b` is.
    let (code, out) = cli(&["resume", "left-behind", "--journal", journal]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("{\"output\":{\"n\":1},\"phase\":\"a\"}")
            || out.contains("\"phase\":\"a\",\"output\":{\"n\":1}"),
        "{out}"
    );
    let (_, out) = cli(&["runs", "--journal", journal]);
    let line: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["state"], "completed");
    assert_eq!(line["completed"], 2);
    assert_eq!(
        line["transitions"], 6,
        "claimed, completed, claimed, released, claimed, completed"
    );

    // A durable run started by the command, then an id that is taken.
    let file = dir.path().join("chain.yaml");
    std::fs::write(&file, DOCUMENT).unwrap();
    let file = file.to_str().unwrap();
    let (code, out) = cli(&["run", file, "--journal", journal, "--run-id", "second"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out.lines().next(), Some("{\"run_id\":\"second\"}"));
    let (code, out) = cli(&["run", file, "--journal", journal, "--run-id", "second"]);
    assert_eq!(code, 1);
    assert!(out.contains("RunExistsError"), "{out}");
    let (_, out) = cli(&["runs", "--journal", journal]);
    assert_eq!(out.lines().count(), 2);
    // Resuming a phase that is not suspended, or a run that is not there: named, status 1.
    let (code, out) = cli(&[
        "resume",
        "second",
        "--journal",
        journal,
        "--phase",
        "a",
        "--input",
        "{}",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("InvalidTransitionError"), "{out}");
    let (code, out) = cli(&["show", "third", "--journal", journal]);
    assert_eq!(code, 1);
    assert!(out.contains("UnknownRunError"), "{out}");
    // A trigger nested deeper than a run records: named, nothing recorded.
    let deep = format!("{{\"x\":{}1{}}}", "[".repeat(126), "]".repeat(126));
    let (code, out) = cli(&[
        "run",
        file,
        "--journal",
        journal,
        "--run-id",
        "deep",
        "--trigger",
        &deep,
    ]);
    assert_eq!(code, 1);
    let line: Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(line["error"], "UnrecordableValueError", "{out}");
    assert!(
        line["message"]
            .as_str()
            .unwrap()
            .starts_with("the trigger nests deeper than 126 levels"),
        "{out}"
    );
    let (code, _) = cli(&["show", "deep", "--journal", journal]);
    assert_eq!(code, 1, "the run was not recorded");
}

#[test]
fn the_command_refuses_journal_options_that_do_not_fit() {
    for args in [
        &["runs"][..],
        &["show", "r1"],
        &["resume", "r1"],
        &["show", "--journal", "j"],
        &["run", "f.yaml", "--run-id", "r1"],
        &["resume", "r1", "--journal", "j", "--phase", "a"],
        &["resume", "r1", "--journal", "j", "--input", "{}"],
        &[
            "resume",
            "r1",
            "--journal",
            "j",
            "--phase",
            "a",
            "--input",
            "{nope",
        ],
        &["show", "r1", "--journal", "j", "--trigger", "{}"],
        &["check", "f.yaml", "--journal", "j"],
        &["runs", "--journal", "j", "--graph", "svg"],
    ] {
        let (code, out) = cli(args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(out.starts_with("error: "), "{args:?}: {out}");
    }
    // What is missing is named: a file for `check` and `run`, a run id for the others.
    for (args, needs) in [
        (&["check"][..], "`check` needs a workflow FILE"),
        (&["run", "--journal", "j"], "`run` needs a workflow FILE"),
        (&["show", "--journal", "j"], "`show` needs a RUN id"),
        (&["resume"], "`resume` needs a RUN id"),
    ] {
        let (code, out) = cli(args);
        assert_eq!(code, 2);
        assert!(
            out.starts_with(&format!("error: {needs}")),
            "{args:?}: {out}"
        );
    }
    // A journal that cannot be opened is a named error.
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"not a database").unwrap();
    let (code, out) = cli(&["runs", "--journal", junk.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("JournalStoreError"), "{out}");
}

#[test]
fn a_shown_graph_marks_each_state_in_its_own_colour() {
    use agentio_workflow::cli::render_graph_with_states;
    let states = [
        ("completed", "palegreen", "#98fb98"),
        ("running", "lightblue", "#add8e6"),
        ("suspended", "khaki", "#f0e68c"),
        ("failed", "lightpink", "#ffb6c1"),
        ("blocked", "lightpink", "#ffb6c1"),
        ("ready", "lightcyan", "#e0ffff"),
        ("waiting", "white", "#ffffff"),
    ];
    let mut workflow = Workflow::new("w");
    for (state, _, _) in states {
        workflow = workflow.with_phase(Phase::new(state, state.to_uppercase()));
    }
    let marked: BTreeMap<&str, &str> = states.iter().map(|(s, _, _)| (*s, *s)).collect();
    let dot = render_graph_with_states(&workflow, "dot", Some(&marked));
    let mermaid = render_graph_with_states(&workflow, "mermaid", Some(&marked));
    for (state, colour, hex) in states {
        let node = format!(
            "\"{state}\" [label=\"{} · {state}\", style=filled, fillcolor=\"{colour}\"];",
            state.to_uppercase()
        );
        assert!(dot.contains(&node), "{node} in {dot}");
        assert!(
            mermaid.contains(&format!("    classDef {state} fill:{hex}\n")),
            "{mermaid}"
        );
        assert!(
            mermaid.contains(&format!("    class {state} {state}\n")),
            "{mermaid}"
        );
    }
    // A phase the states do not name is waiting; without states nothing is marked.
    let partial = BTreeMap::from([("completed", "completed")]);
    let dot = render_graph_with_states(&workflow, "dot", Some(&partial));
    assert!(
        dot.contains("\"ready\" [label=\"READY · waiting\", style=filled, fillcolor=\"white\"];"),
        "{dot}"
    );
    let plain = render_graph_with_states(&workflow, "mermaid", None);
    assert!(
        !plain.contains("classDef") && !plain.contains(" · "),
        "{plain}"
    );
}

#[test]
fn a_refused_claim_is_recorded_once_and_stays_refused_when_reopened() {
    // `b` reads `a.m`, an optional output `a` does not produce: its claim is refused for good.
    let workflow = Workflow::new("refusal")
        .with_phase(
            Phase::new("a", "A")
                .assign("a")
                .optional_output("m", TypeRef::Integer),
        )
        .with_phase(
            Phase::new("b", "B")
                .assign("b")
                .depends_on(["a"])
                .input("m", "a.m"),
        );
    let ran_b = Arc::new(AtomicU32::new(0));
    let count = ran_b.clone();
    let executor = Executor::new(workflow)
        .bind_fn("a", |_| async { Ok(json!({})) })
        .bind_fn("b", move |_| {
            count.fetch_add(1, Ordering::SeqCst);
            async { Ok(json!({})) }
        });
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    let rt = runtime();
    let first = rt
        .block_on(executor.start(&journal, "r1", json!({}), json!({})))
        .unwrap();
    assert_eq!(first.events.len(), 1);
    assert_eq!(first.events[0]["error"], "UnresolvableInputError");
    let kinds: Vec<&str> = journal
        .load("r1")
        .unwrap()
        .1
        .iter()
        .map(Entry::kind)
        .collect();
    assert_eq!(kinds, ["claimed", "completed", "claim_refused"]);
    let again = rt.block_on(executor.reopen(&journal, "r1")).unwrap();
    assert_eq!(again.events, first.events, "the refusal, once, as recorded");
    assert_eq!(again.progress, first.progress);
    assert_eq!(ran_b.load(Ordering::SeqCst), 0);
    assert_eq!(
        journal.load("r1").unwrap().1.len(),
        3,
        "nothing new recorded"
    );
}

/// A value nested `levels` deep (arrays), built without recursion.
fn nested(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn a_value_too_deep_to_record_is_refused_before_it_is_written_and_the_run_reopens() {
    use agentio_workflow::journal::MAX_RECORDED_DEPTH;
    // `a`'s output holds `deep` under `n`: the output object is one level more.
    let run_with = |levels: usize| {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
        let executor = Executor::new(
            Workflow::new("deep")
                .with_phase(Phase::new("a", "A").assign("a").output("n", TypeRef::Any)),
        )
        .bind_fn(
            "a",
            move |_| async move { Ok(json!({ "n": nested(levels) })) },
        );
        let rt = runtime();
        let started = rt
            .block_on(executor.start(&journal, "r1", json!({}), json!({})))
            .unwrap();
        let reopened = rt.block_on(executor.reopen(&journal, "r1")).unwrap();
        let memory = rt
            .block_on(executor.run("r1", json!({}), json!({})))
            .unwrap();
        (started, reopened, memory)
    };
    // At the limit: recorded, and read back whole.
    let (started, reopened, memory) = run_with(MAX_RECORDED_DEPTH - 1);
    assert!(started.succeeded());
    assert_eq!(reopened.outputs, started.outputs);
    assert_eq!(memory.outputs, started.outputs);
    // One level more: the agent's `output_invalid`, naming where, in memory and durably alike;
    // the run still reopens.
    let (started, reopened, memory) = run_with(MAX_RECORDED_DEPTH);
    assert_eq!(started.progress.failed, ["a"]);
    let cause = &started.events[0]["cause"];
    assert_eq!(cause["code"], "output_invalid", "{}", started.events[0]);
    assert!(
        cause["message"]
            .as_str()
            .unwrap()
            .contains("deeper than 126 levels"),
        "{cause}"
    );
    assert_eq!(reopened.events, started.events);
    assert_eq!(memory.events, started.events);

    // A trigger or an answer too deep is refused before anything is recorded.
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::open(dir.path().join("runs.redb")).unwrap();
    let rt = runtime();
    let executor = fixed_chain();
    let refused = rt
        .block_on(executor.start(
            &journal,
            "r1",
            json!({ "x": nested(MAX_RECORDED_DEPTH) }),
            json!({}),
        ))
        .unwrap_err();
    assert!(
        matches!(&refused, DurableError::Unrecordable { message } if message.contains("trigger") && message.contains("/x")),
        "{refused}"
    );
    assert_eq!(journal.load("r1").unwrap_err().name(), "UnknownRunError");
    rt.block_on(executor.start(&journal, "r1", json!({}), json!({})))
        .unwrap();
    let refused = rt
        .block_on(executor.resume(&journal, "r1", "a", nested(MAX_RECORDED_DEPTH + 1)))
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("UnrecordableValueError: the resumption's answer"),
        "{refused}"
    );
    assert_eq!(journal.load("r1").unwrap().1.len(), 4, "nothing recorded");
}
