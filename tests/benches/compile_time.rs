//! What the macros cost at compile time: 100 tools written with `#[tool]` and the derives,
//! against the same 100 tools with plain serde + schemars derives and a hand-written
//! `impl TypedTool` (and `impl AgentInput` / `AgentOutput`) each.
//!
//! Two crates are generated under `target/compile-time-bench/`, sharing one target directory
//! whose dependencies are built first (not timed). Each is then timed for a full build of the
//! crate itself (after `cargo clean -p`) and an incremental build (after touching one file), in
//! seven rounds that alternate the two crates; the median of the rounds' ratios is printed,
//! with their range. Run with `cargo bench -p agent-io-tests --bench compile_time` (a few
//! minutes; no criterion: a build is one process, timed whole). `COMPILE_BENCH_TOOLS` sets the number of tools.
#![allow(missing_docs)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The tool's two types; `input` and `output` are the extra derives of the argument and the
/// result type (each derives only what the tool uses, as the hand-written side implements
/// only `AgentInput` for the one and `AgentOutput` for the other).
fn tool_types(i: usize, out: &mut String, input: &str, output: &str) {
    let _ = write!(
        out,
        r#"
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema{input})]
pub struct Args{i} {{
    /// What to look for.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    #[schemars(range(min = 1, max = 100))]
    pub limit: u32,
    #[serde(default)]
    pub filters: Vec<String>,
    #[serde(default)]
    pub cursor: Option<String>,
}}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema{output})]
pub struct Out{i} {{
    pub hits: Vec<String>,
    pub next: Option<String>,
    pub total: u64,
}}
"#
    );
}

fn ours(tools: usize) -> String {
    let mut src =
        String::from("#![allow(missing_docs, dead_code)]\nuse io_typed_tool::{ToolError, tool};\n");
    for i in 0..tools {
        tool_types(
            i,
            &mut src,
            ", io_core::AgentInput",
            ", io_core::AgentOutput",
        );
        let _ = write!(
            src,
            r#"
/// Searches corpus {i}.
#[tool(id = "kb.search{i}", version = "1.2.0", idempotent, timeout_ms = 5000)]
pub async fn search{i}(args: Args{i}) -> Result<Out{i}, ToolError> {{
    Ok(Out{i} {{ hits: vec![args.query], next: args.cursor, total: u64::from(args.limit) }})
}}
"#
        );
    }
    src
}

fn plain(tools: usize) -> String {
    let mut src = String::from(
        "#![allow(missing_docs, dead_code)]\nuse io_typed_tool::{ToolContext, ToolContract, ToolError, TypedTool};\n",
    );
    for i in 0..tools {
        tool_types(i, &mut src, "", "");
        let _ = write!(
            src,
            r#"
impl io_core::AgentInput for Args{i} {{}}
impl io_core::AgentOutput for Out{i} {{}}

pub struct Search{i};

impl TypedTool for Search{i} {{
    type Input = Args{i};
    type Output = Out{i};
    const ID: &'static str = "kb.search{i}";

    fn contract() -> ToolContract {{
        let mut contract = ToolContract::new(
            Self::ID,
            "1.2.0",
            "Searches corpus {i}.",
            <Args{i} as io_core::AgentInput>::input_schema().clone(),
            <Out{i} as io_core::AgentOutput>::output_schema().clone(),
        );
        contract.idempotent = true;
        contract.timeout_ms = 5000;
        contract
    }}

    async fn execute_typed(&self, args: Args{i}, _ctx: &ToolContext) -> Result<Out{i}, ToolError> {{
        Ok(Out{i} {{ hits: vec![args.query], next: args.cursor, total: u64::from(args.limit) }})
    }}
}}
"#
        );
    }
    src
}

