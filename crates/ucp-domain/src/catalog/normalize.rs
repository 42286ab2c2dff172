//! Normalizing a product as it is imported: descriptions, derived options, prices checked.

use super::*;

impl Description {
    pub fn plain(text: impl Into<String>) -> Self {
        Description { plain: Some(text.into()), html: None, markdown: None }
    }

    pub fn is_empty(&self) -> bool {
        self.plain.is_none() && self.html.is_none() && self.markdown.is_none()
    }

    /// The text a search index should see: plain, else markdown, else HTML with tags stripped.
    pub fn searchable_text(&self) -> String {
        if let Some(plain) = &self.plain {
            return plain.clone();
        }
        if let Some(markdown) = &self.markdown {
            return markdown.clone();
        }
        self.html.as_deref().map(strip_tags).unwrap_or_default()
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    out
}

impl Variant {
    /// Whether a buyer can order this variant now.
    pub fn is_available(&self) -> bool {
        if let Some(Availability { available: Some(available), .. }) = &self.availability {
            return *available;
        }
        self.inventory_quantity.is_none_or(|quantity| quantity > 0)
    }

    /// The label this variant has on option axis `name`.
    pub fn option_label(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|option| option.name == name).map(|option| option.label.as_str())
    }
}

impl Product {
    /// Everything besides the title a buyer might search by: the description, tags,
    /// categories, brand and option values (what the search index reads as a product's body).
    pub fn search_body(&self) -> String {
        let mut body = self.description.searchable_text();
        let mut push = |text: &str| {
            body.push(' ');
            body.push_str(text);
        };
        for tag in &self.tags {
            push(tag);
        }
        for category in &self.categories {
            push(&category.value);
        }
        if let Some(brand) = self.metadata.as_ref().and_then(|metadata| metadata.get("brand")).and_then(|v| v.as_str())
        {
            push(brand);
        }
        for option in &self.options {
            for value in &option.values {
                push(&value.label);
            }
        }
        body
    }

    /// Checks what the UCP schema and our store require, and derives what is derived:
    /// `price_range`, `list_price_range`, variant availability from stock, option axes from
    /// variant options when the document has none. Call before storing.
    pub fn normalize(&mut self) -> Result<(), InvalidProduct> {
        if self.id.trim().is_empty() {
            return Err(InvalidProduct::new("id", "must not be empty"));
        }
        if self.title.trim().is_empty() {
            return Err(InvalidProduct::new("title", "must not be empty"));
        }
        if self.description.is_empty() {
            self.description = Description::plain(self.title.clone());
        }
        if self.variants.is_empty() {
            return Err(InvalidProduct::new("variants", "a product needs at least one variant"));
        }
        let currency = self.variants[0].price.currency.clone();
        let mut seen_ids = std::collections::HashSet::new();
        for (index, variant) in self.variants.iter_mut().enumerate() {
            if variant.id.trim().is_empty() {
                return Err(InvalidProduct::new(format!("variants[{index}].id"), "must not be empty"));
            }
            if !seen_ids.insert(variant.id.clone()) {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].id"),
                    format!("duplicate variant id {:?}", variant.id),
                ));
            }
            check_price(&variant.price, &format!("variants[{index}].price"))?;
            if let Some(list_price) = &variant.list_price {
                check_price(list_price, &format!("variants[{index}].list_price"))?;
            }
            if variant.price.currency != currency {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            if let Some(list_price) = &variant.list_price
                && list_price.currency != currency
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].list_price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            if variant.title.trim().is_empty() {
                variant.title = self.title.clone();
            }
            if variant.description.is_empty() {
                variant.description = self.description.clone();
            }
            if let Some(quantity) = variant.inventory_quantity
                && quantity < 0
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].inventory_quantity"),
                    "must not be negative",
                ));
            }
        }
        self.refresh_availability();
        let prices = self.variants.iter().map(|variant| variant.price.amount);
        let (min, max) = (prices.clone().min().unwrap_or(0), prices.max().unwrap_or(0));
        self.price_range =
            PriceRange { min: Price::new(min, currency.clone()), max: Price::new(max, currency.clone()) };
        let list_prices: Vec<i64> =
            self.variants.iter().filter_map(|variant| variant.list_price.as_ref().map(|price| price.amount)).collect();
        self.list_price_range = match (list_prices.iter().min(), list_prices.iter().max()) {
            (Some(min), Some(max)) => {
                Some(PriceRange { min: Price::new(*min, currency.clone()), max: Price::new(*max, currency.clone()) })
            }
            _ => None,
        };
        if self.options.is_empty() {
            self.options = derive_options(&self.variants);
        }
        Ok(())
    }

    /// Recomputes each stock-tracked variant's `availability` from its `inventory_quantity`.
    /// A `backorder`/`preorder` status stays orderable at zero stock.
    pub fn refresh_availability(&mut self) {
        for variant in &mut self.variants {
            let Some(quantity) = variant.inventory_quantity else { continue };
            let stated = variant.availability.as_ref().and_then(|availability| availability.status.as_deref());
            variant.availability = Some(Availability::for_stock(stated, quantity));
        }
    }

    /// The currency every variant is priced in.
    pub fn currency(&self) -> &str {
        &self.price_range.min.currency
    }

    pub fn variant_by_id(&self, variant_id: &str) -> Option<&Variant> {
        self.variants.iter().find(|variant| variant.id == variant_id)
    }
}

