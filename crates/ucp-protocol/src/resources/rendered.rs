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

use serde::Serialize;
use ucp_domain::catalog::{Product, ProductJson, Served, Shown};

use super::split::{Cuts, split};
use super::{Message, stored};
use crate::escape::escape_into;

/// Between the members before the variants and the first variant.
const VARIANTS_KEY: &[u8] = b",\"variants\":[";
/// A product's `options` member, up to its array.
const OPTIONS_KEY: &[u8] = b",\"options\":[";
/// [`VARIANTS_KEY`] inside a JSON string.
const VARIANTS_KEY_ESCAPED: &[u8] = b",\\\"variants\\\":[";

/// Where a catalog body is written: its JSON, and (when the transport mirrors the body as
/// text, as MCP's `content[0].text` does) the same JSON escaped as the inside of a JSON string,
/// written alongside from escaped pieces rather than escaped again at the end.
pub struct Sink {
    json: Vec<u8>,
    escaped: Option<Vec<u8>>,
}

impl Sink {
    /// A sink sized for about `capacity` bytes of JSON; `mirror` also writes the escape.
    pub fn new(capacity: usize, mirror: bool) -> Sink {
        let escaped = mirror.then(|| Vec::with_capacity(capacity + capacity / 4));
        Sink { json: Vec::with_capacity(capacity), escaped }
    }

    /// The JSON, and its escape when mirrored.
    pub fn into_parts(self) -> (Vec<u8>, Option<Vec<u8>>) {
        (self.json, self.escaped)
    }

    fn mirrored(&self) -> bool {
        self.escaped.is_some()
    }

    /// Appends JSON text that has no rendering of its own (punctuation, the envelope).
    pub(crate) fn text(&mut self, json: &[u8]) {
        self.json.extend_from_slice(json);
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, json);
        }
    }

    /// Appends a piece and, when mirrored, its escape.
    fn piece(&mut self, json: &[u8], escaped: Option<&[u8]>) {
        self.json.extend_from_slice(json);
        if let (Some(out), Some(escaped)) = (&mut self.escaped, escaped) {
            out.extend_from_slice(escaped);
        }
    }

    /// Appends `value` as serde_json writes it.
    pub(crate) fn serialize(&mut self, value: &impl Serialize) -> serde_json::Result<()> {
        let start = self.json.len();
        serde_json::to_writer(&mut self.json, value)?;
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, &self.json[start..]);
        }
        Ok(())
    }

    /// Appends `,"name":` and `value`.
    pub(crate) fn member(&mut self, name: &str, value: &impl Serialize) -> serde_json::Result<()> {
        self.text(b",");
        self.serialize(&name)?;
        self.text(b":");
        self.serialize(value)
    }

    /// Appends `{"ucp":` and the envelope: how every catalog body begins.
    pub(crate) fn open_body(&mut self, ucp: &impl Serialize) -> serde_json::Result<()> {
        self.text(b"{\"ucp\":");
        self.serialize(ucp)
    }

    /// Appends `,"products":[`, each item as `write` writes it, joined by commas, and `]`.
    pub(crate) fn products<T>(
        &mut self,
        items: &[T],
        mut write: impl FnMut(&mut Sink, &T) -> serde_json::Result<()>,
    ) -> serde_json::Result<()> {
        self.text(b",\"products\":[");
        for (position, item) in items.iter().enumerate() {
            if position > 0 {
                self.text(b",");
            }
            write(self, item)?;
        }
        self.text(b"]");
        Ok(())
    }

    /// Appends the body's `messages` (when it has any) and its closing brace: how every catalog
    /// body ends.
    pub(crate) fn close_body(&mut self, messages: &[Message]) -> serde_json::Result<()> {
        if !messages.is_empty() {
            self.member("messages", &messages)?;
        }
        self.text(b"}");
        Ok(())
    }

    /// Takes back the last byte written (a closing brace), so members can follow it.
    pub(crate) fn reopen(&mut self) {
        if self.json.last() == Some(&b'}') {
            self.json.pop();
            if let Some(escaped) = &mut self.escaped {
                escaped.pop();
            }
        }
    }
}

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

    /// The escapes of the pieces.
    fn escaped(self) -> Pieces {
        let escape = |piece: &[u8]| {
            let mut out = Vec::with_capacity(piece.len() + piece.len() / 4);
            escape_into(&mut out, piece);
            out.into_boxed_slice()
        };
        Pieces {
            before: escape(self.before()),
            variants: (0..self.count()).map(|index| escape(self.variant(index))).collect(),
            after: escape(self.after()),
        }
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
    escaped: OnceLock<Pieces>,
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
            let _ = rendered.escaped.set(Pieces::cut(escaped));
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
        let kept = served.take_stored()?;
        let json = stored::served_json(kept.doc, &kept.cuts, served.product())?;
        Some(Rendered { json: Json::Stored(json), escaped: OnceLock::new() })
    }

    /// The rendering of a view of another served product (get_product's default view), cut
    /// from that product's rendering rather than serialized: its members before the variants
    /// with the view's `options` in place of the product's (the one member a view changes),
    /// the pieces of the variants it shows, and the members after them. `None` when the view
    /// is of no product, the product's rendering would have to be serialized (the view's is
    /// then smaller to serialize), or a piece cannot be found.
    fn view(served: &Served) -> Option<Rendered> {
        let of = served.viewed()?;
        if !of.is_rendered_cheaply() {
            return None;
        }
        let source = rendered(&of, false)?.source();
        let (view, product) = (served.product(), of.product());
        let mut before = source.before().to_vec();
        if !view.options.is_empty() {
            // The last member before the variants, and the only `"options"` key at that level
            // or below it (none of the members before the variants holds one); a key's quotes
            // are never escaped, a string's always are, so no string can look like it.
            let at = memchr::memmem::rfind(&before, OPTIONS_KEY)?;
            before.truncate(at + OPTIONS_KEY.len() - 1);
            serde_json::to_writer(&mut before, &view.options).ok()?;
        }
        let variants = (view.variants.iter())
            .map(|variant| {
                let index = product.variants.iter().position(|shown| shown.id == variant.id)?;
                Some(Box::from(source.variant(index)))
            })
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
    fn escaped_for(&self, sink: &Sink) -> Option<&Pieces> {
        sink.mirrored().then(|| self.escaped.get_or_init(|| self.source().escaped()))
    }
}

