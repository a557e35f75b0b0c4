//! A call's state between its rounds on MCP 2026-07-28 (`requestState`, SEP-2322).
//!
//! A call that asks the client something ends its round with `input_required` and a
//! `requestState`: the body's state, the answers so far and whether the call was approved,
//! sealed with an HMAC by rmcp's [`RequestStateCodec`]. The client sends it back verbatim with
//! its answers. What comes back is the client's input, so the server trusts a state only when
//!
//! - it opens with this server's key (or the key its instances share,
//!   [`McpServer::with_request_state_key`](crate::McpServer::with_request_state_key)): not
//!   forged, not changed;
//! - it was sealed for **this call**: the same tool, the same arguments (compared as JSON
//!   values: members in any order) and the same caller (the verified subject and issuer, when
//!   the HTTP layer verified one). A state is not replayed against other arguments, another tool,
//!   or by another caller: a body's state or an approval given for `{"amount": 5}` does not
//!   carry over to `{"amount": 500}`;
//! - it has not expired ([`DEFAULT_REQUEST_STATE_TTL`], set with
//!   [`McpServer::with_request_state_ttl`](crate::McpServer::with_request_state_ttl)).
//!
//! Anything else is refused with `invalid_params` naming why, before the tool runs. The
//! binding is not stored in the state: it is mixed into the seal's tag (rmcp's associated
//! data), so the state stays as small as the body's state and answers.
//!
//! A state can be sent again, unchanged, with the same arguments, by the same caller, before it
//! expires: the server keeps nothing per call (the revision's wire is stateless), so it cannot
//! tell a retry from a second use. That is no more than the client could do anyway: the
//! answers, the approval included, are the client's, and it could give them again. A body
//! whose effect must happen once keys it on something of its own (an idempotency key in its
//! input, as for any retried call).

use std::collections::BTreeMap;
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{RequestStateCodec, RequestStateError, SealOptions};
use serde_json::Value;

use agentio_tools::Caller;

/// How long a call's sealed state stays good by default: 30 minutes, time for a person to
/// answer a form.
pub const DEFAULT_REQUEST_STATE_TTL: Duration = Duration::from_secs(30 * 60);

/// What a call carries from one round to the next, sealed: the body's state, every answer so
/// far (a client sends each round's answers only once) and whether its approval was given.
#[derive(serde::Serialize, serde::Deserialize, Default, Debug)]
pub(crate) struct Round {
    #[serde(default)]
    pub(crate) state: Option<Value>,
    #[serde(default)]
    pub(crate) answers: BTreeMap<String, Value>,
    /// The call's approval question was answered yes in an earlier round.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) approved: bool,
}

/// Seals and opens rounds with one key and one lifetime.
#[derive(Clone)]
pub(crate) struct Rounds {
    codec: std::sync::Arc<RequestStateCodec>,
    pub(crate) ttl: Duration,
}

impl Rounds {
    /// Rounds sealed with a key of 32 random bytes: they open only in this process.
    pub(crate) fn random() -> Self {
        let mut key = [0u8; 32];
        // Without the OS's randomness there is no secret key: fail loudly, at construction.
        getrandom::fill(&mut key).expect("the operating system's random number generator");
        Rounds {
            codec: std::sync::Arc::new(RequestStateCodec::new_unchecked(key.to_vec())),
            ttl: DEFAULT_REQUEST_STATE_TTL,
        }
    }

    /// Rounds sealed with `key` (at least 32 bytes), shared by the instances that hold it.
    pub(crate) fn with_key(&self, key: Vec<u8>) -> Result<Self, RequestStateError> {
        Ok(Rounds {
            codec: std::sync::Arc::new(RequestStateCodec::try_new(key)?),
            ttl: self.ttl,
        })
    }

