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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback server answering each connection with `answer` (or nothing, holding it
    /// open, when `None`); the URL of its `/token`, and the paths it was asked for.
    async fn server(
        answer: Option<&'static str>,
    ) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = asked.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let log = log.clone();
                tokio::spawn(async move {
                    let mut head = vec![0u8; 4096];
                    let read = stream.read(&mut head).await.unwrap_or(0);
                    let line = String::from_utf8_lossy(&head[..read]).to_string();
                    let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                    log.lock().unwrap().push(path);
                    match answer {
                        Some(answer) => stream.write_all(answer.as_bytes()).await.unwrap(),
                        None => std::future::pending().await,
                    }
                });
            }
        });
        (url, asked)
    }

    #[tokio::test]
    async fn a_token_endpoints_redirect_is_answered_not_followed() {
        let (url, asked) = server(Some(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
        ))
        .await;
        let request = client(TOKEN_TIMEOUT)
            .unwrap()
            .post(&url)
            .body("grant_type=x");
        let Ok(answer) = exchange(request).await else {
            panic!("the redirect is the answer");
        };
        assert_eq!(answer.status(), 307);
        assert_eq!(*asked.lock().unwrap(), ["/token"], "nothing sent elsewhere");
    }

    #[tokio::test]
    async fn an_exchange_ends_at_its_timeout() {
        let (url, _) = server(None).await;
        let request = client(Duration::from_millis(200)).unwrap().post(&url);
        let ended = tokio::time::timeout(Duration::from_secs(10), exchange(request)).await;
        assert!(
            matches!(ended, Ok(Err(Unanswered::Failed(_)))),
            "a silent endpoint is a failure within the client's timeout"
        );
    }
}
