//! A token request's bounds and its one HTTP exchange, shared by the machine grants
//! ([`crate::machine`], which names the bounds) and DPoP's token requests (`crate::dpop`),
//! and the clock their signed JWTs read (feature `oauth`).

use std::time::Duration;

/// How long a token request may take: 30 seconds, as rmcp's OAuth requests.
pub const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);

/// The most a token endpoint's answer may hold: 64 KiB. A token response is a few hundred
/// bytes; an endpoint sending more is not read further.
pub const MAX_TOKEN_RESPONSE: usize = 64 * 1024;

/// Now, in seconds since the Unix epoch: a JWT's `iat` and `exp` (a client assertion's, a DPoP
/// proof's), and the time a proof's `iat` is checked against.
#[cfg(feature = "jwt")]
pub(crate) fn now_secs() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Why a token request has no answer to read.
pub(crate) enum Unanswered {
    /// It was not sent, or its answer broke off: what the HTTP client said.
    Failed(String),
    /// Its answer (of this status) is over [`MAX_TOKEN_RESPONSE`] bytes.
    TooLarge { status: u16 },
}

/// The HTTP client of one exchange with an authorization server (or a DPoP nonce probe): no
/// redirects (OAuth 2.1 token endpoints do not redirect, and a credential is not sent on to
/// another address), the whole exchange within `timeout`.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .build()
}

/// Sends `request` and reads its answer: status, headers and at most [`MAX_TOKEN_RESPONSE`]
/// bytes of body.
pub(crate) async fn exchange(
    request: reqwest::RequestBuilder,
) -> Result<http::Response<Vec<u8>>, Unanswered> {
    let failed = |error: reqwest::Error| Unanswered::Failed(error.to_string());
    let mut response = request.send().await.map_err(failed)?;
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        if body.len() + chunk.len() > MAX_TOKEN_RESPONSE {
            return Err(Unanswered::TooLarge {
                status: response.status().as_u16(),
            });
        }
        body.extend_from_slice(&chunk);
    }
    let mut answer = http::Response::new(body);
    *answer.status_mut() = response.status();
    *answer.headers_mut() = response.headers().clone();
    Ok(answer)
}
