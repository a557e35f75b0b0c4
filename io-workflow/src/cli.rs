//! The command-line entry point behind `agentio-workflow`: [`run_cli`] takes the arguments and
//! an output, and returns the exit status, so it can be tested in-process.
//!
//! The command installs on its own: `cargo install --path agentio-workflow` (from a checkout). A
//! binary of yours can offer the same `check`, `run` and `resume` over *your* agents with
//! [`run_cli_with`]:
//!
//! ```no_run
//! use agentio_workflow::{Executor, cli};
//! use serde_json::json;
//!
//! fn main() -> std::process::ExitCode {
//!     let args: Vec<String> = std::env::args().skip(1).collect();
//!     let code = cli::run_cli_with(&args, &mut std::io::stdout().lock(), |executor: Executor| {
//!         executor.bind_fn("data-agent", |_ctx| async { Ok(json!({ "revenue": 1.0, "expenses": 0.5 })) })
//!     });
//!     std::process::ExitCode::from(code)
//! }
//! ```

use std::io::Write;

use crate::{Executor, Phase, TypeRef, Workflow};
use serde_json::{Map, Value, json};

const HELP: &str = "\
agentio-workflow: check or run a workflow file (RFC-0024 I/O contracts)

USAGE:
    agentio-workflow check FILE [--graph mermaid|dot]
    agentio-workflow run FILE [--trigger JSON] [--initial-state JSON] [--journal PATH [--run-id ID]]
    agentio-workflow runs --journal PATH
    agentio-workflow show RUN --journal PATH [--graph mermaid|dot]
    agentio-workflow resume RUN --journal PATH [--phase NAME --input JSON]
    agentio-workflow --help

