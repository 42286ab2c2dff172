//! Discounts: which rules apply (automatic promotions, then the submitted codes) and how an
//! amount is split over the lines it discounts.

use super::{AppliedDiscount, PricingInput};
use crate::checkout::{DiscountKind, DiscountRule, Message, Session, Severity};

/// The discounts priced so far: the amount off each line, what was applied, the codes whose
/// use counts at completion, and a free-shipping rule waiting for the shipping cost.
pub(super) struct Discounts {
    pub(super) per_line: Vec<i64>,
    pub(super) applied: Vec<AppliedDiscount>,
    pub(super) used_codes: Vec<String>,
    /// (code, title, priority) of an accepted free-shipping rule.
    free_shipping: Option<(Option<String>, String, u32)>,
}

impl Discounts {
    /// The item discounts: the accepted rules in order, each split over the lines it applies to
    /// (what earlier rules left of them). Nothing when discounts are not negotiated.
    pub(super) fn on_items(
        input: &PricingInput<'_>,
        subtotal: i64,
        base_amounts: &[i64],
        messages: &mut Vec<Message>,
    ) -> Discounts {
        let mut discounts = Discounts {
            per_line: vec![0; base_amounts.len()],
            applied: Vec::new(),
            used_codes: Vec::new(),
            free_shipping: None,
        };
        if !input.discounts_enabled {
            return discounts;
        }
        let accepted = select_discounts(input, subtotal, base_amounts, messages);
        for (priority, rule) in accepted.iter().enumerate() {
            let priority = priority as u32 + 1;
            match rule.kind {
                DiscountKind::FreeShipping => {
                    discounts.free_shipping = Some((rule.code.clone(), rule.title.clone(), priority));
                    continue;
                }
                DiscountKind::Percentage(_) | DiscountKind::FixedAmount(_) => {}
            }
            let eligible: Vec<usize> =
                (0..base_amounts.len()).filter(|index| rule_applies_to(rule, input, *index)).collect();
            let remaining: Vec<i64> =
                eligible.iter().map(|index| base_amounts[*index] - discounts.per_line[*index]).collect();
            let eligible_total: i64 = remaining.iter().sum();
            let amount = match rule.kind {
                DiscountKind::Percentage(basis_points) => eligible_total * basis_points.clamp(0, 10_000) / 10_000,
                DiscountKind::FixedAmount(value) => value.clamp(0, eligible_total),
                DiscountKind::FreeShipping => 0,
            };
            if amount <= 0 {
                continue;
            }
            let shares = allocate(amount, &remaining);
            let mut allocations = Vec::new();
            for (share, index) in shares.into_iter().zip(&eligible) {
                if share > 0 {
                    discounts.per_line[*index] += share;
                    allocations.push((format!("$.line_items[{index}]"), share));
                }
            }
            if let Some(code) = &rule.code {
                discounts.used_codes.push(code.to_uppercase());
            }
            discounts.applied.push(AppliedDiscount {
                code: rule.code.clone(),
                title: rule.title.clone(),
                amount,
                automatic: rule.code.is_none(),
                method: "across",
                priority,
                allocations,
            });
        }
        discounts
    }

    /// The sum of the item discounts.
    pub(super) fn items_total(&self) -> i64 {
        self.per_line.iter().sum()
    }

    /// The order-level discount: an accepted free-shipping rule takes off the shipping cost,
    /// once there is one. Returns the amount.
    pub(super) fn on_shipping(&mut self, shipping_cost: Option<i64>) -> i64 {
        let (Some((code, title, priority)), Some(cost)) = (self.free_shipping.take(), shipping_cost) else {
            return 0;
        };
        if let Some(code) = &code {
            self.used_codes.push(code.to_uppercase());
        }
        self.applied.push(AppliedDiscount {
            code: code.clone(),
            title,
            amount: cost,
            automatic: code.is_none(),
            method: "across",
            priority,
            allocations: Vec::new(),
        });
        cost
    }
}

