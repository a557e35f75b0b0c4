//! One MCP `tools/call`, handled by our server and by rmcp's `#[tool_router]`, for the same
//! tool, each as a ratio to the serde floor, measured in one run.
//!
//! - `serde_floor`: decode the arguments from a borrowed `Value`, run the body, `to_value` the
//!   output: the least any JSON-speaking tool host must do.
//! - `rmcp_tool_router`: rmcp's `#[tool_router]` + `#[tool_handler]` server, structured output
//!   through `Json<T>`; it validates neither the arguments nor the output against the schemas
//!   it advertises.
//! - `agent_io_server`: [`agentio_mcp::McpServer`] over a `ToolRegistry`: both ways validated, the
//!   contract's timeout, audit (no sink here, as rmcp has none), and the envelope on failure.
//! - `rmcp_tool_router_serde_writer`: rmcp's router again, its tool writing the result as ours
//!   does (the text block by serde's writer, `serde_json::to_string(&value)`), where `Json<T>`
//!   goes through `CallToolResult::structured`, whose text is `Value`'s `Display` (`fmt`, about
//!   three times the cost). Where parity comes from: validating both ways costs ours what the
//!   cheaper writer saves it; against this row, with the same writer on both sides, the
//!   validation is what remains.
//!
//! Both servers are driven by the same rmcp client over the same in-process duplex pipe on a
//! current-thread runtime, so the transport, JSON-RPC framing and client cost the same in both
//! rows. Run with `cargo bench -p agentio-benches --bench mcp_call`; the ratios are printed at the end.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use agentio_core::{AgentInput, AgentOutput};
use agentio_mcp::McpServer;
use agentio_tools::{ToolError, ToolRegistry, tool};
use criterion::Criterion;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServerHandler, ServiceExt, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentInput)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// How many hits.
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    /// Only these tags.
    #[serde(default)]
    pub filters: Vec<String>,
    /// Where the previous page ended.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `AgentOutput` on a nested type lets the fast path trust its structure (serde writes it),
/// leaving only its `score` range to check; rmcp's server uses the same type.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct Hit {
    pub id: String,
    pub title: String,
    #[schemars(range(min = 0.0, max = 1.0))]
    pub score: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, AgentOutput)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub next_cursor: Option<String>,
}

fn search_body(args: &SearchArgs) -> SearchResult {
    let hits = (0..args.limit.min(10))
        .map(|i| Hit {
            id: format!("doc-{i}"),
            title: format!("{} result {i}", args.query),
            score: 1.0 / f64::from(i + 1),
        })
        .collect();
    SearchResult {
        hits,
        next_cursor: Some("page-2".into()),
    }
}

/// Searches the knowledge base.
#[tool(id = "kb.search", idempotent)]
async fn search(args: SearchArgs) -> Result<SearchResult, ToolError> {
    Ok(search_body(&args))
}

#[derive(Clone)]
pub struct RmcpServer {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpServer {
    /// Searches the knowledge base.
    #[rmcp::tool(name = "kb.search")]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<Json<SearchResult>, rmcp::ErrorData> {
        Ok(Json(search_body(&args)))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpServer {}

/// rmcp's router with the same text writer as ours.
#[derive(Clone)]
pub struct RmcpSameWriter {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpSameWriter {
    /// Searches the knowledge base.
    #[rmcp::tool(name = "kb.search")]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, rmcp::ErrorData> {
        let value = serde_json::to_value(search_body(&args))
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))?;
        let text = serde_json::to_string(&value).unwrap_or_default();
        let mut answer = CallToolResult::success(vec![ContentBlock::text(text)]);
        answer.structured_content = Some(value);
        Ok(answer)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpSameWriter {}

async fn connect<S: ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    let (server_side, client_side) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_side).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_side).await.expect("the client connects")
}

