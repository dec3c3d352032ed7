//! The arguments of the attribute: `#[pointwise]`,
//! `#[pointwise(name = StructName)]`, `#[pointwise(helpers(f, util::g))]`.

use proc_macro2::TokenStream;
use syn::parse::Parser;

/// Parsed attribute arguments.
#[derive(Default)]
pub struct Args {
    /// `name = Foo`: the generated struct's name (physics only).
    pub name: Option<syn::Ident>,
    /// `helpers(…)`: the `#[pointwise]` helper functions the body may call,
    /// as the paths the body calls them by.
    pub helpers: Vec<syn::Path>,
}

/// Parses the attribute's tokens: the arguments understood, and the errors
/// (all of them) if any.
pub fn parse(tokens: TokenStream) -> (Args, Option<syn::Error>) {
    let mut args = Args::default();
    let mut errors: Vec<syn::Error> = Vec::new();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            let ident: syn::Ident = meta.value()?.parse()?;
            if args.name.replace(ident).is_some() {
                errors.push(meta.error("`name` given twice"));
            }
            Ok(())
        } else if meta.path.is_ident("helpers") {
            meta.parse_nested_meta(|h| {
                if !h.input.is_empty() && !h.input.peek(syn::Token![,]) {
                    return Err(h.error(
                        "expected a helper function's path, as in `helpers(kappa, util::smooth)`",
                    ));
                }
                args.helpers.push(h.path.clone());
                Ok(())
            })
        } else {
            let path = &meta.path;
            let text = quote::quote!(#path).to_string().replace(' ', "");
            errors.push(meta.error(format!(
                "unknown `#[pointwise]` argument `{text}`: expected `name = StructName` or \
                 `helpers(f, g)`"
            )));
            // Skip the argument's value, if any, and go on with the next.
            if meta.input.peek(syn::Token![=]) {
                let _: syn::Expr = meta.value()?.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let _: TokenStream = content.parse()?;
            }
            Ok(())
        }
    });
    if let Err(e) = parser.parse2(tokens) {
        errors.push(e);
    }
    let mut it = errors.into_iter();
    let combined = it.next().map(|mut first| {
        for e in it {
            first.combine(e);
        }
        first
    });
    (args, combined)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn accepts_name_and_helpers() {
        let (a, e) = parse(quote!(name = Foo, helpers(kappa, util::smooth)));
        assert!(e.is_none());
        assert_eq!(a.name.unwrap(), "Foo");
        assert_eq!(a.helpers.len(), 2);
        assert!(parse(quote!()).0.helpers.is_empty());
    }

    #[test]
    fn reports_unknown_arguments_and_keeps_the_others() {
        let (a, e) = parse(quote!(nmae = Foo, helpers(k)));
        let e = e.unwrap();
        assert!(
            e.to_string()
                .contains("unknown `#[pointwise]` argument `nmae`"),
            "{e}"
        );
        assert_eq!(a.helpers.len(), 1);
    }
}
