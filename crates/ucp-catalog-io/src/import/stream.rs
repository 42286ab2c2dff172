//! An import that hands products to a store while it reads the feed: [`FeedImport`].
//!
//! One thread reads the feed (pass one) and, as products are guessed complete, sends them to
//! the stream of the current *attempt*, which a store drains into one transaction
//! (`CatalogStore::import_products`). The first reading stages only what the grouping rules
//! need, not the rows' values. An attempt ends with `End` (the store may commit) or `Stop` (it
//! must write nothing): stopped when a later row proves a guess wrong, in which case the feed
//! is read again, staged whole, and a second attempt follows with every product built from the
//! staging; stopped too when the feed turns out broken, when `--strict` meets a skipped row, or
//! when no product is valid. A stream whose thread ended without either (a panic) is never
//! complete.

use std::io::{self, BufRead};
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

use ucp_domain::catalog::Product;
use ucp_domain::store::{ProductStream, StoreError};

use super::{BuiltFeed, EarlyProducts, FeedError, FeedFormat, ImportOptions, stage};

/// Products handed over at once: fewer wake-ups than one at a time, little memory.
const BATCH: usize = 64;

/// Batches built ahead of the store at most.
const QUEUE: usize = 4;

/// How far an import is, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportProgress {
    /// Bytes of the feed read so far (from 0 again if the feed is read a second time).
    Read { bytes: u64 },
    /// A guess was wrong and the products are built again from the staging: `products` of at
    /// most `of` done.
    Rebuilt { products: u64, of: u64 },
}

/// A feed being read on a thread of its own, its products handed to a store as they come.
///
/// ```text
/// let import = FeedImport::start(open, format, options, dir, strict, progress)?;
/// while let Some(products) = import.next_attempt() {
///     outcome = store.import_products(products).await;   // the last outcome is the import's
/// }
/// let feed = import.finish()?;                             // counts and skipped rows
/// ```
#[derive(Debug)]
pub struct FeedImport {
    attempts: mpsc::Receiver<ProductStream>,
    thread: JoinHandle<Result<BuiltFeed, FeedError>>,
}

