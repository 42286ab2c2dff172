//! `TrafficStore` on SQLite: hourly counter cells, added to in one transaction per flush,
//! summed for the console and `/metrics`, and folded into one history cell once old.

use async_trait::async_trait;
use rusqlite::params;
use ucp_domain::store::{StoreError, TrafficCount, TrafficKind, TrafficStore};

use super::{SqliteStore, backend};

fn kind_of(text: &str) -> TrafficKind {
    if text == "funnel" { TrafficKind::Funnel } else { TrafficKind::Call }
}

#[async_trait]
impl TrafficStore for SqliteStore {
    async fn add_traffic(&self, counts: &[TrafficCount]) -> Result<(), StoreError> {
        if counts.is_empty() {
            return Ok(());
        }
        let counts = counts.to_vec();
        self.write(move |connection| {
            let transaction = connection.savepoint().map_err(backend)?;
            {
                let mut statement = transaction
                    .prepare_cached(
                        "INSERT INTO traffic (platform, kind, name, outcome, hour, count) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
                         ON CONFLICT (platform, kind, name, outcome, hour) \
                         DO UPDATE SET count = count + excluded.count",
                    )
                    .map_err(backend)?;
                for count in &counts {
                    let added = i64::try_from(count.count).unwrap_or(i64::MAX);
                    statement
                        .execute(params![
                            count.platform,
                            count.kind.as_str(),
                            count.name,
                            count.outcome,
                            count.hour,
                            added
                        ])
                        .map_err(backend)?;
                }
            }
            transaction.commit().map_err(backend)
        })
        .await
    }

    async fn traffic_totals(&self, since_hour: Option<i64>) -> Result<Vec<TrafficCount>, StoreError> {
        self.read(move |connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT platform, kind, name, outcome, SUM(count) FROM traffic \
                     WHERE (?1 IS NULL OR hour >= ?1) \
                     GROUP BY platform, kind, name, outcome ORDER BY platform, kind, name, outcome",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![since_hour], |row| {
                    Ok(TrafficCount {
                        platform: row.get(0)?,
                        kind: kind_of(&row.get::<_, String>(1)?),
                        name: row.get(2)?,
                        outcome: row.get(3)?,
                        hour: 0,
                        count: u64::try_from(row.get::<_, i64>(4)?).unwrap_or(0),
                    })
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn compact_traffic(&self, before_hour: i64) -> Result<u64, StoreError> {
        self.write(move |connection| {
            let transaction = connection.savepoint().map_err(backend)?;
            transaction
                .prepare_cached(
                    "INSERT INTO traffic (platform, kind, name, outcome, hour, count) \
                     SELECT platform, kind, name, outcome, 0, SUM(count) FROM traffic \
                     WHERE hour > 0 AND hour < ?1 GROUP BY platform, kind, name, outcome \
                     ON CONFLICT (platform, kind, name, outcome, hour) DO UPDATE SET count = count + excluded.count",
                )
                .map_err(backend)?
                .execute(params![before_hour])
                .map_err(backend)?;
            let deleted = transaction
                .prepare_cached("DELETE FROM traffic WHERE hour > 0 AND hour < ?1")
                .map_err(backend)?
                .execute(params![before_hour])
                .map_err(backend)?;
            transaction.commit().map_err(backend)?;
            Ok(deleted as u64)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(platform: &str, name: &str, hour: i64, count: u64) -> TrafficCount {
        TrafficCount {
            platform: platform.into(),
            kind: TrafficKind::Funnel,
            name: name.into(),
            outcome: String::new(),
            hour,
            count,
        }
    }

    #[tokio::test]
    async fn counts_add_up_by_window_and_survive_compaction() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("t.db"), 1).unwrap();
        store.add_traffic(&[count("a", "search", 10, 2), count("a", "search", 20, 3)]).await.unwrap();
        store.add_traffic(&[count("a", "search", 20, 1), count("b", "order", 20, 1)]).await.unwrap();
        let all = store.traffic_totals(None).await.unwrap();
        assert_eq!(all.iter().find(|c| c.platform == "a").unwrap().count, 6);
        let recent = store.traffic_totals(Some(15)).await.unwrap();
        assert_eq!(recent.iter().find(|c| c.platform == "a").unwrap().count, 4);
        assert_eq!(store.compact_traffic(15).await.unwrap(), 1);
        let all = store.traffic_totals(None).await.unwrap();
        assert_eq!(all.iter().find(|c| c.platform == "a").unwrap().count, 6, "history kept in hour 0");
        assert_eq!(store.traffic_totals(Some(15)).await.unwrap().iter().find(|c| c.platform == "a").unwrap().count, 4);
    }
}