COMMANDS:
    check   Load FILE and validate it: YAML syntax, phase and type declarations, every
            `inputs` mapping (the phase exists, is in depends_on, and declares the key),
            unknown depends_on targets and dependency cycles. Prints each problem as one
            JSON object per line, e.g.
              {\"error\":\"InputWiringError\",\"phase_name\":\"analysis\",
               \"invalid_refs\":[\"research.summary\"],\"suggestion\":\"...\",\"line\":12,\"column\":18}
            and exits with status 1 if there is any; prints {\"ok\":true,...} and exits 0
            otherwise.
    run     Check FILE, then run it. Every phase is served by a sample agent that returns a
            value of each declared output type (so the run exercises the wiring, not real
            work). Prints the named errors emitted (MissingOutputError, ...) and each phase's
            output as JSON lines, then the progress report. Exits 1 if a phase did not complete.
            Each phase's progress (started, completed in N ms, rejected, failed) goes to
            stderr as it happens: drawn in a terminal, plain lines otherwise.
            With `--journal`, the run is durable: every transition is written to the journal
            (an embedded database file, created if absent) before the run acts on it; the
            run's id is printed first ({\"run_id\":...}, `--run-id` chooses it).
    runs    One JSON line per run in the journal: its id, workflow, state (completed, failed,
            suspended, blocked, or open: under way or stopped with its process), phases
            completed and transitions recorded.
    show    One run: its trigger, initial state and each phase's state and recorded output.
            With `--graph`, the phase graph (as `check --graph` draws it) with each phase's
            state marked (completed, running, suspended, failed, ready, waiting, blocked).
    resume  Reopen a durable run from its last recorded transition and run it on (completed
            phases are not run again; a phase claimed when its process stopped is offered
            again). With `--phase` and `--input`, first resume that suspended phase with the
            answer it awaited.

OPTIONS:
    --graph mermaid|dot    With `check`: print the phase graph (each `depends_on` edge, labelled
                           with the keys it wires) as Mermaid or Graphviz DOT instead of the
                           summary, when the file is valid. With `show`: the run's graph, each
                           phase's state marked.
    --trigger JSON         The trigger payload, an object `$trigger.*` reads (default {}).
    --initial-state JSON   The initial state, an object `$initial_state.*` reads (default {}).
    --journal PATH         The journal file of durable runs.
    --run-id ID            With `run --journal`: the new run's id (default run-<unix millis>).
    --phase NAME           With `resume`: the suspended phase to resume.
    --input JSON           With `resume --phase`: the answer it awaited.
    -h, --help             This text.

EXIT STATUS:
    0 success, 1 problems found or the run did not complete, 2 wrong usage.

EXAMPLE:
    agentio-workflow run examples/workflows/quarterly-compliance.yaml \\
        --trigger '{\"quarter\":\"Q3\"}' --initial-state '{\"source\":\"erp\"}'
";

fn usage(out: &mut dyn Write, message: &str) -> u8 {
    let _ = writeln!(
        out,
        "error: {message}\n\nRun `agentio-workflow --help` for usage."
    );
    2
}

/// Runs the command line `args` (without the program name), writing to `out`; returns the exit
/// status: 0 success, 1 problems found or the run did not complete, 2 wrong usage. `run` serves
/// every phase with a sample agent; see [`run_cli_with`] for your own agents.
pub fn run_cli(args: &[String], out: &mut dyn Write) -> u8 {
    run_cli_inner(args, out, None)
}

/// [`run_cli`] over your own agents: `bind` receives the executor of the loaded workflow and
/// binds its agents (cores, tools, functions). `check` then also checks typed wiring and that
/// every phase has an agent; `run` runs with your agents instead of sample ones.
pub fn run_cli_with(
    args: &[String],
    out: &mut dyn Write,
    bind: impl Fn(Executor) -> Executor,
) -> u8 {
    run_cli_inner(args, out, Some(&bind))
}

type Binder<'a> = Option<&'a dyn Fn(Executor) -> Executor>;

/// The options of a command line, parsed.
#[derive(Default)]
struct Options {
    trigger: Option<Value>,
    initial_state: Option<Value>,
    graph: Option<&'static str>,
    journal: Option<String>,
    run_id: Option<String>,
    phase: Option<String>,
    input: Option<Value>,
}

/// Which options each command takes.
fn allowed(command: &str, flag: &str) -> bool {
    matches!(
        (command, flag),
        ("check" | "show", "--graph")
            | (
                "run",
                "--trigger" | "--initial-state" | "--journal" | "--run-id"
            )
            | ("runs" | "show" | "resume", "--journal")
            | ("resume", "--phase" | "--input")
    )
}

fn parse_options(command: &str, flags: &[String]) -> Result<Options, String> {
    let mut options = Options::default();
    let mut rest = flags.iter();
    while let Some(flag) = rest.next() {
        let known = matches!(
            flag.as_str(),
            "--graph"
                | "--trigger"
                | "--initial-state"
                | "--journal"
                | "--run-id"
                | "--phase"
                | "--input"
        );
        if !known {
            return Err(format!("unknown option `{flag}`"));
        }
        if !allowed(command, flag) {
            return Err(format!("`{flag}` does not go with `{command}`"));
        }
        let Some(text) = rest.next() else {
            return Err(format!("`{flag}` needs a value"));
        };
        match flag.as_str() {
            "--graph" => {
                options.graph = Some(match text.as_str() {
                    "mermaid" => "mermaid",
                    "dot" => "dot",
                    _ => return Err("`--graph` takes `mermaid` or `dot`".into()),
                });
            }
            "--journal" => options.journal = Some(text.clone()),
            "--run-id" => options.run_id = Some(text.clone()),
            "--phase" => options.phase = Some(text.clone()),
            "--input" => {
                options.input = Some(
                    serde_json::from_str(text)
                        .map_err(|err| format!("`--input` is not valid JSON: {err}"))?,
                );
            }
            _ => {
                let value = match serde_json::from_str(text) {
                    Ok(value @ Value::Object(_)) => value,
                    // `$trigger.key` and `$initial_state.key` read keys: anything else has
                    // none, and every input reading it would be unresolvable at claim time.
                    Ok(_) => {
                        return Err(format!(
                            "`{flag}` is a JSON object, whose keys the workflow reads"
                        ));
                    }
                    Err(err) => return Err(format!("`{flag}` is not valid JSON: {err}")),
                };
                if flag == "--trigger" {
                    options.trigger = Some(value);
                } else {
                    options.initial_state = Some(value);
                }
            }
        }
    }
    if options.run_id.is_some() && options.journal.is_none() {
        return Err("`--run-id` names a durable run: give `--journal` too".into());
    }
    if options.phase.is_some() != options.input.is_some() {
        return Err(
            "`--phase` and `--input` go together: the suspended phase and its answer".into(),
        );
    }
    if matches!(command, "runs" | "show" | "resume") && options.journal.is_none() {
        return Err(format!("`{command}` needs `--journal PATH`"));
    }
    Ok(options)
}

fn run_cli_inner(args: &[String], out: &mut dyn Write, bind: Binder<'_>) -> u8 {
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        let _ = write!(out, "{HELP}");
        return if args.is_empty() { 2 } else { 0 };
    }
    let command = args[0].as_str();
    if !matches!(command, "check" | "run" | "runs" | "show" | "resume") {
        return usage(
            out,
            &format!("unknown command `{command}`; use `check`, `run`, `runs`, `show` or `resume`"),
        );
    }
    let (positional, flags) = if command == "runs" {
        (None, &args[1..])
    } else {
        match args.get(1) {
            Some(arg) if !arg.starts_with("--") => (Some(arg.as_str()), &args[2..]),
            _ => {
                let what = if command == "check" || command == "run" {
                    "a workflow FILE"
                } else {
                    "a RUN id"
                };
                return usage(out, &format!("`{command}` needs {what}"));
            }
        }
    };
    let options = match parse_options(command, flags) {
        Ok(options) => options,
        Err(message) => return usage(out, &message),
    };
    let target = positional.unwrap_or_default();
    match command {
        "check" => check(out, target, options.graph, bind),
        "run" => run(out, target, options, bind),
        "runs" => runs(out, &options),
        "show" => show(out, target, &options),
        _ => resume(out, target, options, bind),
    }
}

fn open_journal(out: &mut dyn Write, options: &Options) -> Result<crate::journal::Journal, u8> {
    let path = options.journal.as_deref().unwrap_or_default();
    journaled(out, crate::journal::Journal::open(path))
}

fn journal_error(err: &crate::journal::JournalError) -> Value {
    json!({ "error": err.name(), "message": err.to_string() })
}

/// What a journal answered, or its error printed and the status 1.
fn journaled<T>(
    out: &mut dyn Write,
    answer: Result<T, crate::journal::JournalError>,
) -> Result<T, u8> {
    answer.map_err(|err| {
        let _ = writeln!(out, "{}", journal_error(&err));
        1
    })
}

/// `runs`: one line per run in the journal.
fn runs(out: &mut dyn Write, options: &Options) -> u8 {
    let journal = match open_journal(out, options) {
        Ok(journal) => journal,
        Err(code) => return code,
    };
    let records = match journaled(out, journal.runs()) {
        Ok(records) => records,
        Err(code) => return code,
    };
    for record in records {
        let entries = match journaled(out, journal.load(&record.run_id)) {
            Ok((_, entries)) => entries,
            Err(code) => return code,
        };
        let states = crate::journal::phase_states(&record, &entries);
        let completed = states.values().filter(|s| **s == "completed").count();
        let line = json!({
            "run_id": record.run_id,
            "workflow": record.workflow,
            "state": crate::journal::run_state(&states),
            "phases": record.phases.len(),
            "completed": completed,
            "transitions": entries.len(),
            "started_at_ms": record.started_at_ms,
        });
        let _ = writeln!(out, "{line}");
    }
    0
}

/// `show`: a run's phases and their states, or its graph with the states marked.
fn show(out: &mut dyn Write, run_id: &str, options: &Options) -> u8 {
    let journal = match open_journal(out, options) {
        Ok(journal) => journal,
        Err(code) => return code,
    };
    let (record, entries) = match journaled(out, journal.load(run_id)) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let states = crate::journal::phase_states(&record, &entries);
    if let Some(format) = options.graph {
        let Some(document) = &record.document else {
            let _ = writeln!(
                out,
                "{}",
                json!({ "error": "NoDocumentError", "message": format!("run '{run_id}' was not started from a workflow document, so there is no graph to draw; `show` without `--graph` lists its phases") })
            );
            return 1;
        };
        return match Workflow::from_yaml(document) {
            Ok(workflow) => {
                let _ = write!(
                    out,
                    "{}",
                    render_graph_with_states(&workflow, format, Some(&states))
                );
                0
            }
            Err(problems) => {
                for problem in &problems {
                    let _ = writeln!(out, "{}", problem.to_json());
                }
                1
            }
        };
    }
    let mut outputs = std::collections::BTreeMap::new();
    for entry in &entries {
        if let crate::journal::Entry::Completed { phase, output } = entry {
            outputs.insert(phase.as_str(), output);
        }
    }
    let phases: Vec<Value> = record
        .phases
        .iter()
        .map(|phase| {
            let mut line = json!({ "phase": phase, "state": states.get(phase.as_str()).copied().unwrap_or("waiting") });
            if let Some(output) = outputs.get(phase.as_str()) {
                line["output"] = Value::Object((*output).clone());
            }
            line
        })
        .collect();
    let summary = json!({
        "run_id": record.run_id,
        "workflow": record.workflow,
        "state": crate::journal::run_state(&states),
        "trigger": record.trigger,
        "initial_state": record.initial_state,
        "started_at_ms": record.started_at_ms,
        "phases": phases,
    });
    let _ = writeln!(out, "{summary}");
    0
}

/// `resume`: reopens a durable run from its recorded document (resuming a suspended phase
/// with `--phase` and `--input`) and runs it on.
fn resume(out: &mut dyn Write, run_id: &str, options: Options, bind: Binder<'_>) -> u8 {
    let journal = match open_journal(out, &options) {
        Ok(journal) => journal,
        Err(code) => return code,
    };
    let (record, _) = match journaled(out, journal.load(run_id)) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let Some(document) = record.document else {
        let _ = writeln!(
            out,
            "{}",
            json!({ "error": "NoDocumentError", "message": format!("run '{run_id}' was not started from a workflow document; reopen it from the program that started it (Executor::reopen)") })
        );
        return 1;
    };
    let workflow = match Workflow::from_yaml(&document) {
        Ok(workflow) => workflow,
        Err(problems) => {
            for problem in &problems {
                let _ = writeln!(out, "{}", problem.to_json());
            }
            return 1;
        }
    };
    let executor = executor_for(&workflow, bind);
    let Some(runtime) = runtime(out) else {
        return 1;
    };
    let outcome = match (options.phase, options.input) {
        (Some(phase), Some(input)) => {
            runtime.block_on(executor.resume(&journal, run_id, &phase, input))
        }
        _ => runtime.block_on(executor.reopen(&journal, run_id)),
    };
    report_durable(out, &workflow, outcome)
}

fn runtime(out: &mut dyn Write) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(err) => {
            let _ = writeln!(out, "error: no async runtime: {err}");
            None
        }
    }
}

