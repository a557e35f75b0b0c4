//! Hostile input against every entry point: nothing panics, nothing overflows the stack,
//! nothing grows without bound, and every refusal is a structured error that says where.

use std::time::{Duration, Instant};

use agentio_core::limits::{MAX_DEPTH, dismantle};
use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErrorCode,
};
use agentio_tools::{CallOptions, ToolError, ToolManifest, tool, tool_registry};
use agentio_workflow::{TypeRef, Workflow};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const FRONTMATTER: &str = "name: Echo\nid: echo\ndescription: Echoes.\nversion: 1.0.0\ninputs:\n  type: object\noutputs:\n  type: object\n";

fn deep_array(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

fn deep_object(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        let mut map = serde_json::Map::new();
        map.insert("k".into(), value);
        value = Value::Object(map);
    }
    value
}

// --- TOOL.md ---------------------------------------------------------------------------------

/// Any Unicode whitespace after the opening `---` used to slice inside a character and panic.
#[test]
fn unicode_whitespace_after_a_fence_is_an_error_not_a_panic() {
    for ws in [
        '\u{a0}', '\u{85}', '\u{2003}', '\u{3000}', '\u{feff}', '\u{2028}',
    ] {
        for text in [
            format!("---{ws}\n---\n"),
            format!("---\n{FRONTMATTER}---{ws}\n"),
            format!("---{ws}\n{FRONTMATTER}---\n"),
            format!("{ws}---\n---\n"),
        ] {
            let result = std::panic::catch_unwind(|| ToolManifest::parse(&text));
            let err = result
                .unwrap_or_else(|_| panic!("parse panicked on {text:?}"))
                .unwrap_err();
            assert!(!err.problems.is_empty(), "{text:?}");
        }
    }
    // ASCII spaces and a CR after a fence are fine.
    assert!(ToolManifest::parse(&format!("--- \r\n{FRONTMATTER}---\t\n")).is_ok());
}

