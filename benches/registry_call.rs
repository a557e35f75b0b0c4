//! One validated tool call against the serde floor, in the peers' harness shape: the tool takes
//! `SearchArgs {query, limit 1..=100, filters, cursor}` and returns ten hits; the floor is
//! "decode from a borrowed `Value`, run the body, `to_value` the output".
//!
//! Rows (each a ratio to the floor, measured in one run; a paired interleaved measurement of
//! the main ones follows, since criterion's rows run seconds apart):
//! - `registry_call`: `ToolRegistry::call`, validated both ways (residual validation), each
//!   call under Tokio's `block_on`.
//! - `registry_call_in_place`: the same call polled on the caller's thread inside the runtime's
//!   context, as a host already running on its executor awaits it (no `block_on` per call).
//! - `registry_call_awaited`: the same call as a task awaits it: polled once, in the runtime's
//!   context, with a no-op waker (the body never waits), so that no executor's per-call set-up
//!   (`pollster`'s signal and parking, Tokio's `block_on`) is counted.
//! - `registry_call_nothing_to_check`: in place, a tool whose types leave serde nothing to
//!   check (no bounds; an integer score): the registry's own cost, validation aside.
//! - `runtime_turn`: `AgentRuntime::run_turn_in` over a core with the same body, validated.
//! - (paired only) the floor validated both ways (`from_input_value`, the body,
//!   `to_output_value`) with no registry and no future: what checking costs on its own.
//! - (paired only) the floor itself under Tokio's `block_on`: what the executor's per-call
//!   entry costs any async call, against which the `registry_call` row is read.
//! - `erased_turn`: `ErasedAgentCore::run_turn_erased`, no validation.
//! - `plugin_execute`: `ToolPlugin::execute`: the input decoded without its check (the
//!   registry checks it first), the output checked.
//! - `bytes`: the body and `to_output_json` (checked, straight to text), against
//!   `floor_to_string` (the floor plus `serde_json::to_string` of its `Value`) and against
//!   `floor_direct_string` (decode, the body, `serde_json::to_string(&output)` written straight
//!   from the typed value: the floor a user writes when text is what they need, validating
//!   nothing).
//!
//! Run with `cargo bench -p agentio-benches --bench registry_call`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentio_core::{
    AgentContext, AgentCore, AgentError, AgentInput, AgentOutput, AgentRuntime, ErasedAgentCore,
};
use agentio_tools::{ToolContext, ToolError, ToolPlugin, ToolRegistry, tool};
use criterion::Criterion;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

mod search;
use search::{SearchArgs, SearchResult, SearchTool, body};

/// The same input with nothing for a schema to add to serde: no bounds, no lengths.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
pub struct PlainArgs {
    pub query: String,
    pub limit: u32,
    #[serde(default)]
    pub filters: Vec<String>,
    #[serde(default)]
    pub cursor: Option<String>,
}

/// A hit with no bound on its score, an integer (an `f64` leaves `type: number` to check: a
/// NaN is written as `null`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct PlainHit {
    pub id: String,
    pub title: String,
    pub score: u32,
}

/// The result with nothing left to check.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct PlainResult {
    pub hits: Vec<PlainHit>,
    pub next_cursor: Option<String>,
}

/// Searches, with types whose schemas serde enforces whole: the registry's own cost.
#[tool(id = "kb.search-plain", idempotent)]
async fn search_plain(args: PlainArgs) -> Result<PlainResult, ToolError> {
    Ok(PlainResult {
        hits: (0..args.limit.min(10))
            .map(|i| PlainHit {
                id: format!("doc-{i}"),
                title: format!("{} result {i}", args.query),
                score: 1000 / (i + 1),
            })
            .collect(),
        next_cursor: Some("page-2".into()),
    })
}

/// One validated turn of `runtime` on `arguments`, in a context the runtime builds.
fn turn(runtime: &mut AgentRuntime, arguments: &serde_json::Value) -> serde_json::Value {
    let mut ctx = runtime.context("run");
    pollster::block_on(runtime.run_turn_in(arguments.clone(), &mut ctx)).expect("ok")
}

/// One erased turn of `core` on `arguments`, no validation.
fn erased_turn(
    core: &mut dyn ErasedAgentCore,
    ctx: &mut AgentContext,
    arguments: &serde_json::Value,
) -> serde_json::Value {
    pollster::block_on(core.run_turn_erased(arguments.clone(), ctx)).expect("ok")
}

struct Searcher;

impl AgentCore for Searcher {
    type Input = SearchArgs;
    type Output = SearchResult;

    fn core_type(&self) -> &str {
        "searcher"
    }

    async fn run_turn(
        &mut self,
        input: SearchArgs,
        _: &mut AgentContext,
    ) -> Result<SearchResult, AgentError> {
        Ok(body(&input))
    }
}