/// The executor of `workflow`: the host's agents, or a sample agent per phase; its progress
/// to stderr as it happens (stdout keeps the JSON lines), drawn with symbols in a terminal,
/// plain lines otherwise.
fn executor_for(workflow: &Workflow, bind: Binder<'_>) -> Executor {
    let executor = match bind {
        Some(bind) => bind(Executor::new(workflow.clone())),
        None => {
            let mut executor = Executor::new(workflow.clone());
            for phase in &workflow.phases {
                let sample = sample_output(workflow, phase);
                executor = executor.bind_phase(phase.name.clone(), SampleAgent(sample));
            }
            executor
        }
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    executor.with_progress(move |event| {
        eprintln!("{}", progress_line(event, terminal));
    })
}

fn report(out: &mut dyn Write, workflow: &Workflow, outcome: &crate::RunOutcome) -> u8 {
    for event in &outcome.events {
        let _ = writeln!(out, "{event}");
    }
    for phase in &workflow.phases {
        if let Some(output) = outcome.outputs.get(&phase.name) {
            let _ = writeln!(out, "{}", json!({ "phase": phase.name, "output": output }));
        }
    }
    let _ = writeln!(out, "{}", json!({ "progress": outcome.progress }));
    u8::from(!outcome.succeeded())
}

fn report_durable(
    out: &mut dyn Write,
    workflow: &Workflow,
    outcome: Result<crate::RunOutcome, crate::DurableError>,
) -> u8 {
    match outcome {
        Ok(outcome) => report(out, workflow, &outcome),
        Err(crate::DurableError::Invalid(problems)) => {
            for problem in &problems {
                let _ = writeln!(out, "{}", problem.to_json());
            }
            1
        }
        Err(crate::DurableError::Journal(err)) => {
            let _ = writeln!(out, "{}", journal_error(&err));
            1
        }
        Err(crate::DurableError::Run(err)) => {
            let _ = writeln!(out, "{}", err.to_json());
            1
        }
        Err(crate::DurableError::Unrecordable { message }) => {
            let error = json!({ "error": "UnrecordableValueError", "message": message });
            let _ = writeln!(out, "{error}");
            1
        }
    }
}

fn load(out: &mut dyn Write, file: &str) -> Result<Workflow, u8> {
    Workflow::from_file(file).map_err(|problems| {
        for problem in &problems {
            let _ = writeln!(out, "{}", problem.to_json());
        }
        1
    })
}

fn check(out: &mut dyn Write, file: &str, graph: Option<&str>, bind: Binder<'_>) -> u8 {
    match load(out, file) {
        Ok(workflow) => {
            if let Some(bind) = bind {
                let problems = bind(Executor::new(workflow.clone())).check();
                if !problems.is_empty() {
                    for problem in &problems {
                        let _ = writeln!(out, "{}", problem.to_json());
                    }
                    return 1;
                }
            }
            if let Some(format) = graph {
                let _ = write!(out, "{}", render_graph(&workflow, format));
                return 0;
            }
            let levels = workflow.levels().map_or(0, |l| l.len());
            let summary = json!({ "ok": true, "workflow": workflow.name, "phases": workflow.phases.len(), "levels": levels });
            let _ = writeln!(out, "{summary}");
            0
        }
        Err(code) => code,
    }
}

fn run(out: &mut dyn Write, file: &str, options: Options, bind: Binder<'_>) -> u8 {
    let workflow = match load(out, file) {
        Ok(workflow) => workflow,
        Err(code) => return code,
    };
    let trigger = options.trigger.clone().unwrap_or_else(|| json!({}));
    let initial_state = options.initial_state.clone().unwrap_or_else(|| json!({}));
    let executor = executor_for(&workflow, bind);
    let Some(runtime) = runtime(out) else {
        return 1;
    };
    if options.journal.is_none() {
        return match runtime.block_on(executor.run("cli", trigger, initial_state)) {
            Err(problems) => {
                for problem in &problems {
                    let _ = writeln!(out, "{}", problem.to_json());
                }
                1
            }
            Ok(outcome) => report(out, &workflow, &outcome),
        };
    }
    let journal = match open_journal(out, &options) {
        Ok(journal) => journal,
        Err(code) => return code,
    };
    // The document, kept with the run so `show --graph` and `resume` need only the journal.
    let document = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(err) => {
            let _ = writeln!(out, "error: cannot read {file}: {err}");
            return 1;
        }
    };
    let run_id = options.run_id.unwrap_or_else(|| {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("run-{millis}")
    });
    let _ = writeln!(out, "{}", json!({ "run_id": run_id }));
    let executor = executor.with_document(document);
    let outcome = runtime.block_on(executor.start(&journal, &run_id, trigger, initial_state));
    report_durable(out, &workflow, outcome)
}

