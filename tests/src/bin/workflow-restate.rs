//! Durable runs on a Restate server with two worker processes, one killed mid-run (`.ci/run`
//! starts the server, from the npm package `@restatedev/restate-server`, and runs this).
//!
//! `workflow-restate check INGRESS ADMIN`:
//!
//! 1. Starts two workers (`a`, `b`: processes of this binary, `workflow-restate worker NAME
//!    PORT EFFECTS`), each serving `agentio_workflow::restate::RestateWorkflows` with the
//!    durable tests' workflow (`agentio_tests::durable_fixture`), and one address in front of
//!    them that sends each connection to `a` while it is up and to `b` after (what a load
//!    balancer does for a dead instance); registers that address with Restate.
//! 2. Starts run `r-<millis>` on Restate. Its `left` phase's agent takes a second; once it has
//!    started on `a`, `a` is killed (`SIGKILL`). Restate sends the run to `b`, which replays it
//!    from Restate's journal: `fetch` (recorded) is not run again, `left` is.
//! 3. The run suspends at `approve`; the check resumes it (`resume` handler, the answer
//!    `{"ok": true}`), attaches to the run and reads its outcome.
//!
//! Checked: the run succeeded with the outputs of the same workflow run uninterrupted on the
//! embedded journal; each phase's side effect happened exactly once; `fetch` ran once (on `a`),
//! `left` on both, everything after the kill on `b`. Exits non-zero, naming what failed.
//!
//! `workflow-restate bench INGRESS ADMIN [PHASES]`: a chain of PHASES phases (default 10,000)
//! run on Restate by one worker, against the in-memory executor in this process: phase
//! transitions per second and the overhead per transition (the README's table).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentio_tests::durable_fixture::{Counting, chain, executor};
use agentio_workflow::journal::Journal;
use agentio_workflow::restate::RestateWorkflows;
use serde_json::{Value, json};

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["worker", name, port, effects] => runtime.block_on(worker(name, port.parse()?, effects)),
        ["check", ingress, admin] => runtime.block_on(check(ingress, admin)),
        ["bench", ingress, admin, rest @ ..] => {
            let phases = rest.first().map_or(Ok(10_000), |n| n.parse())?;
            runtime.block_on(bench(ingress, admin, phases))
        }
        _ => Err(
            "usage: workflow-restate check|bench INGRESS ADMIN [PHASES] | worker NAME PORT EFFECTS"
                .into(),
        ),
    }
}

/// The workflows a worker serves: the durable tests' workflow (its `left` agent slow) and the
/// bench's chains.
async fn worker(name: &str, port: u16, effects: &str) -> Result<(), Failure> {
    let counting = Counting {
        effects: effects.to_owned(),
        worker: name.to_owned(),
        slow: Some(("left".into(), Duration::from_secs(1))),
    };
    let mut workflows = RestateWorkflows::new()
        .with(executor(effects, Some(counting)))
        .map_err(|p| format!("{p:?}"))?;
    for n in [100, 1_000, 10_000] {
        workflows = workflows.with(chain(n)).map_err(|p| format!("{p:?}"))?;
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("READY {name}");
    workflows.listen(listener).await;
    Ok(())
}

fn free_port() -> Result<u16, Failure> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// Starts a worker process and waits until it listens.
fn spawn_worker(name: &str, port: u16, effects: &Path) -> Result<Child, Failure> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["worker", name, &port.to_string()])
        .arg(effects)
        .stdout(Stdio::piped())
        .spawn()?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line)?;
    if line.trim() != format!("READY {name}") {
        return Err(format!("worker {name} did not start: {line:?}").into());
    }
    Ok(child)
}

/// One address for the workers: each connection goes to the first worker that accepts it.
async fn front(workers: Vec<SocketAddr>) -> Result<SocketAddr, Failure> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let workers = workers.clone();
            tokio::spawn(async move {
                for worker in workers {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(worker).await {
                        let _ = outbound.set_nodelay(true);
                        let _ = inbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        return;
                    }
                }
            });
        }
    });
    Ok(address)
}

