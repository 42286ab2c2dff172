//! Agent traffic: calls and errors per platform and operation, and the purchase funnel
//! (search → cart → checkout → order) per platform, over the last day or week, from the
//! server's counters (`crate::traffic`) and the orders themselves.

use std::collections::BTreeMap;

use askama::Template;
use axum::Extension;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use ucp_domain::store::TrafficKind;

use super::views::{self, Frame, Section, render};
use super::{Session, html};
use crate::state::AppState;
use crate::traffic::{OK, hour_of};

#[derive(Debug, Default, Deserialize)]
pub(super) struct WindowQuery {
    window: Option<String>,
}

/// The last day (24 hourly cells, this hour included) or the last week (168).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Window {
    Day,
    Week,
}

impl Window {
    fn of(query: Result<Query<WindowQuery>, QueryRejection>) -> Window {
        match query.ok().and_then(|Query(query)| query.window).as_deref() {
            Some("week") => Window::Week,
            _ => Window::Day,
        }
    }

    fn hours(self) -> i64 {
        match self {
            Window::Day => 24,
            Window::Week => 24 * 7,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Window::Day => "last 24 hours",
            Window::Week => "last 7 days",
        }
    }

    fn is_week(&self) -> bool {
        *self == Window::Week
    }

    /// The first hour cell in the window.
    fn since_hour(self, now: i64) -> i64 {
        hour_of(now) - self.hours() + 1
    }
}

struct CallRow {
    platform: String,
    operation: String,
    calls: u64,
    errors: u64,
    breakdown: String,
}

#[derive(Template)]
#[template(path = "console/traffic.html", config = "templates/askama.toml")]
struct TrafficPage {
    frame: Frame,
    window: Window,
    rows: Vec<CallRow>,
}

pub(super) async fn calls(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    query: Result<Query<WindowQuery>, QueryRejection>,
) -> Response {
    let window = Window::of(query);
    let totals = match state.traffic.totals(Some(window.since_hour(state.clock.now()))).await {
        Ok(totals) => totals,
        Err(error) => return views::unavailable(&state, &error),
    };
    // (platform, operation) → (calls, errors by code)
    let mut cells: BTreeMap<(String, String), (u64, BTreeMap<String, u64>)> = BTreeMap::new();
    for total in totals.into_iter().filter(|total| total.kind == TrafficKind::Call) {
        let cell = cells.entry((total.platform, total.name)).or_default();
        cell.0 += total.count;
        if total.outcome != OK {
            *cell.1.entry(total.outcome).or_default() += total.count;
        }
    }
    let rows = cells
        .into_iter()
        .map(|((platform, operation), (calls, errors))| CallRow {
            platform,
            operation,
            calls,
            errors: errors.values().sum(),
            breakdown: errors.iter().map(|(code, count)| format!("{code}: {count}")).collect::<Vec<_>>().join(", "),
        })
        .collect();
    let page = TrafficPage { frame: Frame::new(&state, Section::Traffic, Some(&session)), window, rows };
    html(StatusCode::OK, render(&page))
}

struct FunnelRow {
    platform: String,
    searches: u64,
    carts: u64,
    checkouts: u64,
    orders: u64,
    conversion: String,
}

#[derive(Template)]
#[template(path = "console/funnel.html", config = "templates/askama.toml")]
struct FunnelPage {
    frame: Frame,
    window: Window,
    rows: Vec<FunnelRow>,
}

/// `orders / checkouts` as a whole percentage, or a dash without checkouts.
fn conversion(orders: u64, checkouts: u64) -> String {
    orders
        .saturating_mul(100)
        .checked_div(checkouts)
        .map_or_else(|| "\u{2014}".into(), |percent| format!("{percent}\u{a0}%"))
}

pub(super) async fn funnel(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    query: Result<Query<WindowQuery>, QueryRejection>,
) -> Response {
    let window = Window::of(query);
    let since_hour = window.since_hour(state.clock.now());
    let totals = match state.traffic.totals(Some(since_hour)).await {
        Ok(totals) => totals,
        Err(error) => return views::unavailable(&state, &error),
    };
    let orders =
        match views::loaded(&state, "counting orders", state.core.orders_by_platform(Some(since_hour * 3600))).await {
            Ok(orders) => orders,
            Err(page) => return page,
        };
    let mut rows: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for total in totals.into_iter().filter(|total| total.kind == TrafficKind::Funnel) {
        let index = match total.name.as_str() {
            "search" => 0,
            "cart" => 1,
            "checkout" => 2,
            _ => continue,
        };
        rows.entry(total.platform).or_default()[index] += total.count;
    }
    for (platform, count) in orders {
        rows.entry(platform).or_default()[3] += count;
    }
    let rows = rows
        .into_iter()
        .map(|(platform, [searches, carts, checkouts, orders])| FunnelRow {
            platform,
            searches,
            carts,
            checkouts,
            orders,
            conversion: conversion(orders, checkouts),
        })
        .collect();
    let page = FunnelPage { frame: Frame::new(&state, Section::Funnel, Some(&session)), window, rows };
    html(StatusCode::OK, render(&page))
}