/// The phase graph as Mermaid (`graph TD`) or Graphviz DOT: one node per phase (its title), one
/// edge per `depends_on` entry, labelled with the input keys it wires.
///
/// ```
/// use agentio_workflow::{Phase, TypeRef, Workflow, cli::render_graph};
/// let workflow = Workflow::new("w")
///     .with_phase(Phase::new("fetch", "Fetch").output("n", TypeRef::Number))
///     .with_phase(Phase::new("report", "Report").depends_on(["fetch"]).input("count", "fetch.n"));
/// assert_eq!(
///     render_graph(&workflow, "mermaid"),
///     "graph TD\n    fetch[\"Fetch\"]\n    report[\"Report\"]\n    fetch -->|count| report\n"
/// );
/// assert!(render_graph(&workflow, "dot").contains("\"fetch\" -> \"report\" [label=\"count\"];"));
/// ```
pub fn render_graph(workflow: &Workflow, format: &str) -> String {
    render_graph_with_states(workflow, format, None)
}

/// [`render_graph`] with each phase's state marked (`agentio-workflow show --graph`): a
/// Mermaid class per state (`completed`, `running`, `suspended`, `failed`, ...), or a DOT fill
/// colour, with the state after the title.
///
/// ```
/// use agentio_workflow::{Phase, Workflow, cli::render_graph_with_states};
/// use std::collections::BTreeMap;
/// let workflow = Workflow::new("w")
///     .with_phase(Phase::new("fetch", "Fetch"))
///     .with_phase(Phase::new("report", "Report").depends_on(["fetch"]));
/// let states = BTreeMap::from([("fetch", "completed"), ("report", "running")]);
/// let mermaid = render_graph_with_states(&workflow, "mermaid", Some(&states));
/// assert!(mermaid.contains("fetch[\"Fetch · completed\"]"));
/// assert!(mermaid.contains("class fetch completed"));
/// let dot = render_graph_with_states(&workflow, "dot", Some(&states));
/// assert!(dot.contains("\"report\" [label=\"Report · running\", style=filled, fillcolor=\"lightblue\"];"));
/// ```
pub fn render_graph_with_states(
    workflow: &Workflow,
    format: &str,
    states: Option<&std::collections::BTreeMap<&str, &str>>,
) -> String {
    let state_of = |phase: &str| states.map(|s| s.get(phase).copied().unwrap_or("waiting"));
    let quote = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = String::new();
    let dot = format == "dot";
    if dot {
        out.push_str(&format!(
            "digraph \"{}\" {{\n    rankdir=LR;\n",
            quote(&workflow.name)
        ));
    } else {
        out.push_str("graph TD\n");
    }
    for phase in &workflow.phases {
        let state = state_of(&phase.name);
        let title = match state {
            Some(state) => format!("{} · {state}", phase.title),
            None => phase.title.clone(),
        };
        if dot {
            let fill = state.map_or_else(String::new, |state| {
                format!(", style=filled, fillcolor=\"{}\"", fill_colour(state))
            });
            out.push_str(&format!(
                "    \"{}\" [label=\"{}\"{fill}];\n",
                quote(&phase.name),
                quote(&title)
            ));
        } else {
            out.push_str(&format!(
                "    {}[\"{}\"]\n",
                phase.name,
                quote(&title).replace('"', "#quot;")
            ));
        }
    }
    for phase in &workflow.phases {
        for (dep, _) in &phase.depends_on {
            let keys: Vec<&str> = phase
                .inputs
                .iter()
                .filter(|i| matches!(&i.source, crate::InputSource::Phase { phase, .. } if phase == dep))
                .map(|i| i.key.as_str())
                .collect();
            let label = keys.join(", ");
            match (dot, label.is_empty()) {
                (true, true) => out.push_str(&format!(
                    "    \"{}\" -> \"{}\";\n",
                    quote(dep),
                    quote(&phase.name)
                )),
                (true, false) => out.push_str(&format!(
                    "    \"{}\" -> \"{}\" [label=\"{}\"];\n",
                    quote(dep),
                    quote(&phase.name),
                    quote(&label)
                )),
                (false, true) => out.push_str(&format!("    {dep} --> {}\n", phase.name)),
                (false, false) => out.push_str(&format!("    {dep} -->|{label}| {}\n", phase.name)),
            }
        }
    }
    if let Some(states) = states.filter(|_| !dot) {
        for state in STATES {
            out.push_str(&format!("    classDef {state} fill:{}\n", fill_hex(state)));
        }
        for phase in &workflow.phases {
            let state = states
                .get(phase.name.as_str())
                .copied()
                .unwrap_or("waiting");
            out.push_str(&format!("    class {} {state}\n", phase.name));
        }
    }
    if dot {
        out.push_str("}\n");
    }
    out
}

