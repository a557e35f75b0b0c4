//! The default turn types: what a conversational core takes and returns unless it says otherwise.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{AgentInput, AgentOutput};

// Doc comments on these types become schema descriptions that a model reads, so they hold
// prose only; examples live on the methods.

/// The default input of a core: one user message and, optionally, the conversation so far.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    AgentInput,
    AgentOutput,
)]
#[agent(crate = "crate")]
#[serde(deny_unknown_fields)]
pub struct TurnInput {
    /// The user's message for this turn.
    pub message: String,
    /// Earlier messages of the conversation, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<ChatMessage>,
}

impl TurnInput {
    /// A turn with `message` and no history.
    ///
    /// ```
    /// use agentio_core::{AgentInput, TurnInput};
    /// let turn: TurnInput = serde_json::from_value(serde_json::json!({ "message": "hi" })).unwrap();
    /// assert_eq!(turn, TurnInput::new("hi"));
    /// assert!(TurnInput::validate_input(&serde_json::json!({ "message": 3 })).is_err());
    /// ```
    pub fn new(message: impl Into<String>) -> Self {
        TurnInput {
            message: message.into(),
            history: Vec::new(),
        }
    }
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    pub content: String,
}

/// Who wrote a chat message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The system prompt.
    System,
    /// The user.
    User,
    /// The agent.
    Assistant,
    /// A tool's result.
    Tool,
}

/// The default output of a core: the reply, and the tools called while producing it.
#[derive(
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    AgentOutput,
    AgentInput,
)]
#[agent(crate = "crate")]
#[serde(deny_unknown_fields)]
pub struct TurnOutput {
    /// The agent's reply.
    pub response: String,
    /// The tools the core called during the turn, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRecord>,
}

impl TurnOutput {
    /// A reply with no tool calls.
    pub fn new(response: impl Into<String>) -> Self {
        TurnOutput {
            response: response.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// A tool call a core made during a turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolCallRecord {
    /// The tool's id.
    pub tool: String,
    /// Whether the call succeeded.
    pub ok: bool,
}
