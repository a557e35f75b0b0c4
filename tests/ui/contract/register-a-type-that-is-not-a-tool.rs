use agentio_tools::ToolRegistry;

struct NotATool;

fn main() {
    let mut registry = ToolRegistry::new();
    let _ = registry.register(NotATool);
}