/// The states `show` marks, as [`crate::journal::phase_states`] names them.
const STATES: [&str; 7] = [
    "waiting",
    "ready",
    "running",
    "completed",
    "suspended",
    "failed",
    "blocked",
];

fn fill_colour(state: &str) -> &'static str {
    match state {
        "completed" => "palegreen",
        "running" => "lightblue",
        "suspended" => "khaki",
        "failed" | "blocked" => "lightpink",
        "ready" => "lightcyan",
        _ => "white",
    }
}

fn fill_hex(state: &str) -> &'static str {
    match state {
        "completed" => "#98fb98",
        "running" => "#add8e6",
        "suspended" => "#f0e68c",
        "failed" | "blocked" => "#ffb6c1",
        "ready" => "#e0ffff",
        _ => "#ffffff",
    }
}

/// One line of `run`'s progress display: with symbols for a terminal, plain otherwise.
///
/// ```
/// use agentio_workflow::{PhaseProgress, cli::progress_line};
/// let done = PhaseProgress::Completed { phase: "fetch".into(), millis: 12 };
/// assert_eq!(progress_line(&done, false), "phase fetch: completed in 12 ms");
/// assert_eq!(progress_line(&done, true), "  ✓ fetch  12 ms");
/// ```
pub fn progress_line(event: &crate::PhaseProgress, terminal: bool) -> String {
    use crate::PhaseProgress;
    match (event, terminal) {
        (PhaseProgress::Started { phase, attempt: 1 }, false) => format!("phase {phase}: started"),
        (PhaseProgress::Started { phase, attempt }, false) => {
            format!("phase {phase}: started (attempt {attempt})")
        }
        (PhaseProgress::Completed { phase, millis }, false) => {
            format!("phase {phase}: completed in {millis} ms")
        }
        (PhaseProgress::Rejected { phase, attempt }, false) => {
            format!("phase {phase}: output of attempt {attempt} rejected; handed back")
        }
        (PhaseProgress::Failed { phase, message }, false) => {
            format!("phase {phase}: failed: {message}")
        }
        (PhaseProgress::Suspended { phase, intent_id }, false) => {
            format!("phase {phase}: suspended awaiting input (intent {intent_id})")
        }
        (PhaseProgress::Suspended { phase, intent_id }, true) => {
            format!("  ⏸ {phase}  awaiting input (intent {intent_id})")
        }
        (PhaseProgress::Started { phase, attempt: 1 }, true) => format!("  ▶ {phase}"),
        (PhaseProgress::Started { phase, attempt }, true) => {
            format!("  ▶ {phase}  (attempt {attempt})")
        }
        (PhaseProgress::Completed { phase, millis }, true) => format!("  ✓ {phase}  {millis} ms"),
        (PhaseProgress::Rejected { phase, attempt }, true) => {
            format!("  ↻ {phase}  output of attempt {attempt} rejected")
        }
        (PhaseProgress::Failed { phase, message }, true) => format!("  ✗ {phase}  {message}"),
    }
}

