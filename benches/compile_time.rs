//! What the macros cost at compile time: 100 tools written with `#[tool]` and the derives,
//! against the same 100 tools with plain serde + schemars derives and a hand-written
//! `impl TypedTool` (and `impl AgentInput` / `AgentOutput`) each.
//!
//! A third crate is the floor of any macro: the same 100 tools written with `#[tool]` and the
//! two derives, from a minimal proc-macro crate that parses its input with syn (as every
//! derive does) and emits exactly the hand-written impls of the plain crate, nothing more: no
//! schema shape, no contract checks, no crate-path lookup. Its ratio to the plain crate is
//! what writing the impls through macros costs at all; ours is compared with both.
//!
//! The crates are generated under `target/compile-time-bench/`, sharing one target directory
//! whose dependencies are built first (not timed). Each is then timed for a full build of the
//! crate itself (after `cargo clean -p`) and an incremental build (after touching one file), in
//! seven rounds that rotate the order of the crates; the median of the rounds' ratios is
//! printed, with their range, for the wall clock and (on Linux) for the CPU time of cargo and
//! the compilers it ran, which a shared machine's other work disturbs less.
//!
//! Run with `cargo bench -p agentio-benches --bench compile_time` (about a quarter of an hour on
//! two cores; no criterion: a build is one process, timed whole). `COMPILE_BENCH_TOOLS` sets
//! the number of tools. `COMPILE_BENCH_BASELINE=/path/to/another/checkout` adds a fourth
//! crate, ours built against that checkout's crates, to the same rounds, and prints ours now
//! against ours then: a change's cost measured in one run.
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

/// The tools written with macros: the derives from `derives` (a crate path) and `tool` (the
/// attribute's path).
fn with_macros(tools: usize, derives: &str, tool: &str) -> String {
    let mut src =
        String::from("#![allow(missing_docs, dead_code)]\nuse agentio_tools::ToolError;\n");
    let (input, output) = (
        format!(", {derives}::AgentInput"),
        format!(", {derives}::AgentOutput"),
    );
    for i in 0..tools {
        tool_types(i, &mut src, &input, &output);
        let _ = write!(
            src,
            r#"
/// Searches corpus {i}.
#[{tool}(id = "kb.search{i}", version = "1.2.0", idempotent, timeout_ms = 5000)]
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
        "#![allow(missing_docs, dead_code)]\nuse agentio_tools::{ToolContext, ToolContract, ToolError, TypedTool};\n",
    );
    for i in 0..tools {
        tool_types(i, &mut src, "", "");
        let _ = write!(
            src,
            r#"
impl agentio_core::AgentInput for Args{i} {{}}
impl agentio_core::AgentOutput for Out{i} {{}}

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
            <Args{i} as agentio_core::AgentInput>::input_schema().clone(),
            <Out{i} as agentio_core::AgentOutput>::output_schema().clone(),
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

/// The floor of any macro: derives and a `#[tool]` that parse their input with syn and emit
/// the plain crate's hand-written impls (the tool's body stays its own function, as it must
/// for any attribute macro that keeps the user's function callable).
const MINIMAL_MACROS: &str = r#"
use proc_macro::TokenStream;
use quote::{format_ident, quote};

#[proc_macro_derive(AgentInput)]
pub fn agent_input(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let ident = &input.ident;
    quote!(impl agentio_core::AgentInput for #ident {}).into()
}

#[proc_macro_derive(AgentOutput)]
pub fn agent_output(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let ident = &input.ident;
    quote!(impl agentio_core::AgentOutput for #ident {}).into()
}

#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let (mut id, mut version, mut idempotent, mut timeout) = (None, None, false, None);
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("id") {
            id = Some(meta.value()?.parse::<syn::LitStr>()?);
        } else if meta.path.is_ident("version") {
            version = Some(meta.value()?.parse::<syn::LitStr>()?);
        } else if meta.path.is_ident("idempotent") {
            idempotent = true;
        } else if meta.path.is_ident("timeout_ms") {
            timeout = Some(meta.value()?.parse::<syn::LitInt>()?);
        }
        Ok(())
    });
    syn::parse_macro_input!(args with parser);
    let function = syn::parse_macro_input!(item as syn::ItemFn);
    let name = &function.sig.ident;
    let description = function.attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_owned()),
            _ => None,
        },
        _ => None,
    }).unwrap_or_default();
    let Some(syn::FnArg::Typed(arg)) = function.sig.inputs.first() else { panic!("one argument") };
    let input_type = &arg.ty;
    let syn::ReturnType::Type(_, result) = &function.sig.output else { panic!("a result") };
    let syn::Type::Path(result) = &**result else { panic!("a result") };
    let syn::PathArguments::AngleBracketed(generic) = &result.path.segments.last().unwrap().arguments else { panic!("a result") };
    let Some(syn::GenericArgument::Type(output_type)) = generic.args.first() else { panic!("a result") };
    let camel: String = name.to_string().split('_').map(|w| {
        let mut c = w.chars();
        c.next().map(|f| f.to_uppercase().chain(c).collect::<String>()).unwrap_or_default()
    }).collect();
    let tool = format_ident!("{}Tool", camel);
    let timeout = timeout.map(|t| quote!(contract.timeout_ms = #t;));
    quote! {
        #function
        pub struct #tool;
        impl agentio_tools::TypedTool for #tool {
            type Input = #input_type;
            type Output = #output_type;
            const ID: &'static str = #id;
            fn contract() -> agentio_tools::ToolContract {
                let mut contract = agentio_tools::ToolContract::new(
                    Self::ID,
                    #version,
                    #description,
                    <#input_type as agentio_core::AgentInput>::input_schema().clone(),
                    <#output_type as agentio_core::AgentOutput>::output_schema().clone(),
                );
                contract.idempotent = #idempotent;
                #timeout
                contract
            }
            async fn execute_typed(&self, args: #input_type, _ctx: &agentio_tools::ToolContext) -> Result<#output_type, agentio_tools::ToolError> {
                #name(args).await
            }
        }
    }
    .into()
}
"#;

