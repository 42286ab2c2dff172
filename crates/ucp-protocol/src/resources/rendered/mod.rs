//! Catalog answers written from each served product's rendering.
//!
//! A served product ([`Served`]) is rendered once, by serde_json, into pieces: the fields
//! before its variants, each variant, and the fields after them. Every answer that shows the
//! product splices those pieces (whichever variants it shows, in its order, a lookup's
//! `inputs` appended to each) instead of serializing the document again, so a hot search,
//! lookup or get_product copies bytes. The rendering lives in the served product's slot, so
//! it goes when the product leaves the store's read cache (a stock change, an import).
//!
//! What these writers produce is byte for byte what serde_json writes for the same bodies
//! (the tests compare the two): a product the answer changed (another currency) is
//! serialized as before, and so is any product whose pieces could not be found.

use std::sync::OnceLock;

use ucp_domain::catalog::{Product, ProductJson, ProductOption, Served, Shown};

use super::sink::{Sink, literal};
use super::split::{Cuts, split};
use super::stored;

/// Between the members before the variants and the first variant, and its escape.
const VARIANTS_KEY: (&[u8], &[u8]) = literal!(b",\"variants\":[");

/// A served product's JSON in pieces. Its whole JSON is `before`, then (when it shows any
/// variant) `,"variants":[`, the variants joined by commas and `]`, then `after`.
struct Pieces {
    /// From the opening brace up to the variants, without the comma before them.
    before: Box<[u8]>,
    variants: Box<[Box<[u8]>]>,
    /// The members after the variants, each with its leading comma, and the closing brace.
    after: Box<[u8]>,
}

/// A served product's JSON in pieces, wherever they are kept: in its rendering, or in the JSON
/// the store made for it.
#[derive(Clone, Copy)]
enum Source<'a> {
    Pieces(&'a Pieces),
    Stored(&'a ProductJson),
}

impl<'a> Source<'a> {
    fn before(self) -> &'a [u8] {
        match self {
            Source::Pieces(pieces) => &pieces.before,
            Source::Stored(json) => &json.bytes[..json.before],
        }
    }

    fn variant(self, index: usize) -> &'a [u8] {
        match self {
            Source::Pieces(pieces) => &pieces.variants[index],
            Source::Stored(json) => &json.bytes[json.variants[index].clone()],
        }
    }

    fn count(self) -> usize {
        match self {
            Source::Pieces(pieces) => pieces.variants.len(),
            Source::Stored(json) => json.variants.len(),
        }
    }

    fn after(self) -> &'a [u8] {
        match self {
            Source::Pieces(pieces) => &pieces.after,
            Source::Stored(json) => &json.bytes[json.after..],
        }
    }

    /// The escapes of the pieces every answer that shows the product writes; each variant's
    /// is made when an answer first shows that variant.
    fn escaped(self) -> Escaped {
        Escaped {
            before: escape(self.before()),
            variants: (0..self.count()).map(|_| OnceLock::new()).collect(),
            after: escape(self.after()),
        }
    }
}

/// The escape of one piece.
fn escape(piece: &[u8]) -> Box<[u8]> {
    crate::escape::escaped(piece).into_boxed_slice()
}

/// The escapes of a rendering's pieces, for the MCP mirror. A variant's is made on first use: a
/// lookup shows one variant of a product, so escaping them all made a cold lookup escape about
/// half as many bytes again as it sends (BENCHMARKS.md, "Each variant escaped when shown").
struct Escaped {
    before: Box<[u8]>,
    variants: Box<[OnceLock<Box<[u8]>>]>,
    after: Box<[u8]>,
}

impl Escaped {
    /// The pieces escaped as they were written ([`split`]): all of them, at once.
    fn written(pieces: Pieces) -> Escaped {
        Escaped {
            before: pieces.before,
            variants: pieces.variants.into_iter().map(OnceLock::from).collect(),
            after: pieces.after,
        }
    }

    /// The escape of variant `index` of `source`, made on first use.
    fn variant(&self, source: Source<'_>, index: usize) -> &[u8] {
        self.variants[index].get_or_init(|| escape(source.variant(index)))
    }
}

impl Pieces {
    /// The pieces of JSON (or of its escape) at its cuts.
    fn cut(cuts: &Cuts) -> Pieces {
        let bytes = &cuts.bytes;
        Pieces {
            before: bytes[..cuts.before].into(),
            variants: cuts.variants.iter().map(|range| bytes[range.clone()].into()).collect(),
            after: bytes[cuts.after..].into(),
        }
    }
}

