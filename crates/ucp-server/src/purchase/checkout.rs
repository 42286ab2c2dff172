//! Checkout operations (checkout.md): create (also from a cart), get, update, cancel and
//! complete, with the payment step and atomic order placement.

use super::*;

/// The body, and whether a checkout was created (REST answers 201 only then): a cart that
/// already has an open checkout gets that one back (checklist 118; transport-rest.md 200).
pub async fn create_checkout(call: &Call<'_>, request: CheckoutRequest) -> Result<(String, bool), ApiError> {
    request.validate("checkout", None)?;
    if let Some(cart_id) = request.cart_id.clone() {
        if !call.cart_negotiated {
            return Err(ApiError::invalid_params(
                "checkout.cart_id needs the cart capability, which was not negotiated",
            ));
        }
        return create_from_cart(call, &cart_id, request).await;
    }
    let Some(line_items) = request.line_items.clone() else {
        return Err(ApiError::invalid_params("checkout.line_items is required (or checkout.cart_id)"));
    };
    if line_items.is_empty() {
        return Err(ApiError::invalid_params("checkout.line_items must name at least one item"));
    }
    let (lines, messages, any_in_stock) = call.resolve_lines(line_items).await?;
    if lines.is_empty() || !any_in_stock {
        return call.nothing_to_sell(!lines.is_empty()).map(|body| (body, false));
    }
    let mut session = call.new_session(SessionKind::Checkout);
    session.replace_lines(lines);
    apply_checkout_fields(call, &mut session, request);
    let priced = call.price(&session).await?;
    session.status = priced.status;
    call.state.commerce.insert_session(&session).await?;
    call.render(&session, &priced, messages).map(|body| (body, true))
}

async fn create_from_cart(
    call: &Call<'_>,
    cart_id: &str,
    request: CheckoutRequest,
) -> Result<(String, bool), ApiError> {
    let Some(cart) = call.load(cart_id, SessionKind::Cart).await?.filter(|cart| cart.status != Status::Canceled) else {
        return call.not_found("Cart").map(|body| (body, false));
    };
    if let Some(existing) = call.state.commerce.open_checkout_for_cart(cart_id, call.now()).await?
        && existing.platform == call.platform
    {
        let priced = call.price(&existing).await?;
        return call.render(&existing, &priced, Vec::new()).map(|body| (body, false));
    }
    let mut session = call.new_session(SessionKind::Checkout);
    session.lines = cart.lines.clone();
    session.next_line = cart.next_line;
    session.cart_id = Some(cart_id.to_owned());
    // The cart's contents win over overlapping fields of the request (cart.md §6).
    let mut request = request;
    request.line_items = None;
    apply_checkout_fields(call, &mut session, request);
    // The cart's buyer and context win; the payload only fills what the cart lacks.
    if cart.buyer.is_some() {
        session.buyer = cart.buyer.clone();
    }
    if cart.context.is_some() {
        session.context = cart.context.clone();
    }
    if call.discounts && session.discount_codes.is_empty() {
        session.discount_codes = cart.discount_codes.clone();
    }
    let priced = call.price(&session).await?;
    if session.lines.is_empty() {
        return call.nothing_to_sell(false).map(|body| (body, false));
    }
    session.status = priced.status;
    call.state.commerce.insert_session(&session).await?;
    call.render(&session, &priced, Vec::new()).map(|body| (body, true))
}

fn apply_checkout_fields(call: &Call<'_>, session: &mut Session, request: CheckoutRequest) {
    let codes = request.discounts.map(|discounts| discounts.codes);
    apply_common(call, session, request.buyer, request.context, codes, request.attribution);
    if call.fulfillment {
        session.fulfillment = request.fulfillment.and_then(|fulfillment| fulfillment.into_choice());
    }
}

pub async fn get_checkout(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    let Some(session) = call.load(id, SessionKind::Checkout).await? else {
        return call.not_found("Checkout");
    };
    let priced = call.price(&session).await?;
    call.render(&session, &priced, Vec::new())
}

