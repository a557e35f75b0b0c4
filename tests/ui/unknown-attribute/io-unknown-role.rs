use agentio_core::io;

#[io(inptu)]
struct Ask {
    question: String,
}

fn main() {}
