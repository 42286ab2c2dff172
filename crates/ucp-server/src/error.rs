//! Protocol errors and the one table that maps each to an HTTP status, a JSON-RPC code and
//! a UCP code. Business outcomes (not found, out of stock, capabilities incompatible) are
//! never errors: they travel as UCP error responses inside a successful reply.

use axum::http::StatusCode;

/// Why a request could not be processed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The body is not JSON (-32700).
    Parse,
    /// Not a JSON-RPC request object, or a batch (-32600).
    InvalidRequest,
    /// Unknown JSON-RPC method (-32601).
    MethodNotFound,
    /// Arguments fail the tool's schema, unknown tool, missing meta (-32602).
    InvalidParams,
    /// A lookup batch over our limit (-32602, `request_too_large`).
    RequestTooLarge,
    InvalidProfileUrl,
    ProfileUnreachable,
    ProfileMalformed,
    VersionUnsupported,
    /// Host not served here, Origin not allowed.
    Forbidden,
    MethodNotAllowed,
    UnsupportedMediaType,
    PayloadTooLarge,
    /// An `MCP-Protocol-Version` we do not speak.
    UnsupportedProtocolVersion,
    /// A REST request without a header the binding requires.
    MissingHeader,
    /// An idempotency key reused with another payload (security.md §4; checklist 80).
    IdempotencyConflict,
    /// A duplicate that waited its bound while the first call with its key still ran.
    IdempotencyInFlight,
    Unavailable,
    Internal,
    /// Signatures are required and the request has no `Signature-Input` (401 / -32000).
    SignatureMissing,
    /// No signature verified: bad value, missing required components, expired, garbled.
    SignatureInvalid,
    /// The `keyid` is not in the signer's profile, even after one refresh.
    KeyNotFound,
    /// `Content-Digest` does not match the bytes received (400 / -32600).
    DigestMismatch,
    /// The key's type or curve, or the signature's `alg`, is one we do not verify.
    AlgorithmUnsupported,
    /// No credential where the operation needs one, or one that does not verify (401);
    /// `challenge` is the `WWW-Authenticate` value.
    Unauthenticated {
        challenge: String,
    },
    /// A bearer token without a scope the platform must have (403 + `WWW-Authenticate`).
    InsufficientScope {
        challenge: String,
    },
    /// A profile no onboarded platform lists, when only those may call (403).
    ProfileNotTrusted,
    /// Over a rate limit (429 + `Retry-After`; MCP `data.retry_after`).
    RateLimited {
        retry_after_secs: u64,
    },
}

/// A protocol error with a message a developer can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub kind: ErrorKind,
    pub message: String,
}

/// How one error kind appears on each transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// The HTTP status on the MCP endpoint (argument errors stay 200 there, as Google expects).
    pub status: StatusCode,
    /// The HTTP status on the REST binding.
    pub rest_status: StatusCode,
    /// The stable `code` of a REST error body.
    pub rest_code: &'static str,
    pub jsonrpc_code: i64,
    /// The UCP error code carried in `error.data.code` (REST: `code`), if the spec names one.
    pub ucp_code: Option<&'static str>,
}