/// A served product's rendering: its JSON in pieces (serialized, or made from what the store
/// kept of it), and their escapes, made on the first mirrored answer that shows it.
pub(crate) struct Rendered {
    json: Json,
    escaped: OnceLock<Escaped>,
}

enum Json {
    Pieces(Pieces),
    Stored(ProductJson),
}

impl Rendered {
    /// The pieces, or `None` when the product's JSON does not split as expected (then it is
    /// serialized every time, as it always was). With `mirror`, their escapes too.
    ///
    /// The product is serialized once ([`split`]), noting where each variant starts and ends
    /// as it is written (and writing the escape alongside), and the pieces are cut from that.
    fn of(product: &Product, mirror: bool) -> Option<Rendered> {
        if product.variants.is_empty() {
            let full = serde_json::to_vec(product).ok()?;
            let (close, before) = full.split_last()?;
            let rendered = (*close == b'}').then(|| Rendered::new(before.into(), Box::new([]), Box::new([b'}'])))?;
            if mirror {
                let _ = rendered.escaped.set(rendered.source().escaped());
            }
            return Some(rendered);
        }
        let split = split(product, mirror)?;
        let json = &split.json.bytes;
        // Every piece is a run of whole UTF-8 characters: the cuts are at ASCII punctuation
        // serde_json wrote.
        if split.json.variants.len() != product.variants.len()
            || !matches!(json.get(split.json.after), Some(b',' | b'}'))
        {
            return None;
        }
        let rendered = Rendered { json: Json::Pieces(Pieces::cut(&split.json)), escaped: OnceLock::new() };
        if let Some(escaped) = &split.escaped {
            let _ = rendered.escaped.set(Escaped::written(Pieces::cut(escaped)));
        }
        Some(rendered)
    }

    fn new(before: Box<[u8]>, variants: Box<[Box<[u8]>]>, after: Box<[u8]>) -> Rendered {
        Rendered { json: Json::Pieces(Pieces { before, variants, after }), escaped: OnceLock::new() }
    }

    /// The rendering of a served product from what the store kept of it: its stored JSON with
    /// this read's availability spliced in, not serialized ([`stored::served_json`]). `None`
    /// when the store kept nothing, or nothing that fits.
    fn stored(served: &Served) -> Option<Rendered> {
        let kept = served.kept()?;
        let json = stored::served_json(&kept.doc, &kept.cuts, &kept.variants)?;
        Some(Rendered { json: Json::Stored(json), escaped: OnceLock::new() })
    }

    /// The rendering of a view of another served product (get_product's default view), cut
    /// from that product's rendering rather than serialized: its members before the variants
    /// with the view's `options` in place of the product's (the one member a view changes),
    /// the pieces of the variants it shows, and the members after them. `None` when the view
    /// is of no product, the product has neither a rendering nor stored JSON (the view is then
    /// smaller to serialize than the product), or a piece cannot be found. (Stored JSON whose
    /// cuts turn out not to fit has the product serialized after all, once, and the view cut
    /// from that.)
    fn view(served: &Served) -> Option<Rendered> {
        let of = served.viewed()?;
        if !of.is_rendered_cheaply() {
            return None;
        }
        let source = rendered(&of, false)?.source();
        // A view made from the product's outline names the variants it shows.
        if let Some(parts) = served.parts() {
            return Rendered::cut(source, &parts.options, parts.variants.iter().map(|&index| Some(index)));
        }
        // The product's variant ids as read, so a product kept as stored is not parsed for them;
        // the view's product read as it is, since its rendering is what then serves it.
        let facts = of.facts();
        served.with_product(|view| {
            let indices = (view.variants.iter()).map(|variant| facts.iter().position(|fact| fact.id == variant.id));
            Rendered::cut(source, &view.options, indices)
        })
    }

    /// A view's rendering cut from its product's `source`: the members before the variants
    /// with `options` in place of the product's, the variants at `indices`, and the members
    /// after.
    fn cut(
        source: Source<'_>,
        options: &[ProductOption],
        indices: impl Iterator<Item = Option<usize>>,
    ) -> Option<Rendered> {
        let mut before = source.before().to_vec();
        if !options.is_empty() {
            // The product's options, replaced by the view's.
            before.truncate(stored::options_value_at(&before)?);
            serde_json::to_writer(&mut before, options).ok()?;
        }
        let variants = indices
            .map(|index| index.filter(|&index| index < source.count()).map(|index| Box::from(source.variant(index))))
            .collect::<Option<Box<[Box<[u8]>]>>>()?;
        Some(Rendered::new(before.into(), variants, source.after().into()))
    }

