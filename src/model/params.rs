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