/// An alias bomb (one large scalar repeated by alias) is refused before it is expanded.
#[test]
fn a_tool_md_alias_bomb_is_refused_before_it_is_expanded() {
    let big = "x".repeat(1 << 19);
    let aliases = vec!["*a"; 5000].join(", ");
    let text = format!("---\n{FRONTMATTER}tags: [&a \"{big}\", {aliases}]\n---\n");
    // Expanded, it would be 2.5 GB: that the answer comes at all shows it was not.
    let err = ToolManifest::parse(&text).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    assert!(
        err.problems[0].message.contains(
            "too large: over 4194304 nodes and bytes, each alias counted as what it repeats"
        ),
        "{err}"
    );
    assert_eq!(err.problems[0].line, Some(10));

    // Nested aliases (billion laughs) too.
    let mut laughs = String::from("---\n");
    laughs.push_str(FRONTMATTER);
    laughs.push_str("metadata:\n  a0: &a0 [lol]\n");
    for level in 1..10 {
        let prev = format!("*a{}", level - 1);
        laughs.push_str(&format!(
            "  a{level}: &a{level} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    laughs.push_str("---\n");
    let err = ToolManifest::parse(&laughs).unwrap_err();
    assert!(err.problems[0].message.contains("too large"), "{err}");
}

/// Deep nesting used to take quadratic time in the YAML scanner: refused at the limit.
#[test]
fn deeply_nested_tool_md_is_refused_at_the_limit() {
    for depth in [33, 16_000, 100_000] {
        let flow = format!(
            "---\n{FRONTMATTER}metadata: {{x: {}1{}}}\n---\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        let err = ToolManifest::parse(&flow).unwrap_err();
        assert_eq!(
            err.problems[0].message, "the frontmatter nests deeper than 32 levels",
            "{depth}"
        );
    }
    // Block sequences nest on one line too: `- - - - 1`.
    let block = format!(
        "---\n{FRONTMATTER}metadata:\n  x:\n    {}1\n---\n",
        "- ".repeat(100_000)
    );
    let err = ToolManifest::parse(&block).unwrap_err();
    assert_eq!(
        err.problems[0].message,
        "the frontmatter nests deeper than 32 levels"
    );
    // 30 levels under `metadata` is within the limit.
    let ok = format!(
        "---\n{FRONTMATTER}metadata: {{x: {}1{}}}\n---\n",
        "[".repeat(30),
        "]".repeat(30)
    );
    assert!(ToolManifest::parse(&ok).is_ok());
}

/// A frontmatter over 1 MiB is refused by size.
#[test]
fn an_oversized_tool_md_is_refused() {
    let text = format!(
        "---\n{FRONTMATTER}description: \"{}\"\n---\n",
        "d".repeat(2 << 20)
    );
    let err = ToolManifest::parse(&text).unwrap_err();
    assert!(
        err.problems[0]
            .message
            .contains("over the limit of 1048576 bytes"),
        "{err}"
    );
}

/// AIP-14: `approval` defaults to `auto`; with `mutates`, agent-io's default is `on-mutate`.
#[test]
fn a_tool_md_without_approval_gets_the_default() {
    let manifest = ToolManifest::parse(&format!("---\n{FRONTMATTER}---\n")).unwrap();
    assert_eq!(manifest.contract.approval, agentio_tools::Approval::Auto);
    let manifest = ToolManifest::parse(&format!(
        "---\n{FRONTMATTER}mutates: [\"workspace:/notes\"]\n---\n"
    ))
    .unwrap();
    assert_eq!(
        manifest.contract.approval,
        agentio_tools::Approval::OnMutate
    );
}

/// `execute` moved to the driver layer like the other removed fields.
#[test]
fn a_tool_md_with_execute_gets_the_migration_message() {
    let err =
        ToolManifest::parse(&format!("---\n{FRONTMATTER}execute: ./run.sh\n---\n")).unwrap_err();
    assert_eq!(err.problems.len(), 1, "{err}");
    assert_eq!(err.problems[0].field, "/execute");
    assert_eq!(err.problems[0].line, Some(10));
    assert!(err.problems[0].message.contains("AIP-30"), "{err}");
}

// --- Deep values ------------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
struct Note {
    text: String,
    #[serde(default)]
    extra: Value,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
struct Ack {
    ok: bool,
}

struct Notes;

impl AgentCore for Notes {
    type Input = Note;
    type Output = Ack;
    fn core_type(&self) -> &str {
        "notes"
    }
    async fn run_turn(&mut self, _input: Note, _ctx: &mut AgentContext) -> Result<Ack, AgentError> {
        Ok(Ack { ok: true })
    }
}

/// A 100,000-deep value used to overflow the stack in validation, decoding, error formatting
/// and drop. It is refused with one `depth` violation; the test runs on a test thread's small
/// stack.
#[test]
fn a_deep_value_is_refused_without_overflowing_the_stack() {
    for deep in [deep_array(100_000), deep_object(100_000)] {
        let input = json!({ "text": "x", "extra": null });
        let mut input = input;
        input["extra"] = deep;

        let err = Note::validate_input(&input).unwrap_err();
        assert_eq!(err.code(), &ErrorCode::InputInvalid);
        assert_eq!(err.violations().len(), 1);
        assert_eq!(err.violations()[0].keyword, "depth");
        assert!(err.violations()[0].pointer.starts_with("/extra/"));
        assert!(
            err.message().contains("deeper than 128 levels"),
            "{}",
            err.message()
        );

        let err = Note::input_boundary().decode::<Note>(&input).unwrap_err();
        assert_eq!(err.violations()[0].keyword, "depth");

        // The runtime takes the value by ownership and must release it without recursing.
        let mut runtime = AgentRuntime::new(Notes);
        let err = pollster::block_on(runtime.run_turn(input)).unwrap_err();
        assert_eq!(err.violations()[0].keyword, "depth");
    }
    // At the limit it is accepted.
    let mut input = json!({ "text": "x" });
    input["extra"] = deep_array(MAX_DEPTH - 1);
    assert!(Note::validate_input(&input).is_ok());
    input["extra"] = deep_array(MAX_DEPTH);
    assert!(Note::validate_input(&input).is_err());
    dismantle(input);
}

/// The same through the tool registry, which also owns the value.
#[test]
fn a_deep_value_sent_to_a_tool_is_refused() {
    let registry = tool_registry![NoteToolTool].unwrap();
    let mut input = json!({ "text": "x" });
    input["extra"] = deep_array(100_000);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let err = runtime
        .block_on(registry.call("test.note", input))
        .unwrap_err();
    assert_eq!(err.violations()[0].keyword, "depth");
}

/// Takes a note.
#[tool(id = "test.note")]
async fn note_tool(_input: Note) -> Result<Ack, ToolError> {
    Ok(Ack { ok: true })
}

// --- Error sizes --------------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
struct Counts {
    counts: Vec<u32>,
}

/// A 10 MB key, or a 10 MB value, does not make a 10 MB message.
#[test]
fn error_messages_and_pointers_are_bounded() {
    let key = "k".repeat(10 << 20);
    let mut input = json!({ "counts": [] });
    input[&key] = json!(1);
    let err = Counts::validate_input(&input).unwrap_err();
    assert!(err.message().len() < 4096, "{} bytes", err.message().len());
    for violation in err.violations() {
        assert!(violation.pointer.len() <= agentio_core::limits::MAX_POINTER_BYTES + 4);
        assert!(violation.message.len() < 1024);
    }

    let input = json!({ "counts": ["v".repeat(10 << 20)] });
    let err = Counts::validate_input(&input).unwrap_err();
    assert!(err.message().len() < 4096, "{} bytes", err.message().len());
    let err = Counts::input_boundary()
        .decode::<Counts>(&input)
        .unwrap_err();
    assert!(err.message().len() < 4096, "{} bytes", err.message().len());
}

/// A million bad items: 32 are listed, the rest counted up to a bound.
#[test]
fn millions_of_violations_stop_at_the_cap() {
    let input = json!({ "counts": vec![json!("x"); 1_000_000] });
    let err = Counts::validate_input(&input).unwrap_err();
    let violations = err.violations();
    assert_eq!(violations.len(), agentio_core::MAX_VIOLATIONS + 1);
    assert_eq!(violations[0].pointer, "/counts/0");
    assert_eq!(violations[31].pointer, "/counts/31");
    assert_eq!(violations[32].keyword, "limit");
    assert_eq!(
        violations[32].message,
        "at least 10000 more violation(s) not listed"
    );

    // Under the counting bound, the count is exact.
    let input = json!({ "counts": vec![json!("x"); 40] });
    let err = Counts::validate_input(&input).unwrap_err();
    assert_eq!(err.violations().len(), 33);
    assert_eq!(
        err.violations()[32].message,
        "8 more violation(s) not listed"
    );
}

// --- Timeouts ---------------------------------------------------------------------------------

#[derive(Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
struct Wait {
    ms: u64,
}

/// Blocks its thread (no `.await`) for `ms` milliseconds.
#[tool(id = "test.blocking", timeout_ms = 50)]
async fn blocking(input: Wait) -> Result<Ack, ToolError> {
    std::thread::sleep(Duration::from_millis(input.ms));
    Ok(Ack { ok: true })
}

/// AIP-14's timeout is a hard wall-clock ceiling: on a multi-thread runtime a body that
/// blocks its thread is answered `timeout` at the ceiling, not after it returns.
#[test]
fn a_blocking_body_times_out_at_its_ceiling_on_a_multi_thread_runtime() {
    let registry = tool_registry![BlockingTool].unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let started = Instant::now();
    let err = runtime
        .block_on(registry.call("test.blocking", json!({ "ms": 1500 })))
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(err.code(), &ErrorCode::Timeout);
    assert_eq!(
        err.message(),
        "tool `test.blocking` did not finish within 50 ms"
    );
    assert!(
        elapsed < Duration::from_millis(1000),
        "answered after {elapsed:?}"
    );
    // A body within its ceiling answers.
    let ok = runtime.block_on(registry.call("test.blocking", json!({ "ms": 1 })));
    assert_eq!(ok.unwrap(), json!({ "ok": true }));
}

/// On a runtime with one worker (current-thread, or multi-thread with one worker thread) the
/// timer cannot fire while the body blocks the only thread; the late result is still a
/// timeout, never a success.
#[test]
fn a_late_result_on_a_one_worker_runtime_is_a_timeout() {
    let registry = tool_registry![BlockingTool].unwrap();
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let one_worker = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_time()
        .build()
        .unwrap();
    for runtime in [current, one_worker] {
        let err = runtime
            .block_on(registry.call_with(
                "test.blocking",
                json!({ "ms": 200 }),
                CallOptions::default(),
            ))
            .unwrap_err();
        assert_eq!(err.code(), &ErrorCode::Timeout);
        assert!(
            !err.is_retryable(),
            "a non-idempotent tool's error is not retryable"
        );
        // A body within its ceiling answers.
        let ok = runtime.block_on(registry.call("test.blocking", json!({ "ms": 1 })));
        assert_eq!(ok.unwrap(), json!({ "ok": true }));
    }
}

/// Blocks its thread for `ms` milliseconds under a ceiling long enough to be judged by the
/// coarse clock (1.1 s: over 256 ticks of 4 ms).
#[tool(id = "test.blocking-long", timeout_ms = 1100)]
async fn blocking_long(input: Wait) -> Result<Ack, ToolError> {
    std::thread::sleep(Duration::from_millis(input.ms));
    Ok(Ack { ok: true })
}

/// A long ceiling is judged by the cheaper coarse clock, to its tick: a body that blocked past
/// it is still a timeout, and one well within it is a success.
#[test]
fn a_late_result_under_a_long_ceiling_is_a_timeout_too() {
    let registry = tool_registry![BlockingLongTool].unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let err = runtime
        .block_on(registry.call("test.blocking-long", json!({ "ms": 1150 })))
        .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Timeout);
    assert_eq!(
        err.message(),
        "tool `test.blocking-long` did not finish within 1100 ms"
    );
    let ok = runtime.block_on(registry.call("test.blocking-long", json!({ "ms": 5 })));
    assert_eq!(ok.unwrap(), json!({ "ok": true }));
}

struct Sleeper {
    blocking: bool,
}

impl AgentCore for Sleeper {
    type Input = Wait;
    type Output = Ack;
    fn core_type(&self) -> &str {
        "sleeper"
    }
    async fn run_turn(&mut self, input: Wait, _ctx: &mut AgentContext) -> Result<Ack, AgentError> {
        if self.blocking {
            std::thread::sleep(Duration::from_millis(input.ms));
        } else {
            tokio::time::sleep(Duration::from_millis(input.ms)).await;
        }
        Ok(Ack { ok: true })
    }
}

/// `AgentRuntime` has a turn timeout, per runtime and per turn (through the context), with
/// the same envelope as a tool's.
#[test]
fn agent_turns_time_out_per_runtime_and_per_turn() {
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let mut runtime = AgentRuntime::new(Sleeper { blocking: false })
        .with_turn_timeout(Duration::from_millis(100));
    let err = tokio
        .block_on(runtime.run_turn(json!({ "ms": 500 })))
        .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Timeout);
    assert_eq!(err.message(), "the turn did not finish within 100 ms");
    assert_eq!(
        err.to_envelope(),
        json!({ "ok": false, "error": { "code": "timeout", "message": "the turn did not finish within 100 ms", "retryable": true } })
    );
    assert!(
        tokio
            .block_on(runtime.run_turn(json!({ "ms": 50 })))
            .is_ok()
    );

    // A context's ceiling overrides the runtime's.
    let mut ctx = runtime
        .context("r1")
        .with_turn_timeout(Duration::from_millis(10));
    let err = tokio
        .block_on(runtime.run_turn_in(json!({ "ms": 50 }), &mut ctx))
        .unwrap_err();
    assert_eq!(err.message(), "the turn did not finish within 10 ms");

    // A core that blocks its thread past the ceiling is reported as a timeout when it returns.
    let mut blocking =
        AgentRuntime::new(Sleeper { blocking: true }).with_turn_timeout(Duration::from_millis(20));
    let real = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let err = real
        .block_on(blocking.run_turn(json!({ "ms": 100 })))
        .unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Timeout);

    // Without Tokio, a turn with a ceiling says why it cannot run.
    let err = pollster::block_on(runtime.run_turn(json!({ "ms": 1 }))).unwrap_err();
    assert_eq!(err.code(), &ErrorCode::Internal);
    assert!(
        err.message().contains("needs a Tokio runtime"),
        "{}",
        err.message()
    );
}

// --- Workflows ----------------------------------------------------------------------------------

/// A deep `array<...>` type used to recurse in the parser; it is not a type past 16 levels.
#[test]
fn a_deep_array_type_is_refused_without_recursing() {
    let deep = format!("{}string{}", "array<".repeat(100_000), ">".repeat(100_000));
    assert_eq!(TypeRef::parse(&deep), None);
    let ok = format!("{}string{}", "array<".repeat(16), ">".repeat(16));
    assert!(TypeRef::parse(&ok).is_some());
    let over = format!("{}string{}", "array<".repeat(17), ">".repeat(17));
    assert_eq!(TypeRef::parse(&over), None);

    let doc = format!(
        "openintent: \"1.0\"\ninfo:\n  name: deep\nworkflow:\n  a:\n    title: A\n    assign: x\n    outputs:\n      v: \"{deep}\"\n"
    );
    let errors = Workflow::from_yaml(&doc).unwrap_err();
    let text = errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(text.len() < 4096, "{} bytes of errors", text.len());
    assert!(text.contains("has no valid type"), "{text}");
}

/// Valid YAML that aliases a mapping loads; an alias bomb in a workflow is refused.
#[test]
fn workflow_aliases_of_mappings_load_and_bombs_do_not() {
    let doc = "openintent: \"1.0\"\ninfo:\n  name: aliases\nworkflow:\n  a:\n    title: A\n    assign: x\n    outputs: &out\n      v: string\n  b:\n    title: B\n    assign: x\n    depends_on: [a]\n    outputs: *out\n";
    let workflow = Workflow::from_yaml(doc).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(workflow.phases.len(), 2);

    let big = "x".repeat(1 << 20);
    let bomb = format!(
        "openintent: \"1.0\"\ninfo:\n  name: bomb\n  description: &a \"{big}\"\n  tags: [{}]\nworkflow: {{}}\n",
        vec!["*a"; 5000].join(", ")
    );
    // Expanded, it would be 5 GB: that the answer comes at all shows it was not.
    let errors = Workflow::from_yaml(&bomb).unwrap_err();
    assert!(
        errors[0].to_string().contains(
            "too large: over 8388608 nodes and bytes, each alias counted as what it repeats"
        ),
        "{}",
        errors[0]
    );
}

/// Found by the fuzzer: YAML that one parser refuses (a flow collection continued on a line
/// indented less than its parent) used to skip the limits and reach the other parser, which
/// accepted 40 levels of nesting that no longer parsed after rendering. Such YAML is refused.
#[test]
fn yaml_the_limit_checker_cannot_read_is_refused() {
    let text = format!(
        "---\n{FRONTMATTER}metadata: {{x: {}\n1{}}}\n---\n",
        "[".repeat(40),
        "]".repeat(40)
    );
    let err = ToolManifest::parse(&text).unwrap_err();
    assert!(err.problems[0].message.contains("not valid YAML"), "{err}");
    assert_eq!(err.problems[0].line, Some(11));
}

/// Found by the ten-minute fuzz run: a 40 KB input expression made a 78 KB wiring error. Every
/// text of a load-time error is bounded.
#[test]
fn workflow_errors_stay_small_whatever_the_document_holds() {
    let long = "depend".repeat(20_000);
    let doc = format!(
        "openintent: \"1.0\"\ninfo:\n  name: long\nworkflow:\n  a:\n    assign: x\n    inputs:\n      q: $initial_{long}\n      r: {long}.x\n    depends_on: [{long}]\n"
    );
    let errors = Workflow::from_yaml(&doc).unwrap_err();
    assert!(!errors.is_empty());
    for error in &errors {
        let shown = error.to_string();
        assert!(
            shown.len() < 8 * 1024,
            "a {}-byte error: {}",
            shown.len(),
            error.name()
        );
        assert!(error.to_json().to_string().len() < 16 * 1024);
    }
    assert!(errors.iter().any(|e| e.to_string().contains("bytes)")));
}
