use io_typed_tool::ToolRegistry;

struct NotATool;

fn main() {
    let mut registry = ToolRegistry::new();
    let _ = registry.register(NotATool);
}