/// The minimal macros' crate (a dependency of the minimal crate, built untimed).
fn write_macros(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).expect("creates the crate");
    let manifest = r#"[package]
name = "bench-macros"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
proc-macro = true

[dependencies]
syn = { version = "3", default-features = false, features = ["full", "parsing", "printing", "proc-macro"] }
quote = "1"

[workspace]
"#;
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("writes the manifest");
    std::fs::write(dir.join("src/lib.rs"), MINIMAL_MACROS).expect("writes the source");
}

/// A bench crate; `extra` is more of its `[dependencies]`.
fn write_crate(dir: &Path, name: &str, source: &str, extra: &str, root: &Path) {
    std::fs::create_dir_all(dir.join("src")).expect("creates the crate");
    let manifest = format!(
        r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
agentio-core = {{ path = "{core}" }}
agentio-tools = {{ path = "{tool}" }}
serde = {{ version = "1", features = ["derive"] }}
schemars = "1.2"
{extra}
# A workspace of its own (it lives under this repository's target directory).
[workspace]
"#,
        core = root.join("io-core").display(),
        tool = root.join("io-typed-tool").display(),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("writes the manifest");
    std::fs::write(dir.join("src/lib.rs"), source).expect("writes the source");
}

/// One build's cost: its wall-clock time, and the CPU time of cargo and the compilers it ran
/// (Linux only; less disturbed by a shared machine's other work than the wall clock).
#[derive(Clone, Copy, Default)]
struct Cost {
    wall: Duration,
    cpu: Option<Duration>,
}

/// The CPU time (user + system) of this process's waited-for children so far, from
/// `/proc/self/stat` (`cutime` and `cstime`), in ticks of 10 ms (`USER_HZ` is 100 on Linux;
/// the ratios do not depend on it).
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may contain spaces:
    // state is field 3, `cutime` 16 and `cstime` 17.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = |field: usize| fields.get(field - 3)?.parse::<u64>().ok();
    Some(Duration::from_millis((ticks(16)? + ticks(17)?) * 10))
}