    /// `round`, sealed for the call `binding` names.
    pub(crate) fn seal(&self, round: &Round, binding: &Binding) -> Result<String, McpError> {
        self.codec
            .seal_json_with(
                round,
                &SealOptions::new().associated_data(&binding.0).ttl(self.ttl),
            )
            .map_err(|err| {
                McpError::internal_error(
                    format!("the call's state could not be sealed: {err}"),
                    None,
                )
            })
    }

    /// The round `sealed` carries, when this server sealed it for the call `binding` names
    /// and it has not expired; otherwise `invalid_params`, naming the tool and why.
    pub(crate) fn open(
        &self,
        sealed: &str,
        binding: &Binding,
        target: &str,
    ) -> Result<Round, McpError> {
        self.codec
            .open_json_with::<Round>(sealed, &binding.0)
            .map_err(|err| {
                let why = match err {
                    RequestStateError::IntegrityCheckFailed => {
                        "it was not sealed by this server for this tool, these arguments and \
                         this caller"
                            .to_owned()
                    }
                    RequestStateError::Expired => {
                        "it has expired; call the tool again from the start".to_owned()
                    }
                    other => other.to_string(),
                };
                McpError::invalid_params(
                    format!("the requestState is not one this server gave out for this call to `{target}`: {why}"),
                    None,
                )
            })
    }
}

/// What a sealed round is bound to: the tool, the caller and the arguments, as bytes mixed
/// into the seal's tag.
pub(crate) struct Binding(Vec<u8>);

impl Binding {
    /// The binding of a call of `target` by `caller` with `arguments`. Each part is prefixed
    /// with its length, so that no two calls give the same bytes; the arguments are written
    /// with every object's members in key order, so that the same arguments sent in another
    /// order bind the same.
    pub(crate) fn new(target: &str, caller: Option<&Caller>, arguments: &Value) -> Self {
        let mut bytes = b"agentio/mcp/round/v1".to_vec();
        let mut part = |text: &str| {
            bytes.extend_from_slice(&(text.len() as u64).to_be_bytes());
            bytes.extend_from_slice(text.as_bytes());
        };
        part(target);
        match caller {
            Some(caller) => {
                part("caller");
                part(&crate::auth::caller_key(caller));
            }
            None => part("anonymous"),
        }
        canonical(arguments, &mut bytes);
        Binding(bytes)
    }
}

