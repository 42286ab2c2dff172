//! Order operations (order.md): get_order, scoped to the platform that placed the order.

use super::*;

pub async fn get_order(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    let Some(order) = call.state.commerce.order(id).await? else {
        return call.not_found("Order");
    };
    if order.platform != call.platform {
        let body = error_response(
            &call.envelope.version,
            "unauthorized",
            "This order was placed through another platform.",
            Some(&call.state.profile.base_url),
        );
        return serde_json::to_string(&body).map_err(ApiError::internal);
    }
    let mut document: Value = serde_json::from_str(&order.document).map_err(ApiError::internal)?;
    if let Value::Object(map) = &mut document {
        let mut with_envelope = serde_json::Map::new();
        with_envelope.insert("ucp".into(), call.envelope.ucp());
        with_envelope.extend(std::mem::take(map));
        *map = with_envelope;
    }
    serde_json::to_string(&document).map_err(ApiError::internal)
}