fn check_price(price: &Price, field: &str) -> Result<(), InvalidProduct> {
    if !crate::money::is_currency_code(&price.currency) {
        return Err(InvalidProduct::new(
            format!("{field}.currency"),
            format!("{:?} is not an ISO 4217 code", price.currency),
        ));
    }
    if !(0..=crate::money::MAX_AMOUNT).contains(&price.amount) {
        return Err(InvalidProduct::new(format!("{field}.amount"), "must be between 0 and 2^53-1 minor units"));
    }
    Ok(())
}

/// Option axes in first-seen order, from the variants' own selections.
fn derive_options(variants: &[Variant]) -> Vec<ProductOption> {
    let mut axes: Vec<ProductOption> = Vec::new();
    let mut seen: BTreeMap<(String, String), ()> = BTreeMap::new();
    for variant in variants {
        for selected in &variant.options {
            if seen.insert((selected.name.clone(), selected.label.clone()), ()).is_some() {
                continue;
            }
            let value =
                OptionValue { id: selected.id.clone(), label: selected.label.clone(), available: None, exists: None };
            match axes.iter_mut().find(|axis| axis.name == selected.name) {
                Some(axis) => axis.values.push(value),
                None => axes.push(ProductOption { name: selected.name.clone(), values: vec![value] }),
            }
        }
    }
    axes
}

impl Availability {
    /// A stock-tracked variant's availability for `quantity` units on hand, given the status
    /// its document states: `backorder` and `preorder` stay orderable at zero stock.
    pub fn for_stock(stated: Option<&str>, quantity: i64) -> Availability {
        let in_stock = quantity > 0;
        let status = match stated {
            Some(status @ ("backorder" | "preorder")) => status,
            _ if in_stock => "in_stock",
            _ => "out_of_stock",
        };
        let available = in_stock || matches!(status, "backorder" | "preorder");
        Availability { available: Some(available), status: Some(status.to_owned()) }
    }

    /// Whether a variant whose document states `stated` is available with `stock` laid over
    /// it: what [`Variant::is_available`] answers once [`Product::refresh_availability`] ran.
    pub fn is_orderable(stated: Option<&Availability>, stock: Option<i64>) -> bool {
        match stock {
            Some(quantity) => {
                let status = stated.and_then(|availability| availability.status.as_deref());
                Availability::for_stock(status, quantity).available == Some(true)
            }
            None => stated.and_then(|availability| availability.available).unwrap_or(true),
        }
    }
}