pub async fn update_checkout(call: &Call<'_>, id: &str, request: CheckoutRequest) -> Result<String, ApiError> {
    request.validate("checkout", Some(id))?;
    for _ in 0..ATTEMPTS {
        let Some(mut session) = call.load(id, SessionKind::Checkout).await? else {
            return call.not_found("Checkout");
        };
        if let Some(refusal) = refuse_change(&session, "updated") {
            let priced = call.price(&session).await?;
            return call.render(&session, &priced, vec![refusal]);
        }
        let Some(line_items) = request.line_items.clone() else {
            return Err(ApiError::invalid_params(
                "checkout.line_items is required: an update replaces the whole checkout",
            ));
        };
        let (lines, messages, _) = call.resolve_lines(line_items).await?;
        session.replace_lines(lines);
        apply_checkout_fields(call, &mut session, request.clone());
        session.sticky_messages.clear();
        session.pending_authentication = None;
        let priced = call.price(&session).await?;
        session.status = priced.status;
        // A complete (or cancel) that got in first wins; the retry sees it and refuses.
        if !call.save(&mut session).await? {
            continue;
        }
        reflect_into_cart(call, &session).await?;
        return call.render(&session, &priced, messages);
    }
    Err(busy())
}

/// Keeps a linked cart in step with its active checkout (cart.md §6, checklist 118).
async fn reflect_into_cart(call: &Call<'_>, checkout: &Session) -> Result<(), ApiError> {
    let Some(cart_id) = &checkout.cart_id else { return Ok(()) };
    for _ in 0..ATTEMPTS {
        let Some(mut cart) =
            call.load(cart_id, SessionKind::Cart).await?.filter(|cart| cart.status != Status::Canceled)
        else {
            return Ok(());
        };
        cart.lines = checkout.lines.clone();
        cart.next_line = cart.next_line.max(checkout.next_line);
        if call.save(&mut cart).await? {
            return Ok(());
        }
    }
    tracing::warn!(cart = %cart_id, checkout = %checkout.id, "the linked cart kept changing; not updated");
    Ok(())
}

/// The message for an operation a terminal or in-flight checkout does not allow.
pub(super) fn refuse_change(session: &Session, verb: &str) -> Option<Message> {
    let (code, reason) = match session.status {
        Status::Completed => ("checkout_completed", "is completed"),
        Status::Canceled => ("checkout_canceled", "is canceled"),
        Status::CompleteInProgress => ("complete_in_progress", "is being completed"),
        _ => return None,
    };
    let severity =
        if session.status == Status::CompleteInProgress { Severity::Recoverable } else { Severity::Unrecoverable };
    Some(Message::error(code, severity, format!("This checkout {reason}; it cannot be {verb}. Nothing changed."), None))
}

pub async fn cancel_checkout(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    for _ in 0..ATTEMPTS {
        let Some(mut session) = call.load(id, SessionKind::Checkout).await? else {
            return call.not_found("Checkout");
        };
        if let Some(refusal) = refuse_change(&session, "canceled") {
            let priced = call.price(&session).await?;
            return call.render(&session, &priced, vec![refusal]);
        }
        session.status = Status::Canceled;
        if !call.save(&mut session).await? {
            continue;
        }
        let priced = call.price(&session).await?;
        return call.render(&session, &priced, Vec::new());
    }
    Err(busy())
}

pub async fn complete_checkout(call: &Call<'_>, id: &str, request: CheckoutRequest) -> Result<String, ApiError> {
    request.validate("checkout", Some(id))?;
    for _ in 0..ATTEMPTS {
        if let Some(body) = complete_once(call, id, &request).await? {
            return Ok(body);
        }
    }
    Err(busy())
}

/// What a complete asks of the processor.
enum PaymentStep {
    Charge,
    /// The buyer passed 3-D Secure on our page: confirm the pending challenge.
    Confirm(String),
}

