use agentio_core::define_io;

#[define_io(outputs_files = { report => { path = "report.md" } })]
const LIMIT: u32 = 3;

fn main() {
    let _ = LIMIT;
}
