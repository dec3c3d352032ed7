//! The `#[pointwise]` attribute (work in progress).
use proc_macro::TokenStream;

/// Marks a pointwise physics function (work in progress: passes the item through).
#[proc_macro_attribute]
pub fn pointwise(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