impl ErrorKind {
    /// The one table. No wildcard arm: a new kind does not compile until it is mapped.
    pub fn mapping(&self) -> Mapping {
        let (status, jsonrpc_code, ucp_code) = match self {
            ErrorKind::Parse => (StatusCode::BAD_REQUEST, -32700, None),
            ErrorKind::InvalidRequest => (StatusCode::BAD_REQUEST, -32600, None),
            ErrorKind::MethodNotFound => (StatusCode::OK, -32601, None),
            ErrorKind::InvalidParams => (StatusCode::OK, -32602, Some("invalid_input")),
            ErrorKind::RequestTooLarge => (StatusCode::OK, -32602, Some("request_too_large")),
            ErrorKind::InvalidProfileUrl => (StatusCode::BAD_REQUEST, -32001, Some("invalid_profile_url")),
            ErrorKind::ProfileUnreachable => (StatusCode::FAILED_DEPENDENCY, -32001, Some("profile_unreachable")),
            ErrorKind::ProfileMalformed => (StatusCode::UNPROCESSABLE_ENTITY, -32001, Some("profile_malformed")),
            ErrorKind::VersionUnsupported => (StatusCode::UNPROCESSABLE_ENTITY, -32001, Some("version_unsupported")),
            ErrorKind::Forbidden => (StatusCode::FORBIDDEN, -32000, Some("forbidden")),
            ErrorKind::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, -32600, None),
            ErrorKind::UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, -32600, None),
            ErrorKind::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, -32600, Some("request_too_large")),
            ErrorKind::UnsupportedProtocolVersion => (StatusCode::BAD_REQUEST, -32600, None),
            ErrorKind::MissingHeader => (StatusCode::BAD_REQUEST, -32600, None),
            ErrorKind::IdempotencyConflict => (StatusCode::CONFLICT, -32000, Some("idempotency_conflict")),
            ErrorKind::IdempotencyInFlight => (StatusCode::CONFLICT, -32000, Some("idempotency_in_progress")),
            ErrorKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, -32000, Some("unavailable")),
            ErrorKind::Internal => (StatusCode::INTERNAL_SERVER_ERROR, -32603, None),
            ErrorKind::SignatureMissing => (StatusCode::UNAUTHORIZED, -32000, Some("signature_missing")),
            ErrorKind::SignatureInvalid => (StatusCode::UNAUTHORIZED, -32000, Some("signature_invalid")),
            ErrorKind::KeyNotFound => (StatusCode::UNAUTHORIZED, -32000, Some("key_not_found")),
            ErrorKind::DigestMismatch => (StatusCode::BAD_REQUEST, -32600, Some("digest_mismatch")),
            ErrorKind::AlgorithmUnsupported => (StatusCode::BAD_REQUEST, -32600, Some("algorithm_unsupported")),
            ErrorKind::Unauthenticated { .. } => (StatusCode::UNAUTHORIZED, -32000, None),
            ErrorKind::InsufficientScope { .. } => (StatusCode::FORBIDDEN, -32000, Some("insufficient_scope")),
            ErrorKind::ProfileNotTrusted => (StatusCode::FORBIDDEN, -32000, Some("profile_not_trusted")),
            ErrorKind::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, -32000, Some("rate_limited")),
        };
        let (rest_status, rest_code) = match self {
            ErrorKind::Parse => (StatusCode::BAD_REQUEST, "invalid_json"),
            ErrorKind::InvalidRequest => (StatusCode::BAD_REQUEST, "invalid_request"),
            ErrorKind::MethodNotFound => (StatusCode::NOT_FOUND, "not_found"),
            ErrorKind::InvalidParams => (StatusCode::BAD_REQUEST, "invalid_input"),
            ErrorKind::RequestTooLarge => (StatusCode::BAD_REQUEST, "request_too_large"),
            ErrorKind::InvalidProfileUrl => (StatusCode::BAD_REQUEST, "invalid_profile_url"),
            ErrorKind::ProfileUnreachable => (StatusCode::FAILED_DEPENDENCY, "profile_unreachable"),
            ErrorKind::ProfileMalformed => (StatusCode::UNPROCESSABLE_ENTITY, "profile_malformed"),
            ErrorKind::VersionUnsupported => (StatusCode::UNPROCESSABLE_ENTITY, "version_unsupported"),
            ErrorKind::Forbidden => (StatusCode::FORBIDDEN, "forbidden"),
            ErrorKind::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            ErrorKind::UnsupportedMediaType => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            ErrorKind::PayloadTooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            ErrorKind::UnsupportedProtocolVersion => (StatusCode::BAD_REQUEST, "invalid_request"),
            ErrorKind::MissingHeader => (StatusCode::BAD_REQUEST, "missing_header"),
            ErrorKind::IdempotencyConflict => (StatusCode::CONFLICT, "idempotency_conflict"),
            ErrorKind::IdempotencyInFlight => (StatusCode::CONFLICT, "idempotency_in_progress"),
            ErrorKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            ErrorKind::Internal => (StatusCode::INTERNAL_SERVER_ERROR, "internal_error"),
            ErrorKind::SignatureMissing => (StatusCode::UNAUTHORIZED, "signature_missing"),
            ErrorKind::SignatureInvalid => (StatusCode::UNAUTHORIZED, "signature_invalid"),
            ErrorKind::KeyNotFound => (StatusCode::UNAUTHORIZED, "key_not_found"),
            ErrorKind::DigestMismatch => (StatusCode::BAD_REQUEST, "digest_mismatch"),
            ErrorKind::AlgorithmUnsupported => (StatusCode::BAD_REQUEST, "algorithm_unsupported"),
            ErrorKind::Unauthenticated { .. } => (StatusCode::UNAUTHORIZED, "unauthenticated"),
            ErrorKind::InsufficientScope { .. } => (StatusCode::FORBIDDEN, "insufficient_scope"),
            ErrorKind::ProfileNotTrusted => (StatusCode::FORBIDDEN, "profile_not_trusted"),
            ErrorKind::RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
        };
        Mapping { status, rest_status, rest_code, jsonrpc_code, ucp_code }
    }
}

