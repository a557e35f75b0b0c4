//! The client's side of a server's questions: the host's handler as the client's service, and
//! the input-required rounds of a `tools/call`.
//!
//! A server may ask its client things in the middle of a call: to sample the client's model
//! (`sampling/createMessage`), to ask the user (`elicitation/create`), to list its roots. Under
//! MCP 2025-11-25 it sends those as requests of its own; under 2026-07-28 it answers the call with
//! an `input_required` result carrying the questions and an opaque request state, and the client
//! calls again with the answers and the state (SEP-2322). Either way the answers come from one
//! place: an rmcp [`ClientHandler`] the host gives [`Connect::handler`](crate::Connect::handler) — the same trait an rmcp
//! client implements, composed rather than rewritten. Its [`ClientHandler::get_info`] declares
//! the capabilities the client announces; without a handler the client declares none and
//! answers every question with rmcp's "method not found", so a server that asks anyway gets a
//! refusal at once, never a hang.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientResult, ErrorData, InputRequest,
    InputRequiredResult, InputResponses, NumberOrString, ServerNotification, ServerRequest,
};
use rmcp::service::{
    DynService, NotificationContext, RequestContext, Service, ServiceError, ServiceExt,
};
use rmcp::{ClientHandler, Peer, RoleClient};

/// How many `input_required` answers one call follows before it is refused (rmcp's own cap).
pub const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// How many questions one `input_required` answer may ask; a server asking more is refused
/// before the handler sees any of them.
pub const MAX_INPUT_REQUESTS: usize = 32;

/// The host's handler as the running service: shared, so that an imported tool's call can put
/// a 2026-07-28 server's questions to the same handler that answers a 2025-11-25 server's
/// requests.
#[derive(Clone)]
pub(crate) struct Answerer(Arc<dyn DynService<RoleClient>>);

impl Answerer {
    pub(crate) fn of<H: ClientHandler>(handler: H) -> Self {
        Answerer(Arc::from(handler.into_dyn()))
    }
}

impl Service<RoleClient> for Answerer {
    fn handle_request(
        &self,
        request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ClientResult, ErrorData>> + Send + '_ {
        self.0.handle_request(request, context)
    }

    fn handle_notification(
        &self,
        notification: ServerNotification,
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = Result<(), ErrorData>> + Send + '_ {
        self.0.handle_notification(notification, context)
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        self.0.get_info()
    }
}

/// One `tools/call`, following the server's `input_required` answers: each round's questions
/// go to the handler (all of a round's at once), and the call is sent again with the answers
/// and the server's request state, echoed untouched. Bounded: [`MAX_INPUT_ROUNDS`] rounds,
/// [`MAX_INPUT_REQUESTS`] questions a round; a round with neither questions nor state is a
/// protocol error; a round with state alone (the server still working) waits a little longer
/// each time, up to 250 ms, as rmcp's own helper does.
pub(crate) async fn call_tool(
    peer: &Peer<RoleClient>,
    answerer: &Answerer,
    mut params: CallToolRequestParams,
) -> Result<CallToolResult, CallFailure> {
    let mut waiting_rounds = 0u32;
    for _round in 0..MAX_INPUT_ROUNDS {
        let required = match peer.call_tool_once(params.clone()).await {
            Ok(CallToolResponse::Complete(result)) => return Ok(result),
            Ok(CallToolResponse::InputRequired(required)) => required,
            Ok(_) => {
                return Err(CallFailure::Protocol(
                    "the server answered the call with a task, which this client did not ask for"
                        .into(),
                ));
            }
            Err(e) => return Err(CallFailure::Service(e)),
        };
        let InputRequiredResult {
            input_requests,
            request_state,
            ..
        } = required;
        let questions = input_requests.unwrap_or_default();
        if questions.is_empty() && request_state.is_none() {
            return Err(CallFailure::Protocol(
                "the server asked for input without a question or a request state".into(),
            ));
        }
        if questions.len() > MAX_INPUT_REQUESTS {
            return Err(CallFailure::Protocol(format!(
                "the server asked {} questions in one round; this client answers at most {MAX_INPUT_REQUESTS}",
                questions.len()
            )));
        }
        if questions.is_empty() {
            let millis = (50u64 << waiting_rounds.min(3)).min(250);
            tokio::time::sleep(Duration::from_millis(millis)).await;
            waiting_rounds += 1;
        } else {
            waiting_rounds = 0;
        }
        let answers = futures::future::try_join_all(
            questions
                .into_iter()
                .map(|(key, question)| answer(peer, answerer, key, question)),
        )
        .await?;
        params.input_responses =
            (!answers.is_empty()).then(|| answers.into_iter().collect::<InputResponses>());
        params.request_state = request_state;
    }
    Err(CallFailure::Protocol(format!(
        "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
    )))
}

