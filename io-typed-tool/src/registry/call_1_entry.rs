//! Stage 1, entry: `call`, `call_with` and `call_envelope`, and the shape a call takes.

use std::borrow::Cow;
use std::future::Future;

use agentio_core::AgentError;
use serde_json::Value;
use serde_json::json;

use crate::call::Cancellation;
use crate::typed::RunId;
use crate::typed::ToolError;

use super::call_3_admission::Admitted;
use super::call_5_attempts::{
    Produce, cancelled_error, polled_in_place, single_attempt, until_cancelled,
};
use super::{CallOptions, ToolRegistry};

impl ToolRegistry {
    /// The body of [`ToolRegistry::call_with`].
    pub(crate) fn stage_call_with<'a, O: Produce>(
        &'a self,
        tool_id: &'a str,
        input: Cow<'a, Value>,
        options: CallOptions,
    ) -> impl Future<Output = Result<O, ToolError>> + Send + 'a {
        let input = if input.is_null() {
            Cow::Owned(json!({}))
        } else {
            input
        };
        let mut call = match &self.audit {
            // Boxed: the record and its bookkeeping stay out of an unaudited call's future.
            Some(sink) => Call::Audited(Box::pin(self.call_audited(
                sink.as_ref(),
                tool_id,
                input,
                options,
            ))),
            None => {
                let cancellation = options.cancellation.clone();
                let run_id = RunId::of(options.run_id.as_deref());
                let admitted = self.admit(tool_id, input, options, run_id, None);
                Call::Plain {
                    admitted,
                    cancellation,
                }
            }
        };
        async move {
            // Matched by reference: moving the parts out would store them twice.
            match &mut call {
                Call::Audited(call) => call.await,
                Call::Plain {
                    admitted,
                    cancellation,
                } => {
                    // A call cancelled before it starts is `cancelled`, whatever its input.
                    if cancellation
                        .as_ref()
                        .is_some_and(Cancellation::is_cancelled)
                    {
                        return Err(cancelled_error(tool_id));
                    }
                    let admitted = match admitted {
                        Ok(admitted) => admitted,
                        // Taken once: this future ends here.
                        Err(err) => return Err(std::mem::replace(err, AgentError::internal(""))),
                    };
                    // The common call (one attempt, ungated, no files, on a one-worker
                    // runtime or inside a host's own polling) runs in this future's own
                    // state; the rest of the contract's machinery is boxed, so that the
                    // common call's future does not carry its space.
                    if admitted.runs_once() && polled_in_place() {
                        return single_attempt(&mut admitted.run, cancellation.as_ref()).await;
                    }
                    Box::pin(async {
                        let finish = std::pin::pin!(self.finish(admitted, None));
                        until_cancelled(finish, cancellation.as_ref(), tool_id).await
                    })
                    .await
                }
            }
        }
    }
}

/// A call's two forms of future: audited (boxed), or admitted and ready to finish. The
/// variants differ in size on purpose: the common one is held inline, the rare one boxed.
#[allow(clippy::large_enum_variant)]
pub(super) enum Call<'r, A> {
    Audited(std::pin::Pin<Box<A>>),
    Plain {
        admitted: Result<Admitted<'r>, ToolError>,
        cancellation: Option<Cancellation>,
    },
}