fn main() {
    let arguments = json!({ "query": "invoices", "limit": 10, "filters": ["billing"] });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let mut registry = ToolRegistry::new();
    registry.register(SearchTool).expect("registers");
    registry.register(SearchPlainTool).expect("registers");
    // The rows below rely on it: the plain tool's types leave nothing to check but the
    // input's type.
    assert_eq!(
        PlainResult::output_boundary().residual_schema(),
        Some(&serde_json::Value::Bool(true))
    );
    // (An input keeps `type: object`: serde's derive would also take a struct from an array.)
    assert!(
        PlainArgs::input_boundary()
            .residual_schema()
            .is_some_and(|residual| residual.get("properties").is_none())
    );
    let mut core_runtime = AgentRuntime::new(Searcher);
    let mut erased: Box<dyn ErasedAgentCore> = Box::new(Searcher);
    let plugin = SearchTool;
    let tool_ctx = ToolContext::new("run", "kb.search");

    // `REGISTRY_CALL_SIZES=1`: the sizes of a call's and a turn's futures, which a host that
    // spawns them copies whole.
    if std::env::var("REGISTRY_CALL_SIZES").is_ok() {
        let f = registry.call("kb.search", arguments.clone());
        println!("call future: {} bytes", std::mem::size_of_val(&f));
        let mut ctx = core_runtime.context("run");
        let t = core_runtime.run_turn_in(arguments.clone(), &mut ctx);
        println!("turn future: {} bytes", std::mem::size_of_val(&t));
        drop(t);
        drop(f);
        return;
    }
    let floor = || {
        let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
        black_box(serde_json::to_value(body(&args)).expect("encodes"))
    };
    let call = || {
        black_box(
            runtime
                .block_on(registry.call("kb.search", arguments.clone()))
                .expect("ok"),
        )
    };

    // The same call polled in place on the caller's thread, inside the runtime's context (the
    // registry runs its attempt there on a current-thread runtime): what a call costs a host
    // that is already running on its executor, without a `block_on` per call. Valid here
    // because the body never waits.
    let call_in_place = || {
        let _entered = runtime.enter();
        black_box(pollster::block_on(registry.call("kb.search", arguments.clone())).expect("ok"))
    };
    // The same call polled once with a no-op waker: what awaiting it adds to a task that is
    // already running (valid because the body never waits; a call that did would be polled
    // again, by its task, when woken).
    let call_awaited = || {
        let _entered = runtime.enter();
        let mut call = std::pin::pin!(registry.call("kb.search", arguments.clone()));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match call.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(result) => black_box(result.expect("ok")),
            std::task::Poll::Pending => unreachable!("the body never waits"),
        }
    };
    // The floor validated both ways and nothing else (no registry, no future): what checking
    // costs on its own, the registry's lower bound.
    let validated_floor = || {
        let owned = arguments.clone();
        let args = SearchArgs::from_input_value(black_box(&owned)).expect("valid");
        drop(owned);
        black_box(body(&args).to_output_value().expect("valid"))
    };
    let call_plain = || {
        let _entered = runtime.enter();
        black_box(
            pollster::block_on(registry.call("kb.search-plain", arguments.clone())).expect("ok"),
        )
    };
    let floor_clone = || {
        let owned = arguments.clone();
        let args = SearchArgs::deserialize(black_box(&owned)).expect("decodes");
        drop(owned);
        black_box(serde_json::to_value(body(&args)).expect("encodes"))
    };

    let floor_to_string = || {
        let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
        let value = serde_json::to_value(body(&args)).expect("encodes");
        black_box(serde_json::to_string(&value).expect("writes"))
    };
    let floor_direct_string = || {
        let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
        black_box(serde_json::to_string(&body(&args)).expect("writes"))
    };
    let bytes = || {
        let args = SearchArgs::from_input_value(black_box(&arguments)).expect("valid");
        black_box(body(&args).to_output_json().expect("valid"))
    };

    // `REGISTRY_CALL_PROFILE=registry|in_place|awaited|validated|plain|turn|erased|floor|floor_clone|bytes|floor_to_string|floor_direct_string`
    // (and `REGISTRY_CALL_COUNT`, default 10000): that row's calls and nothing else, for an
    // instruction-count profile (`valgrind --tool=callgrind`) that says where the difference
    // goes; two counts' difference removes the setup.
    if let Ok(which) = std::env::var("REGISTRY_CALL_PROFILE") {
        let calls: usize = std::env::var("REGISTRY_CALL_COUNT")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(10_000);
        for _ in 0..calls {
            match which.as_str() {
                "registry" => drop(call()),
                "in_place" => drop(call_in_place()),
                "awaited" => drop(call_awaited()),
                "validated" => drop(validated_floor()),
                "plain" => drop(call_plain()),
                "erased" => {
                    drop(black_box(erased_turn(
                        erased.as_mut(),
                        &mut AgentContext::new("run"),
                        &arguments,
                    )));
                }
                "floor_clone" => drop(floor_clone()),
                "turn" => {
                    drop(black_box(turn(&mut core_runtime, &arguments)));
                }
                "bytes" => drop(bytes()),
                "floor_to_string" => drop(floor_to_string()),
                "floor_direct_string" => drop(floor_direct_string()),
                _ => drop(floor()),
            }
        }
        return;
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let mut group = c.benchmark_group("registry_call");
    group.bench_function("serde_floor", |b| b.iter(floor));
    // The input is cloned inside every row that takes it by value, and in the floor's
    // comparison below: the clone is timed on both sides.
    group.bench_function("floor_with_clone", |b| b.iter(floor_clone));
    group.bench_function("registry_call", |b| b.iter(call));
    group.bench_function("registry_call_in_place", |b| b.iter(call_in_place));
    group.bench_function("registry_call_awaited", |b| b.iter(call_awaited));
    group.bench_function("registry_call_nothing_to_check", |b| b.iter(call_plain));
    group.bench_function("runtime_turn", |b| {
        b.iter(|| black_box(turn(&mut core_runtime, &arguments)))
    });
    group.bench_function("erased_turn", |b| {
        let mut ctx = AgentContext::new("run");
        b.iter(|| black_box(erased_turn(erased.as_mut(), &mut ctx, &arguments)))
    });
    group.bench_function("plugin_execute", |b| {
        b.iter(|| {
            black_box(pollster::block_on(plugin.execute(arguments.clone(), &tool_ctx)).expect("ok"))
        })
    });
    group.bench_function("floor_to_string", |b| b.iter(floor_to_string));
    group.bench_function("floor_direct_string", |b| b.iter(floor_direct_string));
    group.bench_function("bytes", |b| b.iter(bytes));
    group.finish();
    c.final_summary();

    // Paired, interleaved: each row against the floor with the clone, in alternating bursts.
    let time = |f: &mut dyn FnMut(), n: u32| {
        let started = Instant::now();
        for _ in 0..n {
            f();
        }
        started.elapsed().as_secs_f64() / f64::from(n)
    };
    // The floor itself under `block_on`: what Tokio's per-call entry costs any async call,
    // the registry's `block_on` row included.
    let floor_block_on = || runtime.block_on(async { floor_clone() });
    let mut floor_clone = || {
        floor_clone();
    };
    type Row<'a> = (&'static str, Box<dyn FnMut() + 'a>);
    let mut rows: Vec<Row<'_>> = vec![
        (
            "registry_call (validated both ways)",
            Box::new(|| {
                call();
            }),
        ),
        (
            "registry_call in place (validated)",
            Box::new(|| {
                call_in_place();
            }),
        ),
        (
            "registry_call awaited (one poll, validated)",
            Box::new(|| {
                call_awaited();
            }),
        ),
        (
            "registry_call in place, nothing to check",
            Box::new(|| {
                call_plain();
            }),
        ),
        (
            "the floor validated both ways, no registry",
            Box::new(|| {
                validated_floor();
            }),
        ),
        (
            "the floor itself under block_on",
            Box::new(|| {
                floor_block_on();
            }),
        ),
        (
            "runtime_turn (validated both ways)",
            Box::new(|| {
                black_box(turn(&mut core_runtime, &arguments));
            }),
        ),
        (
            "erased_turn (no validation)",
            Box::new(|| {
                black_box(erased_turn(
                    erased.as_mut(),
                    &mut AgentContext::new("run"),
                    &arguments,
                ));
            }),
        ),
    ];
    println!(
        "\npaired with the floor (decode from a borrowed Value + body + to_value, input clone included), median of 31 rounds:"
    );
    for (name, row) in &mut rows {
        let n = 2000;
        let mut ratios: Vec<f64> = (0..31)
            .map(|round| {
                if round % 2 == 0 {
                    let a = time(row.as_mut(), n);
                    a / time(&mut floor_clone, n)
                } else {
                    let f = time(&mut floor_clone, n);
                    time(row.as_mut(), n) / f
                }
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        println!("  {name:42} {:.2}× floor", ratios[15]);
    }
    let mut floor_text = || {
        let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
        let value = serde_json::to_value(body(&args)).expect("encodes");
        black_box(serde_json::to_string(&value).expect("writes"));
    };
    let mut bytes = || {
        let args = SearchArgs::from_input_value(black_box(&arguments)).expect("valid");
        black_box(body(&args).to_output_json().expect("valid"));
    };
    let mut floor_direct = || {
        let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
        black_box(serde_json::to_string(&body(&args)).expect("writes"));
    };
    let paired = |a: &mut dyn FnMut(), b: &mut dyn FnMut()| {
        let mut ratios: Vec<f64> = (0..31)
            .map(|round| {
                if round % 2 == 0 {
                    time(a, 2000) / time(b, 2000)
                } else {
                    let d = time(b, 2000);
                    time(a, 2000) / d
                }
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        ratios[15]
    };
    let via_value = paired(&mut bytes, &mut floor_text);
    let direct = paired(&mut bytes, &mut floor_direct);
    println!(
        "  {:40} {:.2}× floor + to_string of its Value (validated both ways)",
        "bytes (from_input_value, to_output_json)", via_value
    );
    println!(
        "  {:40} {:.2}× floor + to_string(&output), no Value (validated both ways)",
        "bytes (from_input_value, to_output_json)", direct
    );
}
