//! DPoP proofs as the MCP server checks them (RFC 9449 §4.3, §7; feature `dpop`): the
//! protected resource's half of [`crate::dpop`], turned on by
//! [`HttpAuth::with_dpop`](crate::auth::HttpAuth::with_dpop).
//!
//! A request presenting `Authorization: DPoP <token>` must carry exactly one `DPoP` header: a
//! JWT whose `typ` is `dpop+jwt`, signed with an asymmetric algorithm ([`DPOP_ALGORITHMS`]) by
//! the public key in its `jwk` header (no private part), whose claims name a `jti` not seen
//! before, the request's method (`htm`) and this server's URL (`htu`, compared without query,
//! fragment or a trailing slash), an `iat` within [`PROOF_WINDOW`] of now, and the token's
//! SHA-256 (`ath`). The token, verified as a bearer token is, must then be bound to that key:
//! its caller's `cnf.jkt` claim (RFC 9449 §6) is the key's thumbprint.
//!
//! Decisions:
//! - **Replays.** A proof's `jti` is remembered for the window its `iat` is accepted in, at most
//!   [`MAX_REMEMBERED_PROOFS`] at once; past that, the oldest are forgotten first (a proof that
//!   old is only a replay risk until its window closes, and a server flooded with fresh proofs
//!   keeps answering).
//! - **No nonces.** The server does not ask for one (RFC 9449 §9 makes it optional); a proof's
//!   `nonce` is not checked.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::token::now_secs;

/// How far a proof's `iat` may be from the server's clock, either way, in seconds.
pub const PROOF_WINDOW: u64 = 300;

/// How many proofs' `jti`s the server remembers at once, to refuse them again.
pub const MAX_REMEMBERED_PROOFS: usize = 65_536;

/// The algorithms a proof may be signed with (its metadata's
/// `dpop_signing_alg_values_supported`): asymmetric ones only.
pub const DPOP_ALGORITHMS: [&str; 9] = [
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
];

/// A proof that checked out: the key it is signed with, and its `jti` and `iat`, to remember
/// once the token it came with is taken ([`ProofChecker::admit`]).
#[derive(Debug)]
pub(crate) struct Proof {
    /// The key's thumbprint (RFC 7638, SHA-256), as a bound token's `cnf.jkt` names it.
    pub(crate) thumbprint: String,
    jti: String,
    iat: u64,
}

/// The proofs one server checks, and the ones it has seen.
pub(crate) struct ProofChecker {
    /// The server's URL as `htu` is compared with it.
    htu: String,
    seen: Mutex<Seen>,
}

#[derive(Default)]
struct Seen {
    /// The `jti`s in the order they came, with their `iat`.
    order: VecDeque<(u64, String)>,
    ids: HashSet<String>,
}

/// Why a proof is refused, in words: the server answers it as an `invalid_dpop_proof` error
/// (RFC 9449 §7.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Refused(pub(crate) &'static str);

impl ProofChecker {
    /// Proofs for requests to `resource` (the server's canonical URL).
    pub(crate) fn new(resource: &str) -> Self {
        ProofChecker {
            htu: normalized(resource),
            seen: Mutex::default(),
        }
    }