fn params(arguments: &Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments.clone() else {
        unreachable!()
    };
    CallToolRequestParams::new("kb.search").with_arguments(arguments)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let arguments = json!({ "query": "invoices", "limit": 10, "filters": ["billing"] });

    let mut registry = ToolRegistry::new();
    registry.register(SearchTool).expect("registers");
    let (ours, theirs, same_writer) = runtime.block_on(async {
        let ours = connect(McpServer::new(registry).expect("exports")).await;
        let theirs = connect(RmcpServer {
            tool_router: RmcpServer::tool_router(),
        })
        .await;
        let same_writer = connect(RmcpSameWriter {
            tool_router: RmcpSameWriter::tool_router(),
        })
        .await;
        (ours, theirs, same_writer)
    });
    // All three answer the same structured value, and the same text.
    let (a, b, c) = runtime.block_on(async {
        (
            ours.call_tool(params(&arguments)).await.expect("ours"),
            theirs.call_tool(params(&arguments)).await.expect("theirs"),
            same_writer
                .call_tool(params(&arguments))
                .await
                .expect("same writer"),
        )
    });
    assert_eq!(a.structured_content, b.structured_content);
    assert_eq!(a.structured_content, c.structured_content);
    assert_eq!(a.content, c.content);

    // `MCP_CALL_PAIRED=1`: the paired comparison alone (below), without criterion's rows.
    if std::env::var_os("MCP_CALL_PAIRED").is_some() {
        paired(&runtime, &ours, &theirs, &arguments, "rmcp_tool_router");
        paired(
            &runtime,
            &ours,
            &same_writer,
            &arguments,
            "rmcp_tool_router_serde_writer",
        );
        return;
    }
    // `MCP_CALL_PROFILE=ours|theirs N`: N calls of one server and nothing else, for an
    // instruction-count profile (`valgrind --tool=callgrind`) that attributes the difference.
    if let Ok(which) = std::env::var("MCP_CALL_PROFILE") {
        let calls: usize = std::env::var("MCP_CALL_COUNT")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1000);
        let client = match which.as_str() {
            "ours" => &ours,
            "same_writer" => &same_writer,
            _ => &theirs,
        };
        runtime.block_on(async {
            for _ in 0..calls {
                black_box(client.call_tool(params(&arguments)).await.expect("ok"));
            }
        });
        return;
    }
    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    let mut group = criterion.benchmark_group("mcp_tools_call");
    group.bench_function("serde_floor", |b| {
        b.iter(|| {
            let args = SearchArgs::deserialize(black_box(&arguments)).expect("decodes");
            black_box(serde_json::to_value(search_body(&args)).expect("encodes"))
        })
    });
    // Where the difference comes from: the two schema checks our server makes and rmcp skips.
    let input_schema = <SearchArgs as AgentInput>::input_boundary();
    let output_value = serde_json::to_value(search_body(
        &SearchArgs::deserialize(&arguments).expect("decodes"),
    ))
    .expect("encodes");
    let output_schema = <SearchResult as AgentOutput>::output_boundary();
    group.bench_function("validate_input_and_output", |b| {
        b.iter(|| {
            input_schema.validate(black_box(&arguments)).expect("valid");
            output_schema
                .validate(black_box(&output_value))
                .expect("valid")
        })
    });
    group.bench_function("rmcp_tool_router", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(theirs.call_tool(params(&arguments)))
                    .expect("ok"),
            )
        })
    });
    group.bench_function("agent_io_server", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(ours.call_tool(params(&arguments)))
                    .expect("ok"),
            )
        })
    });
    group.bench_function("rmcp_tool_router_serde_writer", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(same_writer.call_tool(params(&arguments)))
                    .expect("ok"),
            )
        })
    });
    // Once more, after ours: a row's place in the run must not decide the comparison.
    group.bench_function("rmcp_tool_router_again", |b| {
        b.iter(|| {
            black_box(
                runtime
                    .block_on(theirs.call_tool(params(&arguments)))
                    .expect("ok"),
            )
        })
    });
    group.finish();
    criterion.final_summary();
    report();
    paired(&runtime, &ours, &theirs, &arguments, "rmcp_tool_router");
    paired(
        &runtime,
        &ours,
        &same_writer,
        &arguments,
        "rmcp_tool_router_serde_writer",
    );
}

/// The two servers measured in alternating bursts (about 20 ms each, 61 rounds, which one
/// goes first alternating too), so that drift in the machine's speed lands on both alike; the
/// ratio is the median of the per-round ratios. This is the comparison the done-when asks for:
/// criterion's rows above run seconds apart.
fn paired(
    runtime: &tokio::runtime::Runtime,
    ours: &RunningService<RoleClient, ()>,
    theirs: &RunningService<RoleClient, ()>,
    arguments: &Value,
    name: &str,
) {
    let burst = |client: &RunningService<RoleClient, ()>, calls: u32| {
        let started = std::time::Instant::now();
        runtime.block_on(async {
            for _ in 0..calls {
                black_box(client.call_tool(params(arguments)).await.expect("ok"));
            }
        });
        started.elapsed().as_secs_f64() / f64::from(calls)
    };
    // Calibrate a burst to about 20 ms.
    let per_call = burst(theirs, 200);
    let calls = ((0.02 / per_call) as u32).clamp(50, 5000);
    let mut ratios = Vec::new();
    for round in 0..61 {
        let (a, b) = if round % 2 == 0 {
            let a = burst(ours, calls);
            (a, burst(theirs, calls))
        } else {
            let b = burst(theirs, calls);
            (burst(ours, calls), b)
        };
        ratios.push(a / b);
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    let (q1, q3) = (ratios[ratios.len() / 4], ratios[3 * ratios.len() / 4]);
    println!(
        "paired, interleaved bursts of {calls} calls, 61 rounds: agent_io_server / {name} median {median:.3} (quartiles {q1:.3}–{q3:.3})"
    );
}

/// The medians of this run, as ratios to the floor.
fn report() {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("criterion/mcp_tools_call");
    let median = |name: &str| -> Option<f64> {
        let text = std::fs::read_to_string(dir.join(name).join("new/estimates.json")).ok()?;
        let value: Value = serde_json::from_str(&text).ok()?;
        value["median"]["point_estimate"].as_f64()
    };
    let Some(floor) = median("serde_floor") else {
        return;
    };
    println!("\nmcp tools/call, median, as a ratio to the serde floor ({floor:.0} ns):");
    for name in [
        "validate_input_and_output",
        "rmcp_tool_router",
        "agent_io_server",
        "rmcp_tool_router_serde_writer",
        "rmcp_tool_router_again",
    ] {
        if let Some(time) = median(name) {
            println!(
                "  {name:26} {:>8.2} µs  {:>6.2}× floor",
                time / 1000.0,
                time / floor
            );
        }
    }
    if let (Some(ours), Some(before), Some(after)) = (
        median("agent_io_server"),
        median("rmcp_tool_router"),
        median("rmcp_tool_router_again"),
    ) {
        // rmcp is measured before and after ours: compare with the mean of the two, so that a
        // row's place in the run does not decide the comparison.
        let theirs = (before + after) / 2.0;
        println!(
            "  agent_io_server / rmcp_tool_router (mean of its two rows) = {:.3}",
            ours / theirs
        );
    }
}
