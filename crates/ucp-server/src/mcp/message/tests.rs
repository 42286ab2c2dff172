use serde_json::json;

use super::*;

/// A member that should be a string, as read from a parsed `Value`.
fn text(member: Option<&Value>) -> Option<Text<'static>> {
    member.map(|member| match member {
        Value::String(text) => Text::Str(Cow::Owned(text.clone())),
        _ => Text::NotAString,
    })
}

/// What the endpoint read before: the members of a parsed `Value`.
fn as_value(bytes: &[u8]) -> Option<Message<'static>> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    Some(match value {
        Value::Object(object)
            if (object.contains_key("result") || object.contains_key("error")) && !object.contains_key("method") =>
        {
            Message::Response
        }
        Value::Object(object) => Message::Object {
            jsonrpc: text(object.get("jsonrpc")),
            id: object.get("id").cloned(),
            method: text(object.get("method")),
            params: object.get("params").map(params_of),
        },
        Value::Array(_) => Message::Array,
        _ => Message::Other,
    })
}

/// `meta` as read from a parsed `Value`.
fn meta_of(meta: &Value) -> Meta<'static> {
    match meta {
        Value::Object(meta) => Meta::Object {
            agent: meta.get("ucp-agent").map(|agent| match agent {
                Value::Object(agent) => Agent::Object { profile: text(agent.get("profile")) },
                _ => Agent::Other,
            }),
            idempotency_key: text(meta.get("idempotency-key")),
        },
        _ => Meta::Other,
    }
}

/// `value`'s text, for as long as the test runs.
fn leaked(value: &Value) -> Json<'static> {
    Json(Box::leak(serde_json::value::to_raw_value(value).unwrap()))
}

/// `params` as read from a parsed `Value`.
fn params_of(params: &Value) -> Params<'static> {
    match params {
        Value::Null => Params::Null,
        Value::Object(object) => Params::Object {
            name: text(object.get("name")),
            protocol_version: text(object.get("protocolVersion")),
            arguments: object.get("arguments").map(|arguments| match arguments {
                Value::Object(arguments) => Arguments::Object {
                    meta: arguments.get("meta").map(meta_of),
                    id: arguments.get("id").cloned(),
                    payloads: PAYLOAD_MEMBERS.map(|member| arguments.get(member).map(leaked)),
                },
                _ => Arguments::Other,
            }),
        },
        _ => Params::Other,
    }
}

#[test]
fn a_message_reads_as_the_parsed_value_would() {
    let bodies: [&[u8]; 34] = [
        br#"{"params":{"arguments":{"meta":{"ucp-agent":{"profile":5,"profile":"x"},"idempotency-key":null,"ucp-agent":[1]}}}}"#,
        br#"{"params":{"arguments":{"meta":{"ucp-agent":{"pro\u0066ile":"https://a","x":{"profile":1}},"idempotency-key":"k","other":{"ucp-agent":1}}}}}"#,
        br#"{"params":{"arguments":{"meta":null,"id":"x"}}}"#,
        br#"{"params":{"arguments":{"meta":"x","meta":[{"ucp-agent":{}}]}}}"#,
        br#"{"params":{"arguments":{"meta":{"ucp-agent":null,"idempotency-key":["k"],"ucp\u002dagent":{"profile":"\u00e9"}}}}}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_product","arguments":{"meta":{"ucp-agent":{"profile":"https://p.example/p.json"}},"id":"p-1","catalog":{"id":"p-1"},"x":[1]}}}"#,
        br#"{"params":{"arguments":{"cart":{"a":1},"cart":null,"checkout":[],"meta":1,"meta":{"k":"v"}},"name":"a","n\u0061me":7,"arguments":3}}"#,
        br#"{"params":{"arguments":{"catalog":"\u00e9","id":{"nested":{"id":2}}},"protocolVersion":"2025-06-18","name":{"x":1}}}"#,
        br#"{"params":{"arguments":null,"protocolVersion":5}}"#,
        br#"{"params":"x"}"#,
        br#"{"params":[{"name":"ping"}],"params":{}}"#,
        br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"name":"x","arguments":{"id":1}}}"#,
        br#"{"method":"ping","extra":{"id":[1,2,{"method":3}]},"id":1.5}"#,
        br#"{"i\u0064":3,"\u006dethod":"ping","jsonrpc":2}"#,
        br#"{"id":1,"id":2,"params":[],"params":{"a":null}}"#,
        br#"{"id":null,"method":null,"jsonrpc":null,"params":null}"#,
        br#"{"method":{"a":[1]},"jsonrpc":["2.0"],"id":true}"#,
        br#"{"method":"tools\/call","jsonrpc":"2.0"}"#,
        br#"{}"#,
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        b"[]",
        b"3",
        b"-1e400",
        br#""ping""#,
        b"true",
        b"null",
        b" { \"id\" : 18446744073709551615 , \"method\" : \"ping\" } ",
        br#"{"id":-9223372036854775808,"method":"\u00e9"}"#,
        // Not UTF-8 (parsed as bytes, not as text): in a member read, and in a key.
        b"{\"jsonrpc\":\"2.0\",\"method\":\"p\xffng\"}",
        b"{\"m\xc3\":1,\"method\":\"ping\"}",
        // Responses (a result or an error, and no method), and a request that also has one.
        br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        br#"{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":1}"#,
    ];
    for body in bodies {
        let expected = as_value(body);
        let read = Message::parse(body).ok();
        assert_eq!(read, expected, "{}", String::from_utf8_lossy(body));
    }
    assert_eq!(
        Message::parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap(),
        Message::Object {
            jsonrpc: Some(Text::Str("2.0".into())),
            id: Some(json!(7)),
            method: Some(Text::Str("ping".into())),
            params: None
        }
    );
    let Message::Object { params, .. } =
        Message::parse(br#"{"params":{"name":"search_catalog","arguments":{"catalog":{"query":"mug"}}}}"#).unwrap()
    else {
        panic!("an object");
    };
    assert_eq!(
        params,
        Some(Params::Object {
            name: Some(Text::Str("search_catalog".into())),
            protocol_version: None,
            arguments: Some(Arguments::Object {
                meta: None,
                id: None,
                payloads: [Some(leaked(&json!({"query": "mug"}))), None, None]
            }),
        })
    );
}

#[test]
fn what_is_not_one_json_value_is_an_error() {
    for body in [&b""[..], b"{", b"{\"id\":1,}", b"[1,", b"{} {}", b"nul", b"{\"id\":1} x", b"\xff"] {
        assert!(Message::parse(body).is_err(), "{}", String::from_utf8_lossy(body));
        assert!(serde_json::from_slice::<Value>(body).is_err());
    }
}