/// One attempt at completing; `None` when the checkout changed before anything was charged.
async fn complete_once(call: &Call<'_>, id: &str, request: &CheckoutRequest) -> Result<Option<String>, ApiError> {
    let Some(mut session) = call.load(id, SessionKind::Checkout).await? else {
        return call.not_found("Checkout").map(Some);
    };
    if let Some(refusal) = refuse_change(&session, "completed again") {
        let priced = call.price(&session).await?;
        return call.render(&session, &priced, vec![refusal]).map(Some);
    }
    let priced = call.price(&session).await?;
    if priced.status != Status::ReadyForComplete {
        return call.render(&session, &priced, Vec::new()).map(Some);
    }
    // Never charge a price the platform did not see: a submitted code that no longer applies
    // (expired, used up meanwhile) stops the completion until the codes are fixed.
    if priced
        .messages
        .iter()
        .any(|message| message.code.starts_with("discount_code_") && message.code != "discount_code_already_applied")
    {
        let refusal = Message::error(
            "discount_code_rejected",
            Severity::Recoverable,
            "A discount code no longer applies; remove or replace it (see the warnings), then complete again. No payment was taken.",
            Some("$.discounts.codes".into()),
        );
        return call.render(&session, &priced, vec![refusal]).map(Some);
    }
    let total = priced.totals.iter().find(|total| total.kind == "total").map_or(0, |total| total.amount);
    let charge_key = call.idempotency_key.map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);

    let approved_challenge = session.pending_authentication.clone().filter(|pending| pending.approved);
    let (handler, step, token) = if let Some(pending) = approved_challenge {
        let Some(handler) = call.state.payments.by_id(&pending.handler_id) else {
            return Err(ApiError::internal(format!("handler {} vanished", pending.handler_id)));
        };
        (handler, PaymentStep::Confirm(pending.reference), String::new())
    } else {
        let instruments = request.payment.as_ref().map(|payment| payment.instruments.as_slice()).unwrap_or_default();
        let instrument = match instruments {
            [one] => one,
            [] => {
                return Err(ApiError::invalid_params(
                    "checkout.payment.instruments must hold the instrument to charge",
                ));
            }
            _ => {
                return fail_payment(
                    call,
                    &mut session,
                    "Send exactly one payment instrument; split payments are not supported.",
                )
                .await
                .map(Some);
            }
        };
        let Some(handler) = call.handler(&session, &instrument.handler_id) else {
            let reason = format!(
                "Payment handler {:?} is not offered for this checkout; use one from ucp.payment_handlers.",
                instrument.handler_id
            );
            return fail_payment(call, &mut session, &reason).await.map(Some);
        };
        if !handler.instrument_types.contains(&instrument.kind) {
            let reason = format!("Handler {} does not take {} instruments.", handler.id, instrument.kind);
            return fail_payment(call, &mut session, &reason).await.map(Some);
        }
        let Some(token) = instrument.credential.as_ref().and_then(|credential| credential.token.clone()) else {
            return fail_payment(call, &mut session, "The payment instrument needs a token credential.")
                .await
                .map(Some);
        };
        (handler, PaymentStep::Charge, token)
    };

    // Claim the checkout before any money moves: from here until the outcome is stored it is
    // `complete_in_progress`, which updates, cancels and other completes refuse (checklist
    // 132, 146). A concurrent writer that got in first makes this attempt start over.
    session.status = Status::CompleteInProgress;
    if !call.save(&mut session).await? {
        return Ok(None);
    }
    let charge = Charge {
        checkout_id: session.id.clone(),
        amount: total,
        currency: session.currency.clone(),
        token,
        idempotency_key: charge_key,
    };
    let outcome = match &step {
        PaymentStep::Charge => handler.processor.charge(&charge).await,
        PaymentStep::Confirm(reference) => handler.processor.confirm(reference, &charge).await,
    };
    let handler_id = handler.id.clone();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            tracing::warn!(checkout = %session.id, %error, "payment processor unavailable");
            release(call, &mut session).await;
            return Err(ApiError::new(
                crate::error::ErrorKind::Unavailable,
                "the payment processor is unavailable; retry shortly",
            ));
        }
    };
    match outcome {
        Outcome::Declined { reason } => fail_payment(call, &mut session, &reason).await.map(Some),
        Outcome::RequiresAction { reference } => {
            session.pending_authentication =
                Some(PendingAuthentication { handler_id, instrument_type: "card".into(), reference, approved: false });
            session.status = Status::Incomplete;
            let priced = call.price(&session).await?;
            session.status = priced.status;
            if !call.save(&mut session).await? {
                return call.current(&session.id, "completed again").await.map(Some);
            }
            call.render(&session, &priced, Vec::new()).map(Some)
        }
        Outcome::Approved { reference } => place_order(call, session, priced, &handler_id, &reference).await.map(Some),
    }
}

/// Gives a claimed (`complete_in_progress`) checkout back when its complete ends without an order.
async fn release(call: &Call<'_>, session: &mut Session) {
    if session.status != Status::CompleteInProgress {
        return;
    }
    session.status = Status::Incomplete;
    match call.save(session).await {
        Ok(true) => {}
        Ok(false) => tracing::warn!(checkout = %session.id, "checkout changed while being completed"),
        Err(error) => {
            tracing::error!(checkout = %session.id, error = %error.message, "could not release a checkout being completed")
        }
    }
}

async fn fail_payment(call: &Call<'_>, session: &mut Session, reason: &str) -> Result<String, ApiError> {
    session.sticky_messages = vec![Message::error("payment_failed", Severity::Recoverable, reason.to_owned(), None)];
    session.pending_authentication = None;
    if session.status == Status::CompleteInProgress {
        session.status = Status::Incomplete;
    }
    if !call.save(session).await? {
        return call.current(&session.id, "completed again").await;
    }
    let priced = call.price(session).await?;
    call.render(session, &priced, Vec::new())
}