    /// The request's one proof, when it is a fresh one for `method` to this server and for
    /// `token`, signed with the key it carries. Whether it was used before is for
    /// [`Self::admit`] to say, once the token is verified: a proof that comes with a token
    /// that is refused takes no room among the ones remembered.
    pub(crate) fn check<'a>(
        &self,
        method: &http::Method,
        mut proofs: impl Iterator<Item = &'a http::HeaderValue>,
        token: &str,
    ) -> Result<Proof, Refused> {
        let proof = proofs
            .next()
            .ok_or(Refused("a DPoP proof is required with a DPoP token"))?;
        if proofs.next().is_some() {
            return Err(Refused("one DPoP proof, not several"));
        }
        let proof = proof
            .to_str()
            .map_err(|_| Refused("the DPoP proof is not a JWT"))?;
        let (jwk, algorithm) = header_key(proof)?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|_| Refused("the DPoP proof's jwk is not a usable public key"))?;
        let mut validation = Validation::new(algorithm);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Value>(proof, &key, &validation)
            .map_err(|_| Refused("the DPoP proof's signature does not verify with its jwk"))?
            .claims;
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        let jti = text("jti")
            .filter(|jti| !jti.is_empty() && jti.len() <= 256)
            .ok_or(Refused("the DPoP proof has no jti"))?;
        if text("htm") != Some(method.as_str()) {
            return Err(Refused("the DPoP proof's htm is not the request's method"));
        }
        if text("htu").map(normalized).as_deref() != Some(self.htu.as_str()) {
            return Err(Refused("the DPoP proof's htu is not this server's URL"));
        }
        let now = now_secs();
        let iat = claims
            .get("iat")
            .and_then(Value::as_u64)
            .filter(|iat| iat.abs_diff(now) <= PROOF_WINDOW)
            .ok_or(Refused(
                "the DPoP proof's iat is not within 300 seconds of now",
            ))?;
        if text("ath") != Some(URL_SAFE_NO_PAD.encode(Sha256::digest(token)).as_str()) {
            return Err(Refused("the DPoP proof's ath is not the token's hash"));
        }
        let thumbprint = jwk
            .thumbprint(ThumbprintHash::SHA256)
            .map_err(|_| Refused("the DPoP proof's jwk has no thumbprint"))?;
        Ok(Proof {
            thumbprint,
            jti: jti.to_owned(),
            iat,
        })
    }

    /// Takes `proof`, remembering it; refused when it was taken before.
    pub(crate) fn admit(&self, proof: &Proof) -> Result<(), Refused> {
        if self.remember(&proof.jti, proof.iat, now_secs()) {
            Ok(())
        } else {
            Err(Refused("the DPoP proof was used before"))
        }
    }

    /// Records `jti`; `false` when it was seen already. Forgets the proofs whose window has
    /// closed, and the oldest past [`MAX_REMEMBERED_PROOFS`].
    fn remember(&self, jti: &str, iat: u64, now: u64) -> bool {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Seen { order, ids } = &mut *seen;
        let forget = |order: &mut VecDeque<(u64, String)>, ids: &mut HashSet<String>| {
            if let Some((_, old)) = order.pop_front() {
                ids.remove(&old);
            }
        };
        while order
            .front()
            .is_some_and(|(at, _)| at.saturating_add(PROOF_WINDOW) < now)
        {
            forget(order, ids);
        }
        if ids.contains(jti) {
            return false;
        }
        while order.len() >= MAX_REMEMBERED_PROOFS {
            forget(order, ids);
        }
        ids.insert(jti.to_owned());
        order.push_back((iat, jti.to_owned()));
        true
    }
}

/// The proof's public key and algorithm, from its header: `typ` `dpop+jwt`, an asymmetric
/// `alg`, and a `jwk` with no private part.
fn header_key(proof: &str) -> Result<(Jwk, Algorithm), Refused> {
    let not_a_jwt = || Refused("the DPoP proof is not a JWT");
    let encoded = proof.split('.').next().ok_or_else(not_a_jwt)?;
    let bytes = URL_SAFE_NO_PAD.decode(encoded).map_err(|_| not_a_jwt())?;
    let header: Value = serde_json::from_slice(&bytes).map_err(|_| not_a_jwt())?;
    if header.get("typ").and_then(Value::as_str) != Some("dpop+jwt") {
        return Err(Refused("the DPoP proof's typ is not dpop+jwt"));
    }
    let algorithm = header
        .get("alg")
        .and_then(Value::as_str)
        .filter(|alg| DPOP_ALGORITHMS.contains(alg))
        .and_then(|alg| alg.parse::<Algorithm>().ok())
        .ok_or(Refused(
            "the DPoP proof's alg is not an asymmetric algorithm",
        ))?;
    let jwk = header
        .get("jwk")
        .ok_or(Refused("the DPoP proof has no jwk"))?;
    // A private key's parameters (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2) have no place in a
    // proof: the key is then no longer the client's alone.
    let private = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
    if private.iter().any(|name| jwk.get(name).is_some()) {
        return Err(Refused("the DPoP proof's jwk holds a private key"));
    }
    let jwk: Jwk = serde_json::from_value(jwk.clone())
        .map_err(|_| Refused("the DPoP proof's jwk is not a public key"))?;
    Ok((jwk, algorithm))
}