/// A stand-in agent: returns a value of each declared output type.
struct SampleAgent(Value);

impl crate::PhaseAgent for SampleAgent {
    fn run<'a>(
        &'a self,
        _ctx: &'a crate::TaskContext,
    ) -> agentio_core::BoxFuture<'a, Result<Value, agentio_core::AgentError>> {
        let output = self.0.clone();
        Box::pin(async move { Ok(output) })
    }
}

fn sample_output(workflow: &Workflow, phase: &Phase) -> Value {
    let mut output = Map::new();
    for decl in phase.outputs.iter().flatten() {
        output.insert(
            decl.key.clone(),
            sample(workflow, &decl.ty, &decl.key, &mut Sampling::default()),
        );
    }
    Value::Object(output)
}

/// The most values one output's sample holds: types whose fields share a type can double the
/// sample at each level, and a hostile file must not make `run` build 2^n values.
const MAX_SAMPLE_VALUES: usize = 10_000;

/// Where a sample is: the named types being filled in further out, and how many values it has.
#[derive(Default)]
struct Sampling<'w> {
    filling: Vec<&'w str>,
    values: usize,
}

/// A value of `ty`: every field of a named type filled in, every array with one item. A named
/// type already being filled in further out (a recursive type) is `{}` there: no finite value
/// has all its fields, and the run reports where the sample falls short; so is every named type
/// once the sample holds [`MAX_SAMPLE_VALUES`] values. Arrays nest only as deep as the type's
/// text, which the loader bounds.
fn sample<'w>(workflow: &'w Workflow, ty: &TypeRef, name: &str, at: &mut Sampling<'w>) -> Value {
    at.values += 1;
    match ty {
        TypeRef::String => json!(format!("sample {name}")),
        TypeRef::Number => json!(1.5),
        TypeRef::Integer => json!(1),
        TypeRef::Boolean => json!(false),
        TypeRef::Object => json!({}),
        TypeRef::Array(None) => json!([]),
        TypeRef::Array(Some(inner)) => json!([sample(workflow, inner, name, at)]),
        TypeRef::Any => json!(null),
        TypeRef::Named(type_name) => match workflow.type_def(type_name) {
            Some(def) => match def.values.as_ref().and_then(|v| v.first()) {
                Some(first) => first.clone(),
                None if at.values > MAX_SAMPLE_VALUES
                    || at.filling.contains(&def.name.as_str()) =>
                {
                    json!({})
                }
                None => {
                    at.filling.push(&def.name);
                    let mut object = Map::new();
                    for (field, field_ty) in &def.fields {
                        object.insert(field.clone(), sample(workflow, field_ty, field, at));
                    }
                    at.filling.pop();
                    Value::Object(object)
                }
            },
            None => json!({}),
        },
    }
}
