//! The `tools/list` schemas are generated in `ucp_protocol::tool_schema` (inputs from the
//! request types; outputs still hand-written there).

pub(crate) use ucp_protocol::tool_schema::{input_schema, output_schema};
