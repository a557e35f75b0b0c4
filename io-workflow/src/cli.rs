//! The command-line entry point behind `agentio-workflow`: [`run_cli`] takes the arguments and
//! an output, and returns the exit status, so it can be tested in-process.
//!
//! The command installs on its own: `cargo install --path agentio-workflow` (from a checkout). A
//! binary of yours can offer the same `check` and `run` over *your* agents with
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
    agentio-workflow run FILE [--trigger JSON] [--initial-state JSON]
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

OPTIONS:
    --graph mermaid|dot    With `check`: print the phase graph (each `depends_on` edge, labelled
                           with the keys it wires) as Mermaid or Graphviz DOT instead of the
                           summary, when the file is valid.
    --trigger JSON         The trigger payload, an object `$trigger.*` reads (default {}).
    --initial-state JSON   The initial state, an object `$initial_state.*` reads (default {}).
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

fn run_cli_inner(args: &[String], out: &mut dyn Write, bind: Binder<'_>) -> u8 {
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        let _ = write!(out, "{HELP}");
        return if args.is_empty() { 2 } else { 0 };
    }
    let command = args[0].as_str();
    let Some(file) = args.get(1) else {
        return usage(out, &format!("`{command}` needs a workflow FILE"));
    };
    let mut trigger = json!({});
    let mut initial_state = json!({});
    let mut graph = None;
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        if flag == "--graph" {
            match rest.next().map(String::as_str) {
                Some(format @ ("mermaid" | "dot")) if command == "check" => graph = Some(format),
                Some("mermaid" | "dot") => {
                    return usage(out, "`--graph` goes with `check`");
                }
                _ => return usage(out, "`--graph` takes `mermaid` or `dot`"),
            }
            continue;
        }
        let slot = match flag.as_str() {
            "--trigger" => &mut trigger,
            "--initial-state" => &mut initial_state,
            other => return usage(out, &format!("unknown option `{other}`")),
        };
        let Some(text) = rest.next() else {
            return usage(out, &format!("`{flag}` needs a JSON value"));
        };
        match serde_json::from_str(text) {
            Ok(value @ Value::Object(_)) => *slot = value,
            // `$trigger.key` and `$initial_state.key` read keys: anything else has none, and
            // every input reading it would be unresolvable at claim time.
            Ok(_) => {
                return usage(
                    out,
                    &format!("`{flag}` is a JSON object, whose keys the workflow reads"),
                );
            }
            Err(err) => return usage(out, &format!("`{flag}` is not valid JSON: {err}")),
        }
    }
    match command {
        "check" => check(out, file, graph, bind),
        "run" => run(out, file, trigger, initial_state, bind),
        other => usage(
            out,
            &format!("unknown command `{other}`; use `check` or `run`"),
        ),
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

fn run(
    out: &mut dyn Write,
    file: &str,
    trigger: Value,
    initial_state: Value,
    bind: Binder<'_>,
) -> u8 {
    let workflow = match load(out, file) {
        Ok(workflow) => workflow,
        Err(code) => return code,
    };
    let executor = match bind {
        Some(bind) => bind(Executor::new(workflow.clone())),
        None => {
            let mut executor = Executor::new(workflow.clone());
            for phase in &workflow.phases {
                let sample = sample_output(&workflow, phase);
                executor = executor.bind_phase(phase.name.clone(), SampleAgent(sample));
            }
            executor
        }
    };
    // Each phase's progress goes to stderr as it happens (stdout keeps the JSON lines): drawn
    // with symbols in a terminal, plain lines otherwise.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let executor = executor.with_progress(move |event| {
        eprintln!("{}", progress_line(event, terminal));
    });
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(out, "error: no async runtime: {err}");
            return 1;
        }
    };
    match runtime.block_on(executor.run("cli", trigger, initial_state)) {
        Err(problems) => {
            for problem in &problems {
                let _ = writeln!(out, "{}", problem.to_json());
            }
            1
        }
        Ok(outcome) => {
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
    }
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
        if dot {
            out.push_str(&format!(
                "    \"{}\" [label=\"{}\"];\n",
                quote(&phase.name),
                quote(&phase.title)
            ));
        } else {
            out.push_str(&format!(
                "    {}[\"{}\"]\n",
                phase.name,
                quote(&phase.title).replace('"', "#quot;")
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
    if dot {
        out.push_str("}\n");
    }
    out
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