impl FeedImport {
    /// Starts reading the feed `open` opens (once, or twice if a guess was wrong; on the
    /// import's thread), staged in a new directory under `staging_dir`. With `strict`, a skipped
    /// row makes every attempt fail. `progress` is called from the import's thread.
    pub fn start<R, Open>(
        open: Open,
        format: FeedFormat,
        options: ImportOptions,
        staging_dir: PathBuf,
        strict: bool,
        progress: Box<dyn FnMut(ImportProgress) + Send>,
    ) -> Result<FeedImport, FeedError>
    where
        R: BufRead,
        Open: FnMut() -> io::Result<R> + Send + 'static,
    {
        let (attempts, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ucpd-import".to_owned())
            .spawn(move || run(open, format, &options, &staging_dir, strict, progress, attempts))?;
        Ok(FeedImport { attempts: receiver, thread })
    }

    /// Blocks until the import has products for a store: the stream of its next attempt, to be
    /// imported (in one transaction) before asking for the next; `None` when no attempt is left.
    /// Only the outcome of the last attempt counts: an earlier one always ends in an `Err`.
    pub fn next_attempt(&self) -> Option<ProductStream> {
        self.attempts.recv().ok()
    }

    /// Waits for the feed to be read: the counts and skipped rows, or why it could not be.
    pub fn finish(self) -> Result<BuiltFeed, FeedError> {
        drop(self.attempts);
        self.thread.join().unwrap_or_else(|_| Err(FeedError::Staging("the import thread panicked".to_owned())))
    }
}

/// The import's thread: pass one with early products; if a guess was wrong, pass one again
/// (staging everything) and pass two.
fn run<R: BufRead>(
    mut open: impl FnMut() -> io::Result<R>,
    format: FeedFormat,
    options: &ImportOptions,
    staging_dir: &std::path::Path,
    strict: bool,
    mut progress: Box<dyn FnMut(ImportProgress) + Send>,
    attempts: mpsc::Sender<ProductStream>,
) -> Result<BuiltFeed, FeedError> {
    let mut feeder = Feeder { attempts, current: None, pending: Vec::with_capacity(BATCH), strict, refused: false };
    let mut read = |early: Option<&mut dyn EarlyProducts>| {
        let reader = open()?;
        let payloads = early.is_none();
        stage(
            reader,
            format,
            options,
            staging_dir,
            &mut |bytes| progress(ImportProgress::Read { bytes }),
            early,
            payloads,
        )
    };
    let staged = match read(Some(&mut feeder)) {
        Ok(staged) if staged.abandoned() => {
            drop(staged);
            read(None)
        }
        staged => staged,
    };
    let built = staged.and_then(|staged| {
        let of = staged.products_staged();
        staged.build_products(&mut |product| feeder.send(product), &mut |products| {
            progress(ImportProgress::Rebuilt { products, of })
        })
    });
    match &built {
        Err(error) => feeder.stop(format!("the feed could not be read: {error}")),
        Ok(built) if strict && built.skipped() > 0 => {
            feeder.stop(format!("{} rows skipped and strict is set", built.skipped()))
        }
        Ok(built) if built.products() == 0 => feeder.stop("the feed holds no valid product".to_owned()),
        Ok(_) => feeder.end(),
    }
    built
}

/// What the import's thread tells a stream.
enum Message {
    Products(Vec<Product>),
    /// Every product of the attempt was handed over: the store may commit.
    End,
    /// The attempt is abandoned, for this reason: the store must write nothing.
    Stop(String),
}

/// Hands products to the current attempt's stream, opening an attempt when one is needed.
struct Feeder {
    attempts: mpsc::Sender<ProductStream>,
    /// The current attempt's stream; `None` between attempts.
    current: Option<mpsc::SyncSender<Message>>,
    pending: Vec<Product>,
    strict: bool,
    /// `strict` met a skipped row: no attempt can succeed, so none is made.
    refused: bool,
}

impl Feeder {
    fn send(&mut self, product: Product) {
        if self.refused {
            return;
        }
        if self.current.is_none() {
            let (sender, receiver) = mpsc::sync_channel(QUEUE);
            // Nobody taking attempts any more leaves the products nowhere to go, which is fine.
            let _ = self.attempts.send(Box::new(Received { receiver, batch: Vec::new().into_iter(), ended: false }));
            self.current = Some(sender);
        }
        self.pending.push(product);
        if self.pending.len() == BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Some(current) = &self.current
            && !self.pending.is_empty()
        {
            let batch = std::mem::replace(&mut self.pending, Vec::with_capacity(BATCH));
            // A store that gave up has its own error for the attempt; the feed is still read
            // to its end, so that every skipped row is known.
            let _ = current.send(Message::Products(batch));
        }
    }

    /// Abandons the current attempt, if any.
    fn stop(&mut self, reason: String) {
        self.pending.clear();
        if let Some(current) = self.current.take() {
            let _ = current.send(Message::Stop(reason));
        }
    }

    /// Completes the current attempt, if any.
    fn end(&mut self) {
        self.flush();
        if let Some(current) = self.current.take() {
            let _ = current.send(Message::End);
        }
    }
}

impl EarlyProducts for Feeder {
    fn product(&mut self, product: Product) {
        self.send(product);
    }

    fn retract(&mut self) {
        self.stop("a later row changed a product already handed on; the import starts over".to_owned());
    }