/// Picks the discounts that apply: automatic promotions whose conditions hold, then the
/// submitted codes in order; rejected codes become warnings at `$.discounts.codes[i]`.
pub(super) fn select_discounts<'a>(
    input: &'a PricingInput<'_>,
    subtotal: i64,
    base_amounts: &[i64],
    messages: &mut Vec<Message>,
) -> Vec<&'a DiscountRule> {
    let mut accepted: Vec<&DiscountRule> = Vec::new();
    let eligible_subtotal = |rule: &DiscountRule| -> i64 {
        (0..base_amounts.len())
            .filter(|index| rule_applies_to(rule, input, *index))
            .map(|index| base_amounts[index])
            .sum()
    };
    for rule in input.rules.discounts.iter().filter(|rule| rule.code.is_none()) {
        let live = rule.expires_at.is_none_or(|expires| input.now < expires);
        if live && rule.min_subtotal.is_none_or(|min| subtotal >= min) && eligible_subtotal(rule) > 0 {
            accepted.push(rule);
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for (index, code) in input.session.discount_codes.iter().enumerate() {
        let path = Some(format!("$.discounts.codes[{index}]"));
        let normalized = code.trim().to_uppercase();
        if seen.contains(&normalized) {
            // A repeat of an accepted code is "already applied"; a repeat of a rejected one
            // already has its rejection at the first occurrence.
            if accepted.iter().any(|rule| rule.code.as_deref().map(str::to_uppercase) == Some(normalized.clone())) {
                messages.push(Message::warning(
                    "discount_code_already_applied",
                    format!("{code} is already applied."),
                    path,
                ));
            }
            continue;
        }
        seen.push(normalized.clone());
        let Some(rule) = input
            .rules
            .discounts
            .iter()
            .find(|rule| rule.code.as_deref().map(str::to_uppercase) == Some(normalized.clone()))
        else {
            messages.push(Message::warning(
                "discount_code_invalid",
                format!("{code} is not a valid discount code."),
                path,
            ));
            continue;
        };
        if rule.expires_at.is_some_and(|expires| input.now >= expires) {
            messages.push(Message::warning("discount_code_expired", format!("{code} has expired."), path));
            continue;
        }
        if let Some(limit) = rule.usage_limit
            && input.discount_uses.get(&normalized).copied().unwrap_or(0) >= limit
        {
            messages.push(Message::warning(
                "discount_code_invalid",
                format!("{code} has reached its usage limit."),
                path,
            ));
            continue;
        }
        if let Some(min) = rule.min_subtotal
            && subtotal < min
        {
            messages.push(Message::warning(
                "discount_code_minimum_not_met",
                format!("{code} needs an item subtotal of at least {min} minor units."),
                path,
            ));
            continue;
        }
        if rule.kind != DiscountKind::FreeShipping && eligible_subtotal(rule) == 0 {
            messages.push(Message::warning(
                "discount_code_user_ineligible",
                format!("{code} does not apply to any item in this order."),
                path,
            ));
            continue;
        }
        let codes_so_far: Vec<&&DiscountRule> = accepted.iter().filter(|accepted| accepted.code.is_some()).collect();
        if !codes_so_far.is_empty() && (!rule.combinable || codes_so_far.iter().any(|other| !other.combinable)) {
            messages.push(Message::warning(
                "discount_code_combination_disallowed",
                format!("{code} cannot be combined with the other codes."),
                path,
            ));
            continue;
        }
        accepted.push(rule);
    }
    accepted
}

pub(super) fn rule_applies_to(rule: &DiscountRule, input: &PricingInput<'_>, line_index: usize) -> bool {
    let Some(line) = input.session.lines.get(line_index) else { return false };
    let Some(item) = input.items.get(&line.item_id) else { return false };
    let product_ok = rule.product_ids.is_empty() || rule.product_ids.contains(&item.product_id);
    let category_ok = rule.categories.is_empty()
        || rule
            .categories
            .iter()
            .any(|wanted| item.categories.iter().any(|category| crate::catalog::category_matches(category, wanted)));
    product_ok && category_ok
}

/// Splits `amount` over `weights` proportionally (largest remainder), never exceeding a weight.
pub(super) fn allocate(amount: i64, weights: &[i64]) -> Vec<i64> {
    let total: i64 = weights.iter().sum();
    if total <= 0 || amount <= 0 {
        return vec![0; weights.len()];
    }
    let amount = amount.min(total);
    let mut shares: Vec<i64> =
        weights.iter().map(|weight| (i128::from(amount) * i128::from(*weight) / i128::from(total)) as i64).collect();
    let mut remainder = amount - shares.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|index| {
        let exact = i128::from(amount) * i128::from(weights[*index]) % i128::from(total);
        (std::cmp::Reverse(exact), *index)
    });
    for index in order {
        if remainder == 0 {
            break;
        }
        if shares[index] < weights[index] {
            shares[index] += 1;
            remainder -= 1;
        }
    }
    shares
}

/// The submitted codes `messages` reject (upper-cased, in order): the discount warnings at
/// `$.discounts.codes[i]` but "already applied".
pub fn rejected_codes(session: &Session, messages: &[Message]) -> Vec<String> {
    let mut codes: Vec<String> = messages
        .iter()
        .filter(|message| message.code.starts_with("discount_code_") && message.code != "discount_code_already_applied")
        .filter_map(|message| {
            message.path.as_deref()?.strip_prefix("$.discounts.codes[")?.strip_suffix(']')?.parse().ok()
        })
        .filter_map(|index: usize| session.discount_codes.get(index))
        .map(|code| code.trim().to_uppercase())
        .collect();
    codes.dedup();
    codes
}

/// An error when a code rejected now applied at the price the platform last saw (its last
/// write's answer did not reject it): the checkout is `incomplete` until the codes are sent
/// again, so nobody completes at a price the platform was not shown.
pub(super) fn lapsed(session: &Session, messages: &[Message]) -> Option<Message> {
    let seen = session.rejections_seen.as_ref()?;
    let lapsed: Vec<String> =
        rejected_codes(session, messages).into_iter().filter(|code| !seen.contains(code)).collect();
    (!lapsed.is_empty()).then(|| {
        Message::error(
            "discount_code_rejected",
            Severity::Recoverable,
            format!(
                "{} applied when this checkout was last updated and no longer does (see the warnings); update the \
                 checkout's discount codes to accept the new price, then complete.",
                lapsed.join(", ")
            ),
            Some("$.discounts.codes".into()),
        )
    })
}