/// `value` as JSON text with every object's members in key order. (A request's JSON is at
/// most 128 levels deep, serde_json's parse limit, so the recursion is bounded.)
fn canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (index, (key, member)) in members.into_iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_scalar(&Value::String(key.clone()), out);
                out.push(b':');
                canonical(member, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                canonical(item, out);
            }
            out.push(b']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(value: &Value, out: &mut Vec<u8>) {
    // Writing a scalar `Value` to a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bytes(target: &str, caller: Option<&Caller>, arguments: Value) -> Vec<u8> {
        Binding::new(target, caller, &arguments).0
    }

    #[test]
    fn the_same_call_binds_the_same_whatever_the_order_of_its_members() {
        let one: Value =
            serde_json::from_str(r#"{"a": 1, "b": {"x": [1, {"q": 2, "p": 3}], "y": "z"}}"#)
                .unwrap();
        let other: Value =
            serde_json::from_str(r#"{"b": {"y": "z", "x": [1, {"p": 3, "q": 2}]}, "a": 1}"#)
                .unwrap();
        assert_eq!(bytes("t", None, one.clone()), bytes("t", None, other));
        let mut text = Vec::new();
        canonical(&one, &mut text);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            r#"{"a":1,"b":{"x":[1,{"p":3,"q":2}],"y":"z"}}"#
        );
    }

    #[test]
    fn every_part_of_the_call_changes_the_binding() {
        let alice = Caller::new("alice");
        let mut alice_elsewhere = Caller::new("alice");
        alice_elsewhere.claims = json!({ "iss": "https://other.example" });
        let base = bytes("t", Some(&alice), json!({ "n": 5 }));
        let variants = [
            bytes("u", Some(&alice), json!({ "n": 5 })),
            bytes("t", Some(&Caller::new("bob")), json!({ "n": 5 })),
            bytes("t", Some(&alice_elsewhere), json!({ "n": 5 })),
            bytes("t", None, json!({ "n": 5 })),
            bytes("t", Some(&alice), json!({ "n": 50 })),
            bytes("t", Some(&alice), json!({ "n": 5, "m": null })),
            bytes("t", Some(&alice), json!([{ "n": 5 }])),
            bytes("t", Some(&alice), json!({ "n": "5" })),
        ];
        for (index, variant) in variants.iter().enumerate() {
            assert_ne!(&base, variant, "variant {index}");
        }
        // Lengths keep the parts apart: a tool `ab` and a subject `c` are not `a` and `bc`.
        assert_ne!(
            bytes("ab", Some(&Caller::new("c")), json!({})),
            bytes("a", Some(&Caller::new("bc")), json!({}))
        );
    }

    #[test]
    fn a_round_opens_only_for_its_call_and_before_it_expires() {
        let rounds = Rounds::random();
        let binding = Binding::new("t", None, &json!({ "n": 5 }));
        let round = Round {
            state: Some(json!({ "step": 2 })),
            answers: BTreeMap::from([("q".to_owned(), json!(true))]),
            approved: true,
        };
        let sealed = rounds.seal(&round, &binding).unwrap();
        let opened = rounds.open(&sealed, &binding, "t").unwrap();
        assert_eq!(opened.state, Some(json!({ "step": 2 })));
        assert_eq!(opened.answers["q"], json!(true));
        assert!(opened.approved);

        let other = Binding::new("t", None, &json!({ "n": 500 }));
        let refused = rounds.open(&sealed, &other, "t").unwrap_err();
        assert!(refused.message.contains("these arguments"), "{refused:?}");
        assert!(refused.message.contains("`t`"), "{refused:?}");
        // Another process's key: refused the same way.
        let stranger = Rounds::random().open(&sealed, &binding, "t").unwrap_err();
        assert!(
            stranger.message.contains("not sealed by this server"),
            "{stranger:?}"
        );

        let brief = Rounds {
            ttl: Duration::from_millis(1),
            ..rounds.clone()
        };
        let sealed = brief.seal(&round, &binding).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let expired = brief.open(&sealed, &binding, "t").unwrap_err();
        assert!(expired.message.contains("expired"), "{expired:?}");
        // A shared key opens what another instance sealed.
        let key = vec![7u8; 32];
        let one = rounds.with_key(key.clone()).unwrap();
        let two = Rounds::random().with_key(key).unwrap();
        let sealed = one.seal(&round, &binding).unwrap();
        assert!(two.open(&sealed, &binding, "t").is_ok());
        assert!(rounds.with_key(vec![1u8; 16]).is_err(), "a short key");
    }

    #[test]
    fn a_state_is_sealed_to_expire_thirty_minutes_on_by_default() {
        use base64::Engine;
        let rounds = Rounds::random();
        let binding = Binding::new("t", None, &json!({}));
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let sealed = rounds.seal(&Round::default(), &binding).unwrap();
        // rmcp's `rs1.<body>.<tag>`: the body starts with the expiry, big-endian Unix ms.
        let body = sealed.split('.').nth(1).unwrap();
        let body = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(body)
            .unwrap();
        let expiry = i64::from_be_bytes(body[..8].try_into().unwrap());
        let ahead = expiry - i64::try_from(before.as_millis()).unwrap();
        assert!(
            (30 * 60 * 1000..30 * 60 * 1000 + 5_000).contains(&ahead),
            "expires {ahead} ms on"
        );
    }

    #[test]
    fn an_unapproved_round_does_not_say_so_on_the_wire() {
        let text = serde_json::to_string(&Round::default()).unwrap();
        assert_eq!(text, r#"{"state":null,"answers":{}}"#);
    }
}
