//! A benchmark's parameters (`key=value` pairs in declaration order) as labels, values
//! and table columns.

/// `name (k=v, k=v)` for a benchmark name and its parameters. Never inlined: it is called
/// from many places, and one copy keeps the binaries small.
#[inline(never)]
pub fn label(name: &str, params: &[(String, String)]) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    format!("{name} ({})", params_text(params))
}

/// `k=v, k=v`: parameters as a label shows them.
pub fn params_text(params: &[(String, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The value of parameter `key` among `params`.
pub fn param_value<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Parameter names in order of first appearance across benchmarks' parameter lists: the
/// columns of a table of them.
pub fn param_keys<'a>(lists: impl IntoIterator<Item = &'a [(String, String)]>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for params in lists {
        for (k, _) in params {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}

/// The parameter names whose values differ between some of `lists` (a key missing from
/// one list counts as a value): what tells one benchmark of a run from another.
pub fn varying_keys<'a>(
    lists: impl IntoIterator<Item = &'a [(String, String)]> + Clone,
) -> Vec<String> {
    param_keys(lists.clone())
        .into_iter()
        .filter(|k| {
            let values: Vec<Option<&str>> = lists
                .clone()
                .into_iter()
                .map(|p| param_value(p, k))
                .collect();
            values.iter().any(|v| *v != values[0])
        })
        .collect()
}

/// `name (k=v, …)` with only the parameters named in `keys`.
pub fn label_with(name: &str, params: &[(String, String)], keys: &[String]) -> String {
    let kept: Vec<(String, String)> = params
        .iter()
        .filter(|(k, _)| keys.contains(k))
        .cloned()
        .collect();
    label(name, &kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_parameters_that_tell_benchmarks_apart_vary() {
        let p = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let a = p(&[("input", "city.json"), ("threads", "1"), ("lock", "none")]);
        let b = p(&[("input", "city.json"), ("threads", "2"), ("lock", "none")]);
        let c = p(&[("input", "city.json"), ("threads", "2")]);
        let lists = [a.as_slice(), b.as_slice(), c.as_slice()];
        assert_eq!(varying_keys(lists.iter().copied()), ["threads", "lock"]);
        assert_eq!(
            varying_keys([a.as_slice()].into_iter()),
            Vec::<String>::new()
        );
        assert_eq!(
            label_with("bb.zstd.compress", &a, &["threads".into()]),
            "bb.zstd.compress (threads=1)"
        );
    }
}