    fn skipped(&mut self) {
        if self.strict && !self.refused {
            self.refused = true;
            self.stop("a row was skipped and strict is set".to_owned());
        }
    }
}

/// The store's end of an attempt.
struct Received {
    receiver: mpsc::Receiver<Message>,
    batch: std::vec::IntoIter<Product>,
    ended: bool,
}

impl Iterator for Received {
    type Item = Result<Product, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(product) = self.batch.next() {
                return Some(Ok(product));
            }
            if self.ended {
                return None;
            }
            let message = self.receiver.recv();
            self.ended = !matches!(message, Ok(Message::Products(_)));
            match message {
                Ok(Message::Products(batch)) => self.batch = batch.into_iter(),
                Ok(Message::End) => return None,
                Ok(Message::Stop(reason)) => {
                    return Some(Err(StoreError::Backend(format!("import stopped: {reason}"))));
                }
                // Without `End` the attempt is not complete: never let a store commit it.
                Err(_) => {
                    return Some(Err(StoreError::Backend("import stopped: the feed's reader ended early".to_owned())));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ImportOptions, stage_feed};
    use super::*;

    // Rows skipped for a price in another currency than the catalog's are counted by currency,
    // in a Merchant Center feed and in JSON lines alike (other skipped rows are not).
    #[test]
    fn rows_skipped_for_their_currency_are_counted_by_currency() {
        let text =
            "id\ttitle\tprice\nmug\tMug\t5 EUR\ncup\tCup\t4 EUR\nhat\tHat\t3 GBP\nbowl\tBowl\t6\nbad\tBad\tfree\n";
        let line = |id: &str, currency: &str| {
            format!(
                r#"{{"id":"{id}","title":"T","description":{{}},"variants":[{{"id":"{id}","title":"","description":{{}},"price":{{"amount":5,"currency":"{currency}"}}}}]}}"#
            )
        };
        let lines = [line("mug", "EUR"), line("cup", "EUR"), line("hat", "GBP"), line("bowl", "USD"), line("bad", "")];
        for (feed, format) in
            [(text.to_owned(), FeedFormat::MerchantCenterText), (lines.join("\n"), FeedFormat::JsonLines)]
        {
            let options = ImportOptions::default();
            let staged = stage_feed(feed.as_bytes(), format, &options, &std::env::temp_dir(), &mut |_| {}).unwrap();
            let built = staged.build_products(&mut |_| {}, &mut |_| {}).unwrap();
            assert_eq!((built.products(), built.skipped()), (1, 4), "{format:?}");
            assert_eq!(built.foreign_currencies().unwrap(), [("EUR".to_owned(), 2), ("GBP".to_owned(), 1)]);
        }
    }

    // A feed whose first reading guessed wrong is read again: a value left out of a row is
    // reported once, and the row imported.
    #[test]
    fn a_value_left_out_is_reported_once_when_the_feed_is_read_again() {
        let feed = "id\titem_group_id\ttitle\tprice\tadditional_image_link\n\
                    tee-s\ttee\tTee\t9\thttps://img.example/upload/w_4,h_4/a.jpg\n\
                    mug\t\tMug\t5\t\n\
                    tee-m\ttee\tTee\t9\t\n";
        let open = move || Ok(io::Cursor::new(feed.as_bytes()));
        let staging = tempfile::tempdir().unwrap();
        let import = FeedImport::start(
            open,
            FeedFormat::MerchantCenterText,
            ImportOptions::default(),
            staging.path().to_owned(),
            false,
            Box::new(|_| {}),
        )
        .unwrap();
        let mut attempts = Vec::new();
        while let Some(products) = import.next_attempt() {
            attempts.push(products.map(|product| product.map(|product| product.id)).collect::<Vec<_>>());
        }
        assert_eq!(attempts.len(), 2, "the first attempt is abandoned");
        let ids: Vec<String> = attempts.pop().unwrap().into_iter().map(Result::unwrap).collect();
        assert_eq!(ids, ["tee", "mug"]);
        let built = import.finish().unwrap();
        let mut warnings = Vec::new();
        built.for_each_warning(&mut |warning| warnings.push(warning.to_string())).unwrap();
        assert_eq!(
            warnings,
            ["line 2: additional_image_link: \"h_4/a.jpg\" is not an absolute http(s) URL: the image is left out, \
              the rest of the row imported"]
        );
    }
}
