//! What can go wrong in an operation that is not a business outcome.

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is well-formed but asks for something invalid (-32602 / 400).
    #[error("{0}")]
    InvalidInput(String),
    /// The request names more than we accept at once (`request_too_large`).
    #[error("{0}")]
    RequestTooLarge(String),
    /// A write kept losing races with concurrent changes of the same session.
    #[error("the session is changing concurrently; retry shortly")]
    Busy,
    #[error("the payment processor is unavailable; retry shortly")]
    PaymentUnavailable,
    /// An approved charge whose order the store could not record yet (it was unavailable, or
    /// its commit failed with its outcome unknown): the charge stays claimed, and a retried
    /// complete or the recovery sweeper places it.
    #[error(
        "the payment was approved, but the order could not be recorded yet; retry complete_checkout: it places \
         the order from this payment without charging again"
    )]
    OrderPending,
    /// A merchant's refund not recorded on the order: the processor did not confirm it (no
    /// answer, or a failure of its own), or confirmed it while other changes kept the order
    /// busy. It is kept under its key and asked again until the processor answers, then
    /// recorded on the order.
    #[error(
        "the refund is not recorded on the order yet (the payment processor did not confirm it, or the order was \
         changing concurrently); it is kept and asked for again under the same key until the processor answers \
         (for 12 hours), then recorded on the order, or dropped if the processor refuses it (repeating the request \
         is safe: it is the same refund)"
    )]
    RefundPending,
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A broken invariant of ours; the message is for the log, not the client.
    #[error("{0}")]
    Internal(String),
}

/// The classes of [`Error`] a transport maps to its own codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    InvalidInput,
    RequestTooLarge,
    Unavailable,
    Internal,
}

impl Error {
    /// No wildcard arm: a new error does not compile until it has a class.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidInput(_) => ErrorCode::InvalidInput,
            Error::RequestTooLarge(_) => ErrorCode::RequestTooLarge,
            Error::Busy | Error::PaymentUnavailable | Error::OrderPending | Error::RefundPending => {
                ErrorCode::Unavailable
            }
            Error::Store(StoreError::Unavailable(_)) => ErrorCode::Unavailable,
            Error::Store(
                StoreError::Conflict { .. } | StoreError::NotFound | StoreError::InDoubt(_) | StoreError::Backend(_),
            ) => ErrorCode::Internal,
            Error::Internal(_) => ErrorCode::Internal,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Error {
        Error::InvalidInput(message.into())
    }
}
