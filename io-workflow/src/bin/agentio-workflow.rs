//! `agentio-workflow`: check a workflow file, or run it with sample agents. See `--help`.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = agentio_workflow::cli::run_cli(&args, &mut std::io::stdout().lock());
    std::process::ExitCode::from(code)
}