/// The served product's rendering, made on first use: from what the store kept of it when it
/// kept something that fits, cut from the rendering of the product it is a view of, or
/// serialized.
fn rendered(served: &Served, mirror: bool) -> Option<&Rendered> {
    served
        .rendering(|product| {
            Rendered::stored(served).or_else(|| Rendered::view(served)).or_else(|| Rendered::of(product, mirror))
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
                sink.piece(VARIANTS_KEY, Some(VARIANTS_KEY_ESCAPED));
            }
            sink.piece(pieces.variant(index), escaped.map(|escaped| &escaped.variants[index][..]));
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
    sink.piece(VARIANTS_KEY, Some(VARIANTS_KEY_ESCAPED));
    for (position, index) in shown_indices(variants.as_deref(), pieces.count()).enumerate() {
        if position > 0 {
            sink.piece(b",", Some(b","));
        }
        let variant = pieces.variant(index);
        sink.piece(
            &variant[..open(variant)],
            escaped.map(|escaped| &escaped.variants[index][..open(&escaped.variants[index])]),
        );
        tail(position, sink)?;
        sink.piece(b"}", Some(b"}"));
    }
    sink.piece(b"]}", Some(b"]}"));
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use ucp_domain::catalog::{
        DetailRequest, LookupMatch, Product, SelectedOption, Served, Shown, StoredDocument, detail,
    };
    use ucp_domain::checkout::Message;
    use ucp_domain::commerce::{LookupResults, ProductView, SearchResults};
    use ucp_domain::store::MatchKind;

    use super::{Json, Rendered, Sink, Source};
    use crate::resources::{LookupBody, ProductBody, SearchBody};

    fn variant(product: &str, index: usize) -> serde_json::Value {
        json!({
            "id": format!("{product}-{index}"),
            "sku": format!("SKU \"{index}\" \\ é"),
            "title": format!("Variant {index} \u{1F600}\n"),
            "description": {"plain": "line\tone"},
            "price": {"amount": 1000 + index as i64, "currency": "USD"},
            "availability": {"available": index.is_multiple_of(2)},
            "options": [{"name": "Size", "label": format!("S{index}")}],
            "metadata": {"variants": [], "note": ",\"variants\":["},
            "inventory_quantity": 3,
        })
    }

    /// A product with members after its variants (rating, tags, metadata), one of them holding
    /// what the variants' key looks like; or one with nothing after them.
    fn product(id: &str, variants: usize, members_after: bool) -> Product {
        let mut product = json!({
            "id": id,
            "title": "A \"quoted\" title",
            "description": {"plain": "Plain", "html": "<p>x</p>"},
            "price_range": {"min": {"amount": 1000, "currency": "USD"}, "max": {"amount": 1006, "currency": "USD"}},
            "options": [{"name": "Size", "values": [{"label": "S0"}, {"label": "S1", "id": "s1"}]}],
            "variants": (0..variants).map(|index| variant(id, index)).collect::<Vec<_>>(),
        });
        if members_after {
            product["rating"] = json!({"value": 4.25, "scale_max": 5.0, "count": 12});
            product["tags"] = json!(["a", "b"]);
            product["metadata"] = json!({"variants": [{"id": format!("{id}-0")}], "x": ",\"variants\":[]"});
        }
        serde_json::from_value(product).expect("a valid product")
    }

    fn served(product: Product) -> Arc<Served> {
        Arc::new(Served::new(product))
    }

    /// `product` as the store serves it when it kept its rendering: read back from its stored
    /// document with its stock laid over, and the stored JSON with that stock spliced in.
    fn stored(product: Product) -> Arc<Served> {
        let (doc, cuts) = crate::resources::stored::document(&product).unwrap();
        let mut read: Product = serde_json::from_slice(&doc).unwrap();
        for (variant, stock) in read.variants.iter_mut().zip(&product.variants) {
            variant.inventory_quantity = stock.inventory_quantity;
        }
        read.refresh_availability();
        match cuts {
            Some(cuts) => Arc::new(Served::with_stored(read, StoredDocument { doc, cuts: cuts.into() })),
            None => {
                assert!(read.variants.is_empty(), "a product with variants is cut");
                Arc::new(Served::new(read))
            }
        }
    }

    /// Served as rendered on first use, or as the store made its JSON.
    fn serve(product: Product, from_store: bool) -> Arc<Served> {
        if from_store { stored(product) } else { served(product) }
    }

    fn ucp() -> serde_json::Value {
        json!({"version": "2026-04-08", "capabilities": {}})
    }

    /// `write` as a plain body and as a mirrored one: the JSON is what serde_json writes for
    /// `body`, the mirror its escape.
    /// `write` as a plain body and as a mirrored one, the mirrored first when `mirror_first`
    /// (the products are then rendered with their escapes as they are written; otherwise the
    /// escapes are made from the pieces later).
    fn assert_written_as_serialized(body: &impl serde::Serialize, mirror_first: bool, write: impl Fn(&mut Sink)) {
        let serialized = String::from_utf8(serde_json::to_vec(body).unwrap()).unwrap();
        let mut expected_mirror = serde_json::to_string(&serialized).unwrap();
        expected_mirror.pop();
        expected_mirror.remove(0);
        for mirror in if mirror_first { [true, false] } else { [false, true] } {
            // Twice: the first write renders each served product, the second reuses it.
            for _ in 0..2 {
                let mut sink = Sink::new(0, mirror);
                write(&mut sink);
                let (json, escaped) = sink.into_parts();
                assert_eq!(String::from_utf8(json).unwrap(), serialized);
                assert_eq!(
                    escaped.map(|escaped| String::from_utf8(escaped).unwrap()),
                    mirror.then(|| expected_mirror.clone())
                );
            }
        }
    }

    #[test]
    fn products_split_around_their_variants() {
        for (variants, after) in [(7, true), (1, true), (3, false), (0, true), (0, false)] {
            let product = product("p", variants, after);
            let rendered = Rendered::of(&product, false).expect("the product splits");
            // Escaped as it is written, the pieces are what escaping them afterwards gives.
            let mirrored = Rendered::of(&product, true).expect("the product splits");
            let Json::Pieces(pieces) = &rendered.json else { panic!("serialized") };
            let (now, later) = (mirrored.escaped.get().expect("escaped as written"), Source::Pieces(pieces).escaped());
            assert_eq!(now.before, later.before);
            assert_eq!(now.variants, later.variants);
            assert_eq!(now.after, later.after);
            assert!(rendered.escaped.get().is_none(), "escaped only when mirrored");
            assert_eq!(pieces.variants.len(), variants);
            // With no variants the whole head is `before`: nothing goes between it and `after`.
            let only_brace = !after || variants == 0;
            assert_eq!(pieces.after.as_ref() == b"}", only_brace, "{variants} variants, members after: {after}");
        }
    }

    #[test]
    fn a_search_body_is_written_as_serde_serializes_it() {
        for (mirror_first, from_store) in [(false, false), (true, false), (false, true), (true, true)] {
            search_body_is_written_as_serde_serializes_it(mirror_first, from_store);
        }
    }

    fn search_body_is_written_as_serde_serializes_it(mirror_first: bool, from_store: bool) {
        let long = serve(product("long", 7, true), from_store);
        let short = serve(product("short", 3, false), from_store);
        let results = SearchResults {
            products: vec![
                Shown::whole(Arc::clone(&long)),
                Shown::Served { served: Arc::clone(&long), variants: Some(vec![6, 0, 3]) },
                Shown::Served { served: Arc::clone(&short), variants: Some(vec![]) },
                Shown::whole(Arc::clone(&short)),
                Shown::Changed(Box::new(product("changed", 2, true))),
            ],
            has_next_page: true,
            cursor: Some("c\"ursor".to_owned()),
            messages: vec![Message::info("currency_unavailable", "Prices are shown in USD".to_owned(), None)],
        };
        for messages in [true, false] {
            let mut results = results.clone();
            if !messages {
                results.messages.clear();
            }
            let body = SearchBody::new(ucp(), &results);
            assert_written_as_serialized(&body, mirror_first, |sink| body.write_json(sink).unwrap());
        }
    }

    #[test]
    fn a_lookup_body_is_written_as_serde_serializes_it() {
        for (mirror_first, from_store) in [(false, false), (true, false), (false, true), (true, true)] {
            lookup_body_is_written_as_serde_serializes_it(mirror_first, from_store);
        }
    }

    fn lookup_body_is_written_as_serde_serializes_it(mirror_first: bool, from_store: bool) {
        let long = serve(product("long", 7, true), from_store);
        let short = serve(product("short", 3, false), from_store);
        let inputs = |ids: &[&str]| -> Vec<(String, MatchKind)> {
            ids.iter().map(|id| ((*id).to_owned(), MatchKind::Exact)).collect()
        };
        let results = LookupResults {
            products: vec![
                LookupMatch {
                    product: Shown::Served { served: Arc::clone(&long), variants: Some(vec![1, 4]) },
                    inputs: vec![inputs(&["long-1", "SKU \"1\""]), vec![("long".to_owned(), MatchKind::Featured)]],
                },
                LookupMatch {
                    product: Shown::whole(Arc::clone(&short)),
                    inputs: vec![inputs(&["a"]), inputs(&["b"]), inputs(&["c"])],
                },
                LookupMatch {
                    product: Shown::Changed(Box::new(product("changed", 1, true))),
                    inputs: vec![inputs(&["changed-0"])],
                },
            ],
            messages: vec![Message::info("not_found", "nope".to_owned(), None)],
        };
        let body = LookupBody::new(ucp(), &results);
        assert_written_as_serialized(&body, mirror_first, |sink| body.write_json(sink).unwrap());
    }

    #[test]
    fn a_product_body_is_written_as_serde_serializes_it() {
        let selected =
            vec![SelectedOption { name: "Size".to_owned(), label: "S1".to_owned(), id: Some("s1".to_owned()) }];
        for (index, (shown, selected, messages)) in [
            (Shown::whole(served(product("p", 4, true))), Some(selected.clone()), vec![]),
            (Shown::whole(served(product("q", 2, false))), None, vec![Message::info("x", "y".to_owned(), None)]),
            (Shown::whole(stored(product("s", 4, true))), Some(selected.clone()), vec![]),
            (Shown::whole(stored(product("t", 3, false))), None, vec![]),
            (Shown::Changed(Box::new(product("r", 2, true))), Some(selected), vec![]),
        ]
        .into_iter()
        .enumerate()
        {
            let view = ProductView { product: shown, selected, messages };
            let body = ProductBody::new(ucp(), &view);
            assert_written_as_serialized(&body, index % 2 == 0, |sink| body.write_json(sink).unwrap());
        }
    }

    // get_product's default view, as get_product derives it: cut from its product's rendering
    // when the store kept the product's JSON (which that takes), serialized otherwise; the
    // same bytes either way, also with a title that reads like the options' key.
    #[test]
    fn a_default_view_is_cut_from_its_products_rendering() {
        for (variants, after, from_store) in [(4, true, true), (3, false, true), (1, true, true), (4, true, false)] {
            let mut of = product("p", variants, after);
            of.title = ",\"options\":[{\"name\":\"Size\"}],\"variants\":[".to_owned();
            let of = serve(of, from_store);
            let detailed = detail(&of, &DetailRequest::default(), &|_| true).expect("a default view");
            assert_ne!(detailed.product.options, of.options, "the view flags its options");
            let view = Arc::new(Served::view_of(detailed.product, &of));
            let shown =
                ProductView { product: Shown::whole(view), selected: Some(detailed.selected), messages: vec![] };
            let body = ProductBody::new(ucp(), &shown);
            assert_written_as_serialized(&body, false, |sink| body.write_json(sink).unwrap());
            let _ = of.take_stored();
            assert_eq!(of.is_rendered_cheaply(), from_store, "{variants} variants: the product rendered for its view");
        }
    }
}
