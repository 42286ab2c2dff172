//! Cart operations (cart.md): create, get, update (full replacement), cancel.

use super::*;

/// The body, and whether a cart was created (REST answers 201 only then).
pub async fn create_cart(call: &Call<'_>, request: CartRequest) -> Result<(String, bool), ApiError> {
    request.validate("cart", None)?;
    let (lines, messages, any_in_stock) = call.resolve_lines(request.line_items).await?;
    if lines.is_empty() || !any_in_stock {
        return call.nothing_to_sell(!lines.is_empty()).map(|body| (body, false));
    }
    let mut session = call.new_session(SessionKind::Cart);
    session.replace_lines(lines);
    apply_common(
        call,
        &mut session,
        request.buyer,
        request.context,
        request.discounts.map(|d| d.codes),
        request.attribution,
    );
    call.state.commerce.insert_session(&session).await?;
    let priced = call.price(&session).await?;
    call.render(&session, &priced, messages).map(|body| (body, true))
}

pub async fn get_cart(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    let Some(session) = call.load(id, SessionKind::Cart).await?.filter(|session| session.status != Status::Canceled)
    else {
        return call.not_found("Cart");
    };
    let priced = call.price(&session).await?;
    call.render(&session, &priced, Vec::new())
}

pub async fn update_cart(call: &Call<'_>, id: &str, request: CartRequest) -> Result<String, ApiError> {
    request.validate("cart", Some(id))?;
    for _ in 0..ATTEMPTS {
        let Some(mut session) =
            call.load(id, SessionKind::Cart).await?.filter(|session| session.status != Status::Canceled)
        else {
            return call.not_found("Cart");
        };
        let (lines, messages, _) = call.resolve_lines(request.line_items.clone()).await?;
        session.replace_lines(lines);
        apply_common(
            call,
            &mut session,
            request.buyer.clone(),
            request.context.clone(),
            request.discounts.clone().map(|d| d.codes),
            request.attribution.clone(),
        );
        if !call.save(&mut session).await? {
            continue;
        }
        let priced = call.price(&session).await?;
        return call.render(&session, &priced, messages);
    }
    Err(busy())
}

pub async fn cancel_cart(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    for _ in 0..ATTEMPTS {
        let Some(mut session) =
            call.load(id, SessionKind::Cart).await?.filter(|session| session.status != Status::Canceled)
        else {
            return call.not_found("Cart");
        };
        let priced = call.price(&session).await?;
        let body = call.render(&session, &priced, Vec::new())?;
        session.status = Status::Canceled;
        if call.save(&mut session).await? {
            return Ok(body);
        }
    }
    Err(busy())
}
