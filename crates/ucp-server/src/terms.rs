//! What a negotiation with one platform settles, per operation, computed once per cached
//! platform profile ([`crate::platform::PlatformProfile::terms`]): our profile never changes
//! while the process runs and a cached platform profile never changes either, so a hot call
//! reads its envelope and capability flags instead of intersecting maps and allocating them.

use ucp_protocol::negotiation::Negotiated;

use crate::discovery::BusinessProfile;
use crate::operations::{Capability, Operation};
use crate::response::Envelope;

/// The negotiated version and capabilities, and what each operation makes of them.
#[derive(Debug, Clone)]
pub struct Terms {
    pub negotiated: Negotiated,
    /// Whether the cart capability was negotiated at all (not only as relevant to an operation).
    pub cart_negotiated: bool,
    operations: Vec<OperationTerms>,
}

/// One operation's share of the negotiation.
#[derive(Debug, Clone)]
pub struct OperationTerms {
    pub operation: Operation,
    /// The `ucp` envelope of its answers: the negotiated capabilities relevant to it.
    pub envelope: Envelope,
    /// Whether its own capability is shared (otherwise: `capabilities_incompatible`).
    pub shared: bool,
    pub fulfillment: bool,
    pub discounts: bool,
}

impl Terms {
    /// Settles every operation's terms from one negotiation with `ours`.
    pub fn new(ours: &BusinessProfile, negotiated: Negotiated) -> Terms {
        let short_of = |name: &String| ours.short_names.get(name).copied();
        let operations = Operation::ALL
            .into_iter()
            .map(|operation| {
                let relevant: Vec<Capability> = operation.capability().relevant().collect();
                let capabilities: Vec<(String, String)> = negotiated
                    .capabilities
                    .iter()
                    .filter(|(name, _)| short_of(name).is_some_and(|capability| relevant.contains(&capability)))
                    .map(|(name, version)| (name.clone(), version.clone()))
                    .collect();
                let has =
                    |capability: Capability| capabilities.iter().any(|(name, _)| short_of(name) == Some(capability));
                OperationTerms {
                    operation,
                    shared: has(operation.capability()),
                    fulfillment: has(Capability::Fulfillment),
                    discounts: has(Capability::Discount),
                    envelope: Envelope::new(negotiated.version.clone(), capabilities),
                }
            })
            .collect();
        let cart_negotiated = negotiated.capabilities.keys().any(|name| short_of(name) == Some(Capability::Cart));
        Terms { negotiated, cart_negotiated, operations }
    }

    /// The terms of `operation` (every operation of `Operation::ALL` has its entry).
    pub fn of(&self, operation: Operation) -> Option<&OperationTerms> {
        self.operations.iter().find(|terms| terms.operation == operation)
    }
}
