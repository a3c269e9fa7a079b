//! The `name:key=value,key=value` syntax that generator specs ([`crate::io::gen`]) and
//! format specs ([`crate::formats::spec`], [`crate::choice`]) share: one tokenizer here,
//! while each caller checks its own names and keys and words its own errors (a generator's
//! message names the family and its keys, a format's the format).

/// Splits `spec` (trimmed) at its first `:` into the name (trimmed) and the rest, which is
/// empty when there is no `:`.
pub(crate) fn split_name(spec: &str) -> (&str, &str) {
    let spec = spec.trim();
    let (name, rest) = spec.split_once(':').unwrap_or((spec, ""));
    (name.trim(), rest)
}

/// The `key=value` items of `rest`, split at commas, in order: `Ok((key, value))` with both
/// trimmed, or `Err(item)` for an item without `=` (trimmed). Empty items are skipped. The
/// value of a key in `greedy` (matched ignoring case) is the whole rest of the string,
/// untrimmed and commas included, and ends the items: `blockdiag:k=2,of=poisson2d:nx=3,ny=4`
/// nests a spec that has commas of its own.
pub(crate) fn items<'a>(rest: &'a str, greedy: &'static [&'static str]) -> Items<'a> {
    Items { rest, greedy }
}

/// The iterator of [`items`].
pub(crate) struct Items<'a> {
    rest: &'a str,
    greedy: &'static [&'static str],
}

impl<'a> Iterator for Items<'a> {
    type Item = Result<(&'a str, &'a str), &'a str>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.rest.is_empty() {
            let whole = self.rest;
            let (item, tail) = whole.split_once(',').unwrap_or((whole, ""));
            self.rest = tail;
            if item.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Some(Err(item.trim()));
            };
            let key = key.trim();
            if self.greedy.iter().any(|g| g.eq_ignore_ascii_case(key)) {
                self.rest = "";
                let value_start = whole.find('=').expect("the item has an '='") + 1;
                return Some(Ok((key, &whole[value_start..])));
            }
            return Some(Ok((key, value.trim())));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_items_split_as_both_spec_kinds_expect() {
        assert_eq!(split_name(" sell-c-sigma : c=32 "), ("sell-c-sigma", " c=32"));
        assert_eq!(split_name("brcp"), ("brcp", ""));
        assert_eq!(split_name(":c=3"), ("", "c=3"));
        let all: Vec<_> = items(" c = 32,, sigma=auto ,", &[]).collect();
        assert_eq!(all, [Ok(("c", "32")), Ok(("sigma", "auto"))]);
        let all: Vec<_> = items("k=2,of=poisson2d:nx=3, ny=4", &["of"]).collect();
        assert_eq!(all, [Ok(("k", "2")), Ok(("of", "poisson2d:nx=3, ny=4"))]);
        let all: Vec<_> = items("n=10,offsets=1,2", &["of"]).collect();
        assert_eq!(all, [Ok(("n", "10")), Ok(("offsets", "1")), Err("2")]);
        assert_eq!(items("", &[]).count(), 0);
    }
}