    fn source(&self) -> Source<'_> {
        match &self.json {
            Json::Pieces(pieces) => Source::Pieces(pieces),
            Json::Stored(json) => Source::Stored(json),
        }
    }

    /// The escaped pieces, when `sink` mirrors.
    fn escaped_for(&self, sink: &Sink) -> Option<&Escaped> {
        sink.mirrored().then(|| self.escaped.get_or_init(|| self.source().escaped()))
    }
}

/// The served product's rendering, made on first use: from what the store kept of it when it
/// kept something that fits, cut from the rendering of the product it is a view of, or
/// serialized.
fn rendered(served: &Served, mirror: bool) -> Option<&Rendered> {
    served
        .rendering(|served| {
            Rendered::stored(served)
                .or_else(|| Rendered::view(served))
                .or_else(|| Rendered::of(served.product(), mirror))
        })?
        .as_ref()
}

/// Indices of the variants a shown product shows: `picked`, or all `count` of them.
fn shown_indices(picked: Option<&[usize]>, count: usize) -> impl Iterator<Item = usize> + '_ {
    let all = picked.is_none().then_some(0..count);
    all.into_iter().flatten().chain(picked.unwrap_or_default().iter().copied().filter(move |index| *index < count))
}

/// Appends a shown product's JSON.
pub(crate) fn write_product(sink: &mut Sink, shown: &Shown) -> serde_json::Result<()> {
    if let Shown::Served { served, variants } = shown
        && let Some(rendered) = rendered(served, sink.mirrored())
    {
        let (pieces, escaped) = (rendered.source(), rendered.escaped_for(sink));
        sink.piece(pieces.before(), escaped.map(|escaped| &escaped.before[..]));
        let mut any = false;
        for index in shown_indices(variants.as_deref(), pieces.count()) {
            if any {
                sink.piece(b",", Some(b","));
            } else {
                sink.literal(VARIANTS_KEY);
            }
            sink.piece(pieces.variant(index), escaped.map(|escaped| escaped.variant(pieces, index)));
            any = true;
        }
        if any {
            sink.piece(b"]", Some(b"]"));
        }
        sink.piece(pieces.after(), escaped.map(|escaped| &escaped.after[..]));
        return Ok(());
    }
    sink.serialize(shown)
}

/// Appends a lookup product's JSON: the product's own members, then `variants`, each variant
/// with `tail` (its `inputs` member) written before its closing brace. `false` when the
/// product has no rendering (the caller serializes it).
pub(crate) fn write_lookup_product(
    sink: &mut Sink,
    shown: &Shown,
    mut tail: impl FnMut(usize, &mut Sink) -> serde_json::Result<()>,
) -> serde_json::Result<bool> {
    let Shown::Served { served, variants } = shown else { return Ok(false) };
    let Some(rendered) = rendered(served, sink.mirrored()) else { return Ok(false) };
    let (pieces, escaped) = (rendered.source(), rendered.escaped_for(sink));
    // Every piece but `before` ends with a closing brace, unescaped in either form.
    let open = |piece: &[u8]| piece.len() - 1;
    sink.piece(pieces.before(), escaped.map(|escaped| &escaped.before[..]));
    let after = pieces.after();
    sink.piece(&after[..open(after)], escaped.map(|escaped| &escaped.after[..open(&escaped.after)]));
    sink.literal(VARIANTS_KEY);
    for (position, index) in shown_indices(variants.as_deref(), pieces.count()).enumerate() {
        if position > 0 {
            sink.piece(b",", Some(b","));
        }
        let variant = pieces.variant(index);
        let escaped_variant = escaped.map(|escaped| escaped.variant(pieces, index));
        sink.piece(&variant[..open(variant)], escaped_variant.map(|escaped| &escaped[..open(escaped)]));
        tail(position, sink)?;
        sink.piece(b"}", Some(b"}"));
    }
    sink.piece(b"]}", Some(b"]}"));
    Ok(true)
}

#[cfg(test)]
mod tests;