/// One question, answered by the handler; its refusal names the question.
async fn answer(
    peer: &Peer<RoleClient>,
    answerer: &Answerer,
    key: String,
    question: InputRequest,
) -> Result<(String, serde_json::Value), CallFailure> {
    let (asked, request) = match question {
        InputRequest::CreateMessage(r) => ("sampling", ServerRequest::CreateMessageRequest(r)),
        InputRequest::Elicitation(r) => ("elicitation", ServerRequest::ElicitRequest(r)),
        InputRequest::ListRoots(r) => ("roots", ServerRequest::ListRootsRequest(r)),
        _ => {
            return Err(CallFailure::Refused {
                asked: "a kind of input",
                reason: "this client knows sampling, elicitation and roots only".into(),
            });
        }
    };
    let context = RequestContext::new(NumberOrString::String(key.as_str().into()), peer.clone());
    let answered = Service::handle_request(answerer, request, context)
        .await
        .map_err(|e| CallFailure::Refused {
            asked,
            reason: clipped(e.message.into_owned()),
        })?;
    let value = match answered {
        ClientResult::CreateMessageResult(r) => serde_json::to_value(r),
        ClientResult::ElicitResult(r) => serde_json::to_value(r),
        ClientResult::ListRootsResult(r) => serde_json::to_value(r),
        _ => {
            return Err(CallFailure::Refused {
                asked,
                reason: "the handler answered with another kind of result".into(),
            });
        }
    };
    let value = value.map_err(|e| CallFailure::Refused {
        asked,
        reason: e.to_string(),
    })?;
    Ok((key, value))
}

/// Why a call with input rounds did not complete.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The transport or the server failed the request.
    Service(ServiceError),
    /// The server broke the input-required protocol (or its bounds).
    Protocol(String),
    /// The handler did not answer a question (no such capability, or it refused).
    Refused { asked: &'static str, reason: String },
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallFailure::Service(e) => f.write_str(&without_transport_type(e.to_string())),
            CallFailure::Protocol(reason) => f.write_str(reason),
            CallFailure::Refused { asked, reason } => write!(
                f,
                "the server asked this client for {asked}, which it did not give: {reason}"
            ),
        }
    }
}

/// The longest remote text (a message, a reason, an operator detail) kept whole.
const MAX_REMOTE_TEXT: usize = 4_096;

/// `text` clipped to [`MAX_REMOTE_TEXT`] bytes.
pub(crate) fn clipped(mut text: String) -> String {
    agentio_core::limits::clip(&mut text, MAX_REMOTE_TEXT);
    text
}

/// rmcp's text for a failed transport without the Rust type it names: `Transport send error:
/// Transport [rmcp::transport::worker::WorkerTransport<...>] error: HTTP 500` is `Transport
/// send error: HTTP 500`. Any other text is kept as it is.
pub(crate) fn without_transport_type(mut text: String) -> String {
    const START: &str = "Transport [";
    const END: &str = "] error: ";
    if let Some(start) = text.find(START)
        && let Some(end) = text[start..].find(END)
    {
        text.replace_range(start..start + end + END.len(), "");
    }
    text
}