fn write_crate(dir: &Path, name: &str, source: &str) {
    std::fs::create_dir_all(dir.join("src")).expect("creates the crate");
    let root = root();
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
io-core = {{ path = "{core}" }}
io-typed-tool = {{ path = "{tool}" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1.2"

# A workspace of its own (it lives under this repository's target directory).
[workspace]
"#,
        core = root.join("io-core").display(),
        tool = root.join("io-typed-tool").display(),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("writes the manifest");
    std::fs::write(dir.join("src/lib.rs"), source).expect("writes the source");
}

fn cargo(dir: &Path, target: &Path, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "cargo {args:?} failed in {}",
        dir.display()
    );
    started.elapsed()
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let tools: usize = std::env::var("COMPILE_BENCH_TOOLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let base = root().join("target/compile-time-bench");
    let target = base.join("target");
    let crates = [("bench-ours", ours(tools)), ("bench-plain", plain(tools))];
    for (name, source) in &crates {
        let dir = base.join(name);
        write_crate(&dir, name, source);
        // Dependencies, once, untimed.
        cargo(&dir, &target, &["build", "--quiet", "--offline"]);
    }
    // Interleaved: each round builds both crates, in alternating order, and gives one ratio
    // per kind of build; the median round ratio is reported. (Timing one crate's five builds,
    // then the other's, let the machine's drift between the two halves show as a difference:
    // two such runs gave 1.24× and 1.12× full.)
    const ROUNDS: usize = 7;
    let full = |name: &str| {
        let dir = base.join(name);
        cargo(&dir, &target, &["clean", "--quiet", "-p", name]);
        cargo(&dir, &target, &["build", "--quiet", "--offline"])
    };
    let incremental = |name: &str, round: usize| {
        let dir = base.join(name);
        let lib = dir.join("src/lib.rs");
        let mut text = std::fs::read_to_string(&lib).expect("reads");
        text.push_str(&format!("\n// touch {round}\n"));
        std::fs::write(&lib, text).expect("writes");
        cargo(&dir, &target, &["build", "--quiet", "--offline"])
    };
    let (ours_name, plain_name) = (crates[0].0, crates[1].0);
    let mut times: [Vec<Duration>; 4] = Default::default();
    let (mut full_ratios, mut incremental_ratios) = (Vec::new(), Vec::new());
    // One build of each crate, ours first in even rounds and second in odd ones: (ours, plain).
    let both = |build: &dyn Fn(&str) -> Duration, round: usize| {
        if round.is_multiple_of(2) {
            let ours = build(ours_name);
            (ours, build(plain_name))
        } else {
            let plain = build(plain_name);
            (build(ours_name), plain)
        }
    };
    for round in 0..ROUNDS {
        let (ours_full, plain_full) = both(&full, round);
        let (ours_incremental, plain_incremental) = both(&|name| incremental(name, round), round);
        full_ratios.push(ours_full.as_secs_f64() / plain_full.as_secs_f64());
        incremental_ratios.push(ours_incremental.as_secs_f64() / plain_incremental.as_secs_f64());
        for (all, time) in
            times
                .iter_mut()
                .zip([ours_full, plain_full, ours_incremental, plain_incremental])
        {
            all.push(time);
        }
    }
    let [ours_full, plain_full, ours_incremental, plain_incremental] = times.map(median);
    println!("{ours_name}: full {ours_full:.2?}, incremental {ours_incremental:.2?} (medians)");
    println!("{plain_name}: full {plain_full:.2?}, incremental {plain_incremental:.2?} (medians)");
    let spread = |ratios: &mut Vec<f64>| {
        ratios.sort_by(f64::total_cmp);
        (
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1],
        )
    };
    let (full, full_low, full_high) = spread(&mut full_ratios);
    let (incremental, incremental_low, incremental_high) = spread(&mut incremental_ratios);
    println!(
        "compile time, {tools} tools, `#[tool]` + derives / plain serde + schemars + hand-written impls, median of {ROUNDS} interleaved rounds: full {full:.2}× ({full_low:.2}–{full_high:.2}), incremental {incremental:.2}× ({incremental_low:.2}–{incremental_high:.2})"
    );
}
