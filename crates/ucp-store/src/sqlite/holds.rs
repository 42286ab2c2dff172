//! Holds on orders (`CommerceStore::hold_order`): one async mutex per order held or waited
//! for, in this process. That is enough for SQLite, whose file only this process's server
//! writes (the CLI's order commands go through its admin API).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use ucp_domain::store::{OrderHold, StoreError};

type Table = Arc<Mutex<HashMap<String, Arc<AsyncMutex<()>>>>>;

/// The orders held or waited for now; an entry leaves once nobody holds or waits for it.
#[derive(Default)]
pub(crate) struct Holds {
    table: Table,
}

fn locked(table: &Table) -> MutexGuard<'_, HashMap<String, Arc<AsyncMutex<()>>>> {
    // Every change to the map is one insert or remove: a panic elsewhere leaves it whole.
    table.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Drops `id`'s entry if nobody holds or waits for it (its only reference is the table's).
fn forget_idle(table: &mut HashMap<String, Arc<AsyncMutex<()>>>, id: &str) {
    if table.get(id).is_some_and(|lock| Arc::strong_count(lock) == 1) {
        table.remove(id);
    }
}

impl Holds {
    /// Holds order `id`, waiting at most `wait` for the change that holds it now.
    pub(crate) async fn hold(&self, id: &str, wait: Duration) -> Result<OrderHold, StoreError> {
        // Cloned under the table's lock, which a hold's release takes too: an entry is never
        // removed while someone is about to wait for it.
        let lock = locked(&self.table).entry(id.to_owned()).or_default().clone();
        // Dropped after the wait below, whatever ends it (held, timed out, or the caller gone):
        // the entry goes if nobody holds or waits for it then.
        let _waiting = Waiting { table: &self.table, id };
        let waited = tokio::time::timeout(wait, lock.lock_owned());
        match waited.await {
            Ok(guard) => Ok(OrderHold::new(Held { table: self.table.clone(), id: id.to_owned(), guard: Some(guard) })),
            Err(_) => {
                Err(StoreError::Unavailable(format!("order {id} is being changed by another request; retry shortly")))
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        locked(&self.table).len()
    }
}

/// A wait for a hold, in progress.
struct Waiting<'a> {
    table: &'a Table,
    id: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        forget_idle(&mut locked(self.table), self.id);
    }
}

/// One order held; released when dropped.
struct Held {
    table: Table,
    id: String,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut table = locked(&self.table);
        drop(self.guard.take());
        forget_idle(&mut table, &self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_hold_of_one_order_waits_for_the_first() {
        let holds = Arc::new(Holds::default());
        let first = holds.hold("ord_1", Duration::from_secs(30)).await.unwrap();
        let other = holds.hold("ord_2", Duration::from_millis(10)).await;
        assert!(other.is_ok(), "another order is not held");
        let waiting = {
            let holds = holds.clone();
            tokio::spawn(async move { holds.hold("ord_1", Duration::from_secs(30)).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "waits while the first is held");
        drop(first);
        tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap().unwrap();
        drop(other);
        assert_eq!(holds.len(), 0, "nothing left once nobody holds or waits");
    }

    #[tokio::test]
    async fn a_hold_kept_past_the_wait_answers_unavailable() {
        let holds = Holds::default();
        let first = holds.hold("ord_1", Duration::from_secs(30)).await.unwrap();
        let error = holds.hold("ord_1", Duration::from_millis(20)).await.unwrap_err();
        assert!(matches!(&error, StoreError::Unavailable(text) if text.contains("ord_1")), "{error:?}");
        assert_eq!(holds.len(), 1, "the holder's entry stays");
        assert!(holds.hold("ord_1", Duration::ZERO).await.is_err(), "zero: only if free now");
        drop(first);
        let free = holds.hold("ord_1", Duration::ZERO).await;
        assert!(free.is_ok(), "free now");
        drop(free);
        // A waiter whose caller gave up leaves nothing behind.
        let held = holds.hold("ord_2", Duration::from_secs(30)).await.unwrap();
        let gave_up =
            tokio::time::timeout(Duration::from_millis(20), holds.hold("ord_2", Duration::from_secs(30))).await;
        assert!(gave_up.is_err());
        drop(held);
        assert_eq!(holds.len(), 0);
    }
}
