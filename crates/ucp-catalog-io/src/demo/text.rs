//! The words of a product: its title, description and tags, and the slug of its handle.

use std::fmt::Write as _;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::numbers::{chance, maybe, pick};
use super::vocab::{Axis, Brand, Department, FICTION_FIRST, FICTION_SECOND, Kind, TitleStyle};

/// Words kept capitalized when a material is written in lower case inside a sentence.
const PROPER_WORDS: [&str; 4] = ["Egyptian", "German", "Japanese", "Damascus"];

/// The words a title was built from; descriptions and tags reuse them.
#[derive(Debug, Default)]
pub(super) struct Words {
    pub(super) audience: Option<&'static str>,
    pub(super) adjective: Option<&'static str>,
    pub(super) material: Option<&'static str>,
}

/// Builds a title in the kind's style and returns the words it used.
pub(super) fn title(rng: &mut ChaCha8Rng, kind: &Kind, brand: &Brand) -> (String, Words) {
    let mut title = String::with_capacity(64);
    let mut words = Words::default();
    match kind.title {
        TitleStyle::Branded => {
            words.audience = maybe(rng, kind.audiences, 80);
            words.adjective = maybe(rng, kind.adjectives, 55);
            words.material = maybe(rng, kind.materials, 65);
            let style = maybe(rng, kind.styles, 50);
            title.push_str(brand.name);
            for word in [words.audience, words.adjective, words.material, style].into_iter().flatten() {
                title.push(' ');
                title.push_str(word);
            }
            title.push(' ');
            title.push_str(kind.noun);
        }
        TitleStyle::Guide => {
            let _ = write!(title, "{} {} {}", pick(rng, kind.adjectives), pick(rng, kind.styles), kind.noun);
        }
        TitleStyle::Fiction => {
            let genre = pick(rng, kind.styles);
            let _ = write!(
                title,
                "The {} {}: {} {genre} {}",
                pick(rng, FICTION_FIRST),
                pick(rng, FICTION_SECOND),
                article(genre),
                kind.noun
            );
        }
    }
    (title, words)
}

/// Two to four sentences: what it is and is for, one or two features, then where it comes in
/// (or a care, warranty or shipping note).
pub(super) fn describe(
    rng: &mut ChaCha8Rng,
    department: &Department,
    kind: &Kind,
    brand: &Brand,
    title: &str,
    words: &Words,
    selection: &[Vec<usize>],
) -> String {
    let mut text = String::with_capacity(384);
    let verb = pick(rng, department.verbs);
    let purpose = pick(rng, kind.uses);
    let be = if is_plural(kind.noun) { "are" } else { "is" };
    match (kind.title, words.material) {
        (TitleStyle::Branded, Some(material)) => {
            let made = pick(rng, department.made);
            let _ = write!(text, "{made} {}, the {title} {be} {verb} {purpose}.", lower_words(material));
        }
        (TitleStyle::Branded, None) => {
            let _ = write!(text, "The {title} {be} {verb} {purpose}.");
        }
        (TitleStyle::Guide | TitleStyle::Fiction, _) => {
            let _ = write!(text, "{title}, published by {}, is {verb} {purpose}.", brand.name);
        }
    }
    let first = rng.random_range(0..kind.features.len());
    text.push(' ');
    text.push_str(kind.features[first]);
    if kind.features.len() > 1 && chance(rng, 40) {
        let second = (first + rng.random_range(1..kind.features.len())) % kind.features.len();
        text.push(' ');
        text.push_str(kind.features[second]);
    }
    if chance(rng, 85) {
        text.push(' ');
        if !selection.is_empty() && chance(rng, 80) {
            push_availability(&mut text, kind.axes, selection);
        } else {
            text.push_str(pick(rng, department.closers));
        }
    }
    text
}

/// "Available in Blue, Black and Navy, sizes S to XL."
fn push_availability(text: &mut String, axes: &[&Axis], selection: &[Vec<usize>]) {
    text.push_str("Available in ");
    for (position, (axis, values)) in axes.iter().zip(selection).enumerate() {
        if position > 0 {
            text.push_str(", ");
        }
        if axis.name.ends_with("Size") && !axis.values[values[0]].starts_with("Size") {
            text.push_str(&axis.name.to_lowercase());
            text.push_str(if values.len() > 1 { "s " } else { " " });
        }
        if axis.ordered && values.len() > 2 {
            let _ = write!(text, "{} to {}", axis.values[values[0]], axis.values[values[values.len() - 1]]);
        } else {
            push_list(text, values.iter().map(|&value| axis.values[value]));
        }
        if matches!(axis.name, "Storage" | "Capacity" | "Length" | "Blade Length" | "Thickness" | "Resistance") {
            text.push(' ');
            text.push_str(&axis.name.to_lowercase());
        }
    }
    text.push('.');
}

/// "A", "A and B", "A, B and C".
pub(super) fn push_list<'a>(text: &mut String, items: impl ExactSizeIterator<Item = &'a str>) {
    let count = items.len();
    for (position, item) in items.enumerate() {
        if position > 0 {
            text.push_str(if position + 1 == count { " and " } else { ", " });
        }
        text.push_str(item);
    }
}

/// Three to six single lower-case words: department, kind, then material, audience and
/// adjective when the title has them.
pub(super) fn tags(department: &Department, kind: &Kind, words: &Words) -> Vec<String> {
    let mut tags: Vec<String> = Vec::with_capacity(6);
    let audience = words.audience.map(|audience| match audience {
        "Men's" => "men",
        "Women's" => "women",
        "Kids'" => "kids",
        _ => "unisex",
    });
    let material = words.material.and_then(|material| material.rsplit(' ').next());
    let adjective = words.adjective.filter(|adjective| !adjective.contains(' '));
    let candidates =
        [department.tag].into_iter().chain(kind.tags.iter().copied()).chain(material).chain(audience).chain(adjective);
    for candidate in candidates {
        let tag = candidate.to_ascii_lowercase();
        if tags.len() < 6 && !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

/// "nordhaven-merino-wool-crew-sweater": lower-case ASCII letters and digits, with every other
/// run of characters (apostrophes and dots aside, which vanish) turned into one hyphen.
pub(super) fn slug(title: &str) -> String {
    let mut slug = String::with_capacity(title.len());
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !matches!(c, '\'' | '.') && !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    slug
}

/// "merino wool" from "Merino Wool"; proper adjectives and acronyms keep their case.
pub(super) fn lower_words(text: &str) -> String {
    let mut lower = String::with_capacity(text.len());
    for (position, word) in text.split(' ').enumerate() {
        if position > 0 {
            lower.push(' ');
        }
        let acronym = word.len() > 1 && word.bytes().all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit());
        if acronym || PROPER_WORDS.contains(&word) {
            lower.push_str(word);
        } else {
            lower.push_str(&word.to_lowercase());
        }
    }
    lower
}

/// Whether a title-case noun phrase is plural: "Running Shoes" but not "Dress".
pub(super) fn is_plural(noun: &str) -> bool {
    noun.ends_with('s') && !noun.ends_with("ss")
}

pub(super) fn article(word: &str) -> &'static str {
    if word.starts_with(['A', 'E', 'I', 'O', 'U']) { "An" } else { "A" }
}
