//! Content types, parsed with `mime` and compared by essence (`application/json`), so
//! parameters (`charset=utf-8`) and case do not matter.

use axum::http::{HeaderMap, header};

use crate::error::{ApiError, ErrorKind};

/// `Ok` when the request declares a JSON body; 415 otherwise (missing, unparsable or another type).
pub fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Err(ApiError::new(ErrorKind::UnsupportedMediaType, "Content-Type is missing; send application/json"));
    };
    // The common spellings need no parse.
    if matches!(value.as_bytes(), b"application/json" | b"application/json; charset=utf-8") {
        return Ok(());
    }
    let text = value.to_str().unwrap_or_default();
    match text.parse::<mime::Mime>() {
        Ok(media_type) if media_type.essence_str().eq_ignore_ascii_case("application/json") => Ok(()),
        Ok(media_type) => Err(ApiError::new(
            ErrorKind::UnsupportedMediaType,
            format!("Content-Type {:?} is not supported; send application/json", media_type.essence_str()),
        )),
        Err(_) => Err(ApiError::new(
            ErrorKind::UnsupportedMediaType,
            format!("Content-Type {text:?} is not a media type; send application/json"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(content_type: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers
    }

    #[test]
    fn json_by_essence_whatever_the_parameters_or_case() {
        assert!(require_json(&with("application/json")).is_ok());
        assert!(require_json(&with("Application/JSON; charset=utf-8")).is_ok());
        assert!(require_json(&with("text/plain")).is_err());
        assert!(require_json(&with("application/json-seq")).is_err());
        assert!(require_json(&with("not a type")).is_err());
        assert!(require_json(&HeaderMap::new()).is_err());
    }
}