fn cargo(dir: &Path, target: &Path, args: &[&str]) -> Cost {
    let cpu_before = children_cpu();
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
    let wall = started.elapsed();
    let cpu = cpu_before
        .zip(children_cpu())
        .map(|(before, after)| after - before);
    Cost { wall, cpu }
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
    write_macros(&base.join("bench-macros"));
    let macros = format!(
        "bench-macros = {{ path = \"{}\" }}\n",
        base.join("bench-macros").display()
    );
    // Ours, the plain floor, the floor of any macro, and (with a baseline) ours then.
    let here = root();
    let baseline = std::env::var_os("COMPILE_BENCH_BASELINE").map(PathBuf::from);
    let mut crates = vec![
        (
            "bench-ours",
            with_macros(tools, "agentio_core", "agentio_tools::tool"),
            "",
            here.clone(),
        ),
        ("bench-plain", plain(tools), "", here.clone()),
        (
            "bench-minimal",
            with_macros(tools, "bench_macros", "bench_macros::tool"),
            macros.as_str(),
            here.clone(),
        ),
    ];
    if let Some(baseline) = &baseline {
        crates.push((
            "bench-ours-before",
            with_macros(tools, "agentio_core", "agentio_tools::tool"),
            "",
            baseline.clone(),
        ));
    }
    for (name, source, extra, root) in &crates {
        let dir = base.join(name);
        write_crate(&dir, name, source, extra, root);
        // Dependencies, once, untimed.
        cargo(&dir, &target, &["build", "--quiet", "--offline"]);
    }
    // Interleaved: each round builds every crate, in an order rotated by the round, and gives
    // one ratio per kind of build; the median round ratio is reported. (Timing one crate's
    // five builds, then the other's, let the machine's drift between the two halves show as
    // a difference: two such runs gave 1.24× and 1.12× full.)
    const ROUNDS: usize = 7;
    let full = |name: &str| {
        let dir = base.join(name);
        // The clean is not part of the build, and not counted.
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
    let names: Vec<&str> = crates.iter().map(|(name, ..)| *name).collect();
    let count = names.len();
    // One build of each crate, starting with crate `round % count`: [ours, plain, minimal,
    // (ours before)].
    let each = |build: &dyn Fn(&str) -> Cost, round: usize| {
        let mut costs = vec![Cost::default(); count];
        for k in 0..count {
            let at = (round + k) % count;
            costs[at] = build(names[at]);
        }
        costs
    };
    // [full, incremental] × [ours, plain, minimal, (ours before)], every round.
    let mut costs: [Vec<Vec<Cost>>; 2] = [vec![Vec::new(); count], vec![Vec::new(); count]];
    for round in 0..ROUNDS {
        let full = each(&full, round);
        let incremental = each(&|name| incremental(name, round), round);
        for (kind, built) in [full, incremental].into_iter().enumerate() {
            for (at, cost) in built.into_iter().enumerate() {
                costs[kind][at].push(cost);
            }
        }
    }
    let cpu_measured = costs.iter().flatten().flatten().all(|c| c.cpu.is_some());
    let wall: fn(&Cost) -> Duration = |c| c.wall;
    let cpu: fn(&Cost) -> Duration = |c| c.cpu.unwrap_or_default();
    for (at, name) in names.iter().enumerate() {
        // A build's median wall clock, with its median CPU time when that was measured.
        let time = |kind: usize| {
            let of = |measure: fn(&Cost) -> Duration| {
                median(costs[kind][at].iter().map(measure).collect())
            };
            let cpu = if cpu_measured {
                format!(" ({:.2?} CPU)", of(cpu))
            } else {
                String::new()
            };
            format!("{:.2?}{cpu}", of(wall))
        };
        println!(
            "{name}: full {}, incremental {} (medians)",
            time(0),
            time(1)
        );
    }
    // The median of the rounds' ratios of crate `a` to crate `b`, and their range.
    let ratio = |kind: usize, a: usize, b: usize, of: fn(&Cost) -> Duration| {
        let mut ratios: Vec<f64> = (0..ROUNDS)
            .map(|round| {
                of(&costs[kind][a][round]).as_secs_f64() / of(&costs[kind][b][round]).as_secs_f64()
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        format!(
            "{:.2}× ({:.2}–{:.2})",
            ratios[ROUNDS / 2],
            ratios[0],
            ratios[ROUNDS - 1]
        )
    };
    let mut rows = vec![
        (
            "`#[tool]` + derives / plain serde + schemars + hand-written impls",
            0,
            1,
        ),
        (
            "the minimal macros / the same plain crate (the floor of any macro)",
            2,
            1,
        ),
        ("`#[tool]` + derives / the minimal macros", 0, 2),
    ];
    if baseline.is_some() {
        rows.push((
            "`#[tool]` + derives now / the same against the baseline",
            0,
            3,
        ));
    }
    for (what, a, b) in rows {
        println!(
            "compile time, {tools} tools, {what}, median of {ROUNDS} interleaved rounds: full {}, incremental {} (wall clock)",
            ratio(0, a, b, wall),
            ratio(1, a, b, wall)
        );
        if cpu_measured {
            println!(
                "    CPU time: full {}, incremental {}",
                ratio(0, a, b, cpu),
                ratio(1, a, b, cpu)
            );
        }
    }
}
