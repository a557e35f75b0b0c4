//! Which derive is expanding: the one word the checks, the shape and the expansion share, kept
//! below all three.

/// Which derive is expanding.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// `#[derive(AgentInput)]`: serde's deserialize view.
    Input,
    /// `#[derive(AgentOutput)]`: serde's serialize view.
    Output,
}