impl ApiError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ApiError { kind, message: message.into() }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        ApiError::new(ErrorKind::InvalidParams, message)
    }

    /// JSON the body's first reading took (its numbers and strings checked only for syntax)
    /// that a `Value` cannot hold: a number out of range (`1e400`), a lone surrogate
    /// (`"\ud800"`). The sender's mistake, not ours.
    pub fn unreadable(error: serde_json::Error) -> Self {
        ApiError::invalid_params(format!("the body holds JSON that cannot be read: {error}"))
    }

    /// Logs the real cause once and returns the generic error a client sees.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        ApiError::new(ErrorKind::Internal, "internal error")
    }

    /// The `WWW-Authenticate` challenge of a 401 (or a scope 403), if this error has one. Every
    /// 401 of the UCP bindings has one (RFC 9110 §15.5.2): a signature's refusals name the
    /// `Signature` scheme (RFC 9421 signatures; no parameters, the keys come from the signer's
    /// profile).
    pub fn challenge(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Unauthenticated { challenge } | ErrorKind::InsufficientScope { challenge } => Some(challenge),
            ErrorKind::SignatureMissing | ErrorKind::SignatureInvalid | ErrorKind::KeyNotFound => Some("Signature"),
            _ => None,
        }
    }

    /// Adds the headers this error's class calls for (`WWW-Authenticate`) to `headers`.
    pub fn add_challenge(&self, headers: &mut axum::http::HeaderMap) {
        if let Some(challenge) = self.challenge()
            && let Ok(value) = axum::http::HeaderValue::from_str(challenge)
        {
            headers.insert(axum::http::header::WWW_AUTHENTICATE, value);
        }
    }

    /// Seconds a client should wait before retrying, for the kinds that have one.
    pub fn retry_after(&self) -> Option<u64> {
        if let ErrorKind::RateLimited { retry_after_secs } = self.kind {
            return Some(retry_after_secs);
        }
        matches!(self.kind, ErrorKind::Unavailable | ErrorKind::IdempotencyInFlight).then_some(1)
    }
}

/// What a write whose outcome is unknown answers.
const IN_DOUBT: &str = "storage failed while saving this change, which may or may not have been saved";

impl From<ucp_domain::store::StoreError> for ApiError {
    fn from(error: ucp_domain::store::StoreError) -> Self {
        match error {
            ucp_domain::store::StoreError::Unavailable(cause) => {
                tracing::warn!(%cause, "storage unavailable");
                ApiError::new(ErrorKind::Unavailable, "storage is temporarily unavailable")
            }
            ucp_domain::store::StoreError::InDoubt(cause) => {
                tracing::error!(%cause, "a write's outcome is unknown");
                ApiError::new(ErrorKind::Internal, IN_DOUBT)
            }
            other => ApiError::internal(other),
        }
    }
}

impl From<ucp_domain::Error> for ApiError {
    /// The core's error classes onto our kinds; no wildcard arm.
    fn from(error: ucp_domain::Error) -> Self {
        use ucp_domain::commerce::ErrorCode;
        match error.code() {
            ErrorCode::InvalidInput => ApiError::invalid_params(error.to_string()),
            ErrorCode::RequestTooLarge => ApiError::new(ErrorKind::RequestTooLarge, error.to_string()),
            ErrorCode::Unavailable => match error {
                ucp_domain::Error::Store(store) => ApiError::from(store),
                other => ApiError::new(ErrorKind::Unavailable, other.to_string()),
            },
            ErrorCode::Internal => match error {
                ucp_domain::Error::Store(store) => ApiError::from(store),
                other => ApiError::internal(other),
            },
        }
    }
}

impl From<ucp_protocol::requests::InvalidInput> for ApiError {
    fn from(error: ucp_protocol::requests::InvalidInput) -> Self {
        ApiError::invalid_params(error.0)
    }
}