async fn post(client: &reqwest::Client, url: &str, body: &Value) -> Result<Value, Failure> {
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(format!("POST {url}: {status}: {text}").into());
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn get(client: &reqwest::Client, url: &str) -> Result<Value, Failure> {
    let response = client.get(url).send().await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        return Err(format!("GET {url}: {status}: {text}").into());
    }
    Ok(serde_json::from_str(&text)?)
}

/// Registers the workers' address with Restate (again, forced: a new run of the check has new
/// ports).
async fn register(
    client: &reqwest::Client,
    admin: &str,
    address: SocketAddr,
) -> Result<(), Failure> {
    let body = json!({ "uri": format!("http://{address}"), "force": true });
    post(client, &format!("{admin}/deployments"), &body).await?;
    Ok(())
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

async fn wait_for(what: &str, mut ready: impl FnMut() -> bool) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        if Instant::now() > deadline {
            return Err(format!("timed out waiting for {what}").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The outcome of the same run, uninterrupted, on the embedded journal.
async fn reference(dir: &Path) -> Result<Value, Failure> {
    let effects = dir.join("reference-effects");
    let executor = executor(effects.to_str().ok_or("path")?, None);
    let journal = Journal::open(dir.join("reference.redb"))?;
    executor
        .start(&journal, "r", json!({ "q": "durable" }), json!({}))
        .await?;
    let outcome = executor
        .resume(&journal, "r", "approve", json!({ "ok": true }))
        .await?;
    Ok(
        json!({ "outputs": outcome.outputs, "events": outcome.events, "succeeded": outcome.succeeded() }),
    )
}

async fn check(ingress: &str, admin: &str) -> Result<(), Failure> {
    let dir = tempfile::tempdir()?;
    let effects = dir.path().join("effects");
    let runs_file = dir.path().join("effects.runs");
    let (port_a, port_b) = (free_port()?, free_port()?);
    let mut a = spawn_worker("a", port_a, &effects)?;
    let mut b = spawn_worker("b", port_b, &effects)?;
    let address = front(vec![
        SocketAddr::from(([127, 0, 0, 1], port_a)),
        SocketAddr::from(([127, 0, 0, 1], port_b)),
    ])
    .await?;
    let client = reqwest::Client::new();
    register(&client, admin, address).await?;
    let run_id = format!(
        "r-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis()
    );
    let base = format!("{ingress}/AgentioWorkflow/{run_id}");
    let start = json!({ "workflow": "durable-demo", "trigger": { "q": "durable" } });
    post(&client, &format!("{base}/run/send"), &start).await?;

    // `left` started on `a`: kill `a` while its agent works.
    wait_for("left to start on a", || {
        lines(&runs_file).iter().any(|l| l == "left a")
    })
    .await?;
    a.kill()?;
    a.wait()?;
    let killed_at = lines(&runs_file).len();
    println!("killed worker a with SIGKILL while `left` ran on it ({killed_at} agent runs so far)");

    // The run goes on on `b` and suspends at `approve`: resume it.
    wait_for("approve to run on b", || {
        lines(&runs_file).iter().any(|l| l == "approve b")
    })
    .await?;
    post(
        &client,
        &format!("{base}/resume/send"),
        &json!({ "phase": "approve", "input": { "ok": true } }),
    )
    .await?;
    let outcome = tokio::time::timeout(
        Duration::from_secs(60),
        get(
            &client,
            &format!("{ingress}/restate/workflow/AgentioWorkflow/{run_id}/attach"),
        ),
    )
    .await
    .map_err(|_| "the run did not finish within 60 s")??;
    let _ = b.kill();
    let _ = b.wait();

    let expected = reference(dir.path()).await?;
    let mut problems = Vec::new();
    if outcome["succeeded"] != true {
        problems.push(format!("the run did not succeed: {outcome}"));
    }
    if outcome["outputs"] != expected["outputs"] {
        problems.push(format!(
            "outputs differ from the uninterrupted run: {} vs {}",
            outcome["outputs"], expected["outputs"]
        ));
    }
    if outcome["events"] != expected["events"] {
        problems.push(format!(
            "events differ: {} vs {}",
            outcome["events"], expected["events"]
        ));
    }
    let mut effects_once: BTreeMap<String, usize> = BTreeMap::new();
    for line in lines(&effects) {
        let phase = line.split(' ').next().unwrap_or_default().to_owned();
        *effects_once.entry(phase).or_default() += 1;
    }
    for phase in ["fetch", "left", "right", "approve", "publish"] {
        if effects_once.get(phase) != Some(&1) {
            problems.push(format!(
                "the side effect of {phase} happened {:?} time(s)",
                effects_once.get(phase)
            ));
        }
    }
    let runs = lines(&runs_file);
    let ran = |line: &str| runs.iter().filter(|l| *l == line).count();
    if (ran("fetch a"), ran("fetch b")) != (1, 0) {
        problems.push(format!(
            "fetch ran {} time(s) on a and {} on b: it was recorded before the kill",
            ran("fetch a"),
            ran("fetch b")
        ));
    }
    if (ran("left a"), ran("left b")) != (1, 1) {
        problems.push(format!(
            "left ran {} time(s) on a and {} on b",
            ran("left a"),
            ran("left b")
        ));
    }
    if runs[killed_at..].iter().any(|l| l.ends_with(" a")) {
        problems.push("a phase ran on a after it was killed".into());
    }
    println!("agent runs: {runs:?}");
    println!("outcome: {outcome}");
    if problems.is_empty() {
        println!(
            "ok: the run completed on b after a was killed; each phase's side effect once; outputs as uninterrupted"
        );
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

async fn bench(ingress: &str, admin: &str, phases: usize) -> Result<(), Failure> {
    let dir = tempfile::tempdir()?;
    let port = free_port()?;
    let mut worker = spawn_worker("bench", port, &dir.path().join("effects"))?;
    let client = reqwest::Client::new();
    register(&client, admin, SocketAddr::from(([127, 0, 0, 1], port))).await?;
    let transitions = (2 * phases) as f64;

    // The floor: the same chain run in memory on a one-thread runtime (as the embedded bench
    // runs it), in a thread of its own.
    let in_memory = std::thread::spawn(move || -> Result<Duration, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let memory = chain(phases);
        let started = Instant::now();
        let outcome = runtime
            .block_on(memory.run("r", json!({}), json!({})))
            .map_err(|p| format!("{p:?}"))?;
        let took = started.elapsed();
        if outcome.succeeded() {
            Ok(took)
        } else {
            Err("the in-memory chain did not complete".into())
        }
    })
    .join()
    .map_err(|_| "the in-memory run panicked")??;

    let run_id = format!(
        "bench-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_millis()
    );
    let started = Instant::now();
    let outcome = post(
        &client,
        &format!("{ingress}/AgentioWorkflow/{run_id}/run"),
        &json!({ "workflow": format!("chain-{phases}") }),
    )
    .await?;
    let on_restate = started.elapsed();
    let _ = worker.kill();
    let _ = worker.wait();
    if outcome["succeeded"] != true {
        return Err(format!("the chain did not complete on Restate: {outcome}").into());
    }
    println!(
        "workflow-restate bench: a {phases}-phase chain, {} transitions",
        2 * phases
    );
    println!(
        "| backend | run | transitions/s | per transition | overhead per transition vs in-memory |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (name, took) in [
        ("in-memory executor", in_memory),
        ("Restate (one worker)", on_restate),
    ] {
        let over = (took.as_secs_f64() - in_memory.as_secs_f64()) / transitions;
        println!(
            "| {name} | {:.3} s | {:.0} | {:.1} µs | {} |",
            took.as_secs_f64(),
            transitions / took.as_secs_f64(),
            took.as_secs_f64() / transitions * 1e6,
            if name.starts_with("in-memory") {
                "—".to_owned()
            } else {
                format!("{:.1} µs", over * 1e6)
            }
        );
    }
    Ok(())
}