async fn place_order(
    call: &Call<'_>,
    mut session: Session,
    priced: Priced,
    handler_id: &str,
    reference: &str,
) -> Result<String, ApiError> {
    let order_id = format!("ord_{}", uuid::Uuid::new_v4().simple());
    let now = call.now();
    let permalink = format!("{}/orders/{order_id}", call.state.profile.base_url);
    let document = render::order_document(&session, &priced, &order_id, &permalink);
    let stock: Vec<(String, i64)> = session.lines.iter().map(|line| (line.item_id.clone(), line.quantity)).collect();
    session.status = Status::Completed;
    session.order_id = Some(order_id.clone());
    session.pending_authentication = None;
    session.sticky_messages.clear();
    let mut final_priced = priced.clone();
    final_priced.status = Status::Completed;
    final_priced.messages.clear();
    let mut final_body = render::session(call, &session, &final_priced, Vec::new());
    if let Value::Object(map) = &mut final_body {
        map.remove("ucp");
    }
    session.final_body = Some(final_body);
    let order = PlaceOrder {
        checkout: session.clone(),
        order: StoredOrder {
            id: order_id.clone(),
            checkout_id: session.id.clone(),
            platform: session.platform.clone(),
            document: document.to_string(),
            created_at: now,
        },
        stock,
        used_codes: priced
            .used_codes
            .iter()
            .map(|code| {
                let limit = call
                    .state
                    .pricing_rules
                    .discounts
                    .iter()
                    .find(|rule| rule.code.as_deref().is_some_and(|rule_code| rule_code.eq_ignore_ascii_case(code)))
                    .and_then(|rule| rule.usage_limit);
                (code.clone(), limit)
            })
            .collect(),
    };
    match call.state.commerce.place_order(order).await {
        Ok(()) => {
            session.version += 1;
            tracing::info!(order = %order_id, checkout = %session.id, handler = handler_id, "order placed");
            call.state.mailer.order_confirmation(&session, &order_id, &permalink);
            let priced = call.price(&session).await?;
            call.render(&session, &priced, Vec::new())
        }
        Err(PlaceOrderError::OutOfStock { variant_id }) => {
            refund(call, handler_id, reference).await;
            let Some(mut session) = call.load(&session.id, SessionKind::Checkout).await? else {
                return call.not_found("Checkout");
            };
            release(call, &mut session).await;
            let priced = call.price(&session).await?;
            let index = session.lines.iter().position(|line| line.item_id == variant_id);
            let path = index.map(|index| format!("$.line_items[{index}]"));
            // One message per problem: pricing may already report the line sold out.
            let reported = priced.messages.iter().any(|message| {
                message.code == "out_of_stock"
                    && message.path.as_deref().zip(path.as_deref()).is_some_and(|(have, want)| have.starts_with(want))
            });
            let extra = if reported {
                Vec::new()
            } else {
                vec![Message::error(
                    "out_of_stock",
                    Severity::Recoverable,
                    format!("{variant_id} sold out while the order was being placed; the payment was not taken."),
                    path,
                )]
            };
            call.render(&session, &priced, extra)
        }
        Err(PlaceOrderError::NotOpen) => {
            refund(call, handler_id, reference).await;
            call.current(&session.id, "completed again").await
        }
        Err(PlaceOrderError::DiscountExhausted { code }) => {
            // Priced again, the code now shows its usage-limit warning and the new total.
            refund(call, handler_id, reference).await;
            let Some(mut session) = call.load(&session.id, SessionKind::Checkout).await? else {
                return call.not_found("Checkout");
            };
            release(call, &mut session).await;
            let priced = call.price(&session).await?;
            tracing::info!(checkout = %session.id, %code, "discount code ran out while the order was being placed");
            call.render(&session, &priced, Vec::new())
        }
        Err(PlaceOrderError::Store(error)) => {
            refund(call, handler_id, reference).await;
            if let Some(mut current) = call.load(&session.id, SessionKind::Checkout).await.ok().flatten() {
                release(call, &mut current).await;
            }
            Err(error.into())
        }
    }
}

async fn refund(call: &Call<'_>, handler_id: &str, reference: &str) {
    if let Some(handler) = call.state.payments.by_id(handler_id)
        && let Err(error) = handler.processor.refund(reference).await
    {
        tracing::error!(%error, reference, "refund of an unplaced order failed; reconcile by hand");
    }
}
