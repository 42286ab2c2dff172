//! Placeholder: filled in by the purchase test work.
