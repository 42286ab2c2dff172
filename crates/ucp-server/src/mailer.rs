//! Order confirmation emails. The built-in mailer writes each message as an `.eml` file into
//! `<data dir>/outbox/`, where a relay (or a person) can pick it up; no payment data is ever
//! part of a message.

use std::path::PathBuf;

use ucp_domain::checkout::Session;
use ucp_domain::order::Order;

#[derive(Debug, Clone)]
pub struct Mailer {
    outbox: PathBuf,
    from: String,
}

impl Mailer {
    pub fn new(outbox: PathBuf, business_name: &str) -> Mailer {
        Mailer { outbox, from: format!("{business_name} <orders@localhost>") }
    }

    /// Writes the confirmation for a placed order; a failure is logged, never fatal.
    pub fn order_confirmation(&self, checkout: &Session, order_id: &str, permalink: &str) {
        let Some(email) = checkout.buyer.as_ref().and_then(|buyer| buyer.email.clone()) else {
            tracing::warn!(order = order_id, "no buyer email: no confirmation sent");
            return;
        };
        if email.contains(['\r', '\n']) {
            tracing::warn!(order = order_id, "buyer email has line breaks: no confirmation sent");
            return;
        }
        let name = checkout.buyer.as_ref().and_then(|buyer| buyer.first_name.clone()).unwrap_or_else(|| "there".into());
        let lines: String =
            checkout.lines.iter().map(|line| format!("  {} x {}\r\n", line.quantity, line.item_id)).collect();
        let message = format!(
            "From: {}\r\nTo: {email}\r\nSubject: Your order {order_id}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n\
             Hi {name},\r\n\r\nThank you for your order {order_id}.\r\n\r\n{lines}\r\nSee it any time at {permalink}\r\n",
            self.from
        );
        let written = crate::hardening::create_private_dir(&self.outbox).and_then(|()| {
            crate::hardening::write_private(&self.outbox.join(format!("{order_id}.eml")), message.as_bytes())
        });
        match written {
            Ok(()) => tracing::info!(order = order_id, "order confirmation queued"),
            Err(error) => tracing::error!(order = order_id, %error, "writing the order confirmation failed"),
        }
    }
}

impl ucp_domain::commerce::Notifier for Mailer {
    fn order_placed(&self, checkout: &Session, order: &Order) {
        self.order_confirmation(checkout, &order.id, &order.permalink_url);
    }
}