/// `url` without query, fragment or a trailing slash, as `htu`s are compared (RFC 9449 §4.3:
/// scheme and host compared without case, which parsing lowers): the client's `htu`, less a
/// trailing slash; a URL that does not parse, as it is.
fn normalized(url: &str) -> String {
    crate::dpop::htu(url).map_or_else(
        |_| url.to_owned(),
        |htu| htu.trim_end_matches('/').to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dpop::Dpop;
    use jsonwebtoken::EncodingKey;
    use serde_json::json;

    const URL: &str = "https://mcp.example.com/mcp";

    fn values(proofs: &[&str]) -> Vec<http::HeaderValue> {
        proofs
            .iter()
            .map(|p| http::HeaderValue::from_str(p).unwrap())
            .collect()
    }

    fn check(
        checker: &ProofChecker,
        method: &str,
        proofs: &[&str],
        token: &str,
    ) -> Result<String, String> {
        let method: http::Method = method.parse().unwrap();
        checker
            .check(&method, values(proofs).iter(), token)
            .and_then(|proof| checker.admit(&proof).map(|()| proof.thumbprint))
            .map_err(|refused| refused.0.to_owned())
    }

    /// A P-256 key of the test's own, and its public JWK as JSON.
    fn key() -> (EncodingKey, Value) {
        use p256::pkcs8::EncodePrivateKey as _;
        let mut bytes = [7u8; 32];
        bytes[0] = 1;
        let secret = p256::SecretKey::from_slice(&bytes).unwrap();
        let key = EncodingKey::from_ec_der(secret.to_pkcs8_der().unwrap().as_bytes());
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        (key, serde_json::to_value(jwk).unwrap())
    }

    /// A proof with `header` (its `jwk` the test key's unless given) and `claims` as given.
    fn forge(header: Value, claims: Value) -> String {
        let (key, jwk) = key();
        let mut header = header;
        if header.get("jwk").is_none() {
            header["jwk"] = jwk;
        }
        let encode = |value: &Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap());
        let signing_input = format!("{}.{}", encode(&header), encode(&claims));
        let signature =
            jsonwebtoken::crypto::sign(signing_input.as_bytes(), &key, Algorithm::ES256).unwrap();
        format!("{signing_input}.{signature}")
    }

    fn claims(token: &str) -> Value {
        json!({
            "jti": format!("j-{}", now_secs()),
            "htm": "POST",
            "htu": URL,
            "iat": now_secs(),
            "ath": URL_SAFE_NO_PAD.encode(Sha256::digest(token)),
        })
    }

    fn es256() -> Value {
        json!({"typ": "dpop+jwt", "alg": "ES256"})
    }

    #[test]
    fn a_fresh_proof_of_the_request_names_its_key_once() {
        let checker = ProofChecker::new(URL);
        let dpop = Dpop::generate().unwrap();
        let proof = dpop.proof("POST", URL, Some("tok"), None).unwrap();
        assert_eq!(
            check(&checker, "POST", &[&proof], "tok").unwrap(),
            dpop.thumbprint()
        );
        assert_eq!(
            check(&checker, "POST", &[&proof], "tok").unwrap_err(),
            "the DPoP proof was used before"
        );
        // The URL is compared without query, fragment, case of scheme and host, or a trailing
        // slash.
        let other = dpop
            .proof(
                "GET",
                "HTTPS://MCP.example.com/mcp/?x=1#f",
                Some("tok"),
                None,
            )
            .unwrap();
        assert!(check(&checker, "GET", &[&other], "tok").is_ok());
        let forged = forge(es256(), claims("tok"));
        assert_eq!(
            check(&checker, "POST", &[&forged], "tok").unwrap(),
            serde_json::from_value::<Jwk>(key().1)
                .unwrap()
                .thumbprint(ThumbprintHash::SHA256)
                .unwrap()
        );
    }

    #[test]
    fn a_proof_for_another_request_or_token_is_refused_naming_what_differs() {
        let checker = ProofChecker::new(URL);
        let dpop = Dpop::generate().unwrap();
        let refused = |method: &str, url: &str, token: &str| {
            let proof = dpop.proof(method, url, Some("tok"), None).unwrap();
            check(&checker, "POST", &[&proof], token).unwrap_err()
        };
        assert_eq!(
            refused("GET", URL, "tok"),
            "the DPoP proof's htm is not the request's method"
        );
        assert_eq!(
            refused("POST", "https://mcp.example.com/other", "tok"),
            "the DPoP proof's htu is not this server's URL"
        );
        assert_eq!(
            refused("POST", "http://mcp.example.com/mcp", "tok"),
            "the DPoP proof's htu is not this server's URL"
        );
        assert_eq!(
            refused("POST", URL, "another"),
            "the DPoP proof's ath is not the token's hash"
        );
        let proof = dpop.proof("POST", URL, None, None).unwrap();
        assert_eq!(
            check(&checker, "POST", &[&proof], "tok").unwrap_err(),
            "the DPoP proof's ath is not the token's hash"
        );
    }

    #[test]
    fn one_proof_is_required_and_no_more() {
        let checker = ProofChecker::new(URL);
        let dpop = Dpop::generate().unwrap();
        let a = dpop.proof("POST", URL, Some("tok"), None).unwrap();
        let b = dpop.proof("POST", URL, Some("tok"), None).unwrap();
        assert_eq!(
            check(&checker, "POST", &[], "tok").unwrap_err(),
            "a DPoP proof is required with a DPoP token"
        );
        assert_eq!(
            check(&checker, "POST", &[&a, &b], "tok").unwrap_err(),
            "one DPoP proof, not several"
        );
        for not_a_jwt in ["", "abc", "a.b.c", "%%%.e30.sig"] {
            assert_eq!(
                check(&checker, "POST", &[not_a_jwt], "tok").unwrap_err(),
                "the DPoP proof is not a JWT",
                "{not_a_jwt}"
            );
        }
        let mut bytes = a.into_bytes();
        let last = bytes.len() - 2;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        assert_eq!(
            check(&checker, "POST", &[&tampered], "tok").unwrap_err(),
            "the DPoP proof's signature does not verify with its jwk"
        );
    }

    #[test]
    fn a_proofs_header_must_be_a_dpop_one_with_a_public_asymmetric_key() {
        let checker = ProofChecker::new(URL);
        let refused = |header: Value| {
            check(&checker, "POST", &[&forge(header, claims("tok"))], "tok").unwrap_err()
        };
        assert_eq!(
            refused(json!({"typ": "JWT", "alg": "ES256"})),
            "the DPoP proof's typ is not dpop+jwt"
        );
        assert_eq!(
            refused(json!({"alg": "ES256"})),
            "the DPoP proof's typ is not dpop+jwt"
        );
        for alg in ["HS256", "none", "ES512", "XX"] {
            assert_eq!(
                refused(json!({"typ": "dpop+jwt", "alg": alg})),
                "the DPoP proof's alg is not an asymmetric algorithm",
                "{alg}"
            );
        }
        let (_, jwk) = key();
        let mut private = jwk.clone();
        private["d"] = json!("AAAA");
        assert_eq!(
            refused(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": private})),
            "the DPoP proof's jwk holds a private key"
        );
        assert_eq!(
            refused(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": "a key"})),
            "the DPoP proof's jwk is not a public key"
        );
        assert_eq!(
            refused(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": {"kty": "XX"}})),
            "the DPoP proof's jwk is not a usable public key"
        );
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk});
        let mut without = header.clone();
        without.as_object_mut().unwrap().remove("jwk");
        // (forge fills a missing jwk in: a header without one is built by hand.)
        let encode = |value: &Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap());
        let bare = format!("{}.{}.sig", encode(&without), encode(&claims("tok")));
        assert_eq!(
            check(&checker, "POST", &[&bare], "tok").unwrap_err(),
            "the DPoP proof has no jwk"
        );
        // Another key than the one that signed.
        let other = serde_json::to_value(Dpop::generate().unwrap().public_jwk()).unwrap();
        assert_eq!(
            refused(json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": other})),
            "the DPoP proof's signature does not verify with its jwk"
        );
    }

    #[test]
    fn a_proofs_claims_must_name_a_jti_and_a_time_within_the_window() {
        let checker = ProofChecker::new(URL);
        let refused = |edit: &dyn Fn(&mut Value)| {
            let mut claims = claims("tok");
            edit(&mut claims);
            check(&checker, "POST", &[&forge(es256(), claims)], "tok")
        };
        let no_jti = "the DPoP proof has no jti";
        assert_eq!(
            refused(&|c| {
                c.as_object_mut().unwrap().remove("jti");
            })
            .unwrap_err(),
            no_jti
        );
        assert_eq!(refused(&|c| c["jti"] = json!("")).unwrap_err(), no_jti);
        assert_eq!(refused(&|c| c["jti"] = json!(7)).unwrap_err(), no_jti);
        assert_eq!(
            refused(&|c| c["jti"] = json!("j".repeat(257))).unwrap_err(),
            no_jti
        );
        assert!(refused(&|c| c["jti"] = json!("j".repeat(256))).is_ok());
        let late = "the DPoP proof's iat is not within 300 seconds of now";
        let now = now_secs();
        assert_eq!(
            refused(&|c| c["iat"] = json!(now - PROOF_WINDOW - 2)).unwrap_err(),
            late
        );
        assert_eq!(
            refused(&|c| c["iat"] = json!(now + PROOF_WINDOW + 2)).unwrap_err(),
            late
        );
        assert_eq!(refused(&|c| c["iat"] = json!("now")).unwrap_err(), late);
        let edge = |at: u64| {
            move |c: &mut Value| {
                c["iat"] = json!(at);
                c["jti"] = json!(format!("edge-{at}"));
            }
        };
        assert!(refused(&edge(now - PROOF_WINDOW + 2)).is_ok());
        assert!(refused(&edge(now + PROOF_WINDOW - 2)).is_ok());
        assert_eq!(
            refused(&|c| {
                c.as_object_mut().unwrap().remove("htm");
            })
            .unwrap_err(),
            "the DPoP proof's htm is not the request's method"
        );
        assert_eq!(
            refused(&|c| {
                c.as_object_mut().unwrap().remove("htu");
            })
            .unwrap_err(),
            "the DPoP proof's htu is not this server's URL"
        );
    }

    #[test]
    fn a_jti_is_remembered_for_its_window_and_the_oldest_go_first() {
        let checker = ProofChecker::new(URL);
        assert!(checker.remember("a", 1_000, 1_000));
        assert!(!checker.remember("a", 1_000, 1_000));
        // Still within a's window at its last second...
        assert!(!checker.remember("a", 1_000 + PROOF_WINDOW, 1_000 + PROOF_WINDOW));
        // ... and forgotten once it has closed.
        assert!(checker.remember("b", 1_001 + PROOF_WINDOW, 1_001 + PROOF_WINDOW));
        assert!(checker.remember("a", 1_001 + PROOF_WINDOW, 1_001 + PROOF_WINDOW));
        // At the bound, the oldest is forgotten for the newest.
        let checker = ProofChecker::new(URL);
        for i in 0..MAX_REMEMBERED_PROOFS {
            assert!(checker.remember(&format!("p{i}"), 5, 5));
        }
        assert!(!checker.remember("p0", 5, 5), "all kept up to the bound");
        assert!(checker.remember("new", 5, 5));
        assert!(
            !checker.remember("p1", 5, 5),
            "a replay is refused at the bound too"
        );
        let seen = checker.seen.lock().unwrap();
        assert_eq!(seen.order.len(), MAX_REMEMBERED_PROOFS);
        assert_eq!(seen.ids.len(), MAX_REMEMBERED_PROOFS);
        assert!(!seen.ids.contains("p0") && seen.ids.contains("p1") && seen.ids.contains("new"));
    }
}
