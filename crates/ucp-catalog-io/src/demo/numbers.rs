//! Numbers and codes: option-value draws, prices, stock, barcodes, SKU segments, and the
//! small random-draw helpers the rest of the generator shares.

use rand::Rng;
use rand::seq::index;
use rand_chacha::ChaCha8Rng;

use super::vocab::Axis;

/// How a product's prices end: .99, .95 or .00.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    NinetyNine,
    NinetyFive,
    Zero,
}

/// Picks the value indexes each axis offers, aiming for `wanted` combinations: at most four
/// values on any axis but the last, a contiguous run on ordered axes, a random palette on
/// the others.
pub(super) fn choose_values(rng: &mut ChaCha8Rng, axes: &[&Axis], wanted: usize) -> Vec<Vec<usize>> {
    let mut remaining = wanted;
    let mut selection: Vec<Vec<usize>> = axes
        .iter()
        .enumerate()
        .map(|(position, axis)| {
            let length = axis.values.len();
            let count = if position + 1 == axes.len() {
                remaining.min(length)
            } else {
                rng.random_range(1..=remaining.min(length).min(4))
            };
            remaining = remaining.div_ceil(count);
            if axis.ordered {
                let start = rng.random_range(0..=length - count);
                (start..start + count).collect()
            } else {
                index::sample(rng, length, count).into_vec()
            }
        })
        .collect();
    trim_unused(&mut selection, wanted);
    selection
}

/// Drops the values no variant reaches once the grid is cut to `wanted` combinations (the
/// last axis changes fastest), so descriptions never offer what the variants lack.
fn trim_unused(selection: &mut [Vec<usize>], wanted: usize) {
    let combinations = selection.iter().map(Vec::len).product::<usize>().min(wanted);
    let mut used: Vec<Vec<bool>> = selection.iter().map(|values| vec![false; values.len()]).collect();
    for position in 0..combinations {
        let mut rest = position;
        for (slot, values) in selection.iter().enumerate().rev() {
            used[slot][rest % values.len()] = true;
            rest /= values.len();
        }
    }
    for (values, used) in selection.iter_mut().zip(used) {
        let mut flags = used.into_iter();
        values.retain(|_| flags.next().unwrap_or(false));
    }
}

/// Rounds to a price a shop would charge: whole units (fives from 50, tens from 200), then
/// the product's ending.
pub(super) fn round_price(minor: i64, ending: Ending) -> i64 {
    let units = (minor + 50) / 100;
    let step = match units {
        200.. => 10,
        50.. => 5,
        _ => 1,
    };
    let units = ((units + step / 2) / step * step).max(1);
    match ending {
        Ending::NinetyNine => units * 100 - 1,
        Ending::NinetyFive => units * 100 - 5,
        Ending::Zero => units * 100,
    }
}

/// Units on hand: mostly a few dozen, sometimes up to 250.
pub(super) fn quantity(rng: &mut ChaCha8Rng) -> i64 {
    match rng.random_range(0..100) {
        0..=49 => rng.random_range(1..=40),
        50..=84 => rng.random_range(41..=120),
        _ => rng.random_range(121..=250),
    }
}

/// A GTIN-13 (or ISBN-13 when `prefix` is 978): the prefix, the product number's last seven
/// digits, the two-digit variant number and the check digit.
pub(super) fn gtin13(prefix: u64, number: u64, variant: u64) -> String {
    let body = prefix * 1_000_000_000 + number % 10_000_000 * 100 + variant % 100;
    let mut code = format!("{body:012}");
    let sum: u32 = code
        .bytes()
        .enumerate()
        .map(|(position, digit)| u32::from(digit - b'0') * if position % 2 == 0 { 1 } else { 3 })
        .sum();
    code.push(char::from(b'0' + ((10 - sum % 10) % 10) as u8));
    code
}

/// The SKU segment of an option value: "BLU" for Blue, "HGR" for Heather Gray, "M" for M,
/// "65" for 6.5, "128G" for 128 GB, "14K" for 14K Gold.
pub(super) fn push_code(sku: &mut String, label: &str) {
    if label.starts_with(|first: char| first.is_ascii_digit()) {
        let number_end = label.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(label.len());
        sku.extend(label[..number_end].chars().filter(char::is_ascii_digit));
        if let Some(unit) = label[number_end..].chars().find(char::is_ascii_alphanumeric) {
            sku.push(unit.to_ascii_uppercase());
        }
        return;
    }
    let mut words = label.split([' ', '-']).filter(|word| !word.is_empty());
    let first = words.next().unwrap_or_default();
    let letters = |word: &str, count: usize| {
        word.chars().filter(char::is_ascii_alphanumeric).take(count).map(|c| c.to_ascii_uppercase()).collect::<String>()
    };
    match words.next_back() {
        Some(last) => {
            sku.push_str(&letters(first, 1));
            sku.push_str(&letters(last, 2));
        }
        None => sku.push_str(&letters(first, 3)),
    }
}

pub(super) fn chance(rng: &mut ChaCha8Rng, percent: u32) -> bool {
    rng.random_range(0..100) < percent
}

pub(super) fn pick(rng: &mut ChaCha8Rng, words: &[&'static str]) -> &'static str {
    if words.is_empty() {
        return "";
    }
    words[rng.random_range(0..words.len())]
}

/// One of `words`, `percent` of the time when there are any.
pub(super) fn maybe(rng: &mut ChaCha8Rng, words: &[&'static str], percent: u32) -> Option<&'static str> {
    if words.is_empty() || !chance(rng, percent) {
        return None;
    }
    Some(pick(rng, words))
}

/// An index into `weights`, each drawn in proportion to its weight.
pub(super) fn weighted(rng: &mut ChaCha8Rng, weights: &[u32]) -> usize {
    let mut roll = rng.random_range(0..weights.iter().sum::<u32>());
    for (index, &weight) in weights.iter().enumerate() {
        if roll < weight {
            return index;
        }
        roll -= weight;
    }
    weights.len() - 1
}
