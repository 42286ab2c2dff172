//! A response body of a few pieces, written out in turn: a tool's answer is its JSON-RPC
//! envelope around the reply's body and the body's escaped mirror, and each of those is handed
//! to hyper as it is (hyper queues the pieces and writes them with one `writev`) rather than
//! copied into one buffer first. For a search page that copy was about 50 KB per request.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};

/// `N` pieces; empty ones are skipped. The length is exact, so hyper sends `Content-Length`.
#[derive(Debug)]
pub(super) struct Pieces<const N: usize> {
    pieces: [Bytes; N],
    next: usize,
    remaining: u64,
}

impl<const N: usize> Pieces<N> {
    pub(super) fn new(pieces: [Bytes; N]) -> Pieces<N> {
        let remaining = pieces.iter().map(|piece| piece.len() as u64).sum();
        Pieces { pieces, next: 0, remaining }
    }
}

impl<const N: usize> Body for Pieces<N> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        while let Some(slot) = this.pieces.get_mut(this.next) {
            this.next += 1;
            let piece = std::mem::take(slot);
            if !piece.is_empty() {
                this.remaining -= piece.len() as u64;
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
        }
        Poll::Ready(None)
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn the_pieces_come_out_in_order_and_the_length_is_exact() {
        let pieces = Pieces::new([
            Bytes::from_static(b"{\"a\":"),
            Bytes::new(),
            Bytes::from(b"[1,2]".to_vec()),
            Bytes::from_static(b"}"),
        ]);
        assert_eq!(pieces.size_hint().exact(), Some(11));
        assert!(!pieces.is_end_stream());
        let mut pieces = pieces;
        let mut frames = Vec::new();
        while let Some(frame) = pieces.frame().await {
            frames.push(frame.unwrap().into_data().unwrap());
            assert_eq!(pieces.size_hint().exact(), Some(11 - frames.iter().map(Bytes::len).sum::<usize>() as u64));
        }
        assert_eq!(frames, [&b"{\"a\":"[..], b"[1,2]", b"}"], "the empty piece is skipped");
        assert!(pieces.is_end_stream());
    }

    #[tokio::test]
    async fn no_pieces_is_an_empty_body() {
        let mut pieces = Pieces::new([Bytes::new(), Bytes::new()]);
        assert!(pieces.is_end_stream());
        assert!(pieces.frame().await.is_none());
    }
}
