//! `promptos-gateway`: judge an executor's `submit.json`. See `--help`.

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = agentio_promptos::cli::run(&args, &mut std::io::stdout().lock());
    std::process::ExitCode::from(code)
}
