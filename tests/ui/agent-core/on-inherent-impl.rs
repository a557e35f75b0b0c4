use agentio_core::agent_core;

struct Core;

#[agent_core]
impl Core {
    fn new() -> Self {
        Core
    }
}

fn main() {
    let _ = Core::new();
}
