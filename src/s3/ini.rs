//! The INI dialect of `~/.aws/credentials` and `~/.aws/config`, read as the AWS CLI reads
//! it (Python's configparser): `[section]` headers, `key = value` or `key: value`, whole
//! lines of `#` or `;` comments, blank lines, whitespace around everything, keys in any
//! case, and indented `key = value` lines under a key with no value as a nested section
//! (`s3 =` then `  addressing_style = path`). Anything else is an error naming the line
//! and at most its key, never its text: a credentials file's lines hold secrets. A control
//! character (a CR, an escape) is refused on any line: values go into request headers.

/// One `key = value`, with the line it was on and its nested keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: String,
    pub line: usize,
    pub nested: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub entries: Vec<Entry>,
}

impl Section {
    /// The entry for `key` (lowercase); a key given twice counts as its last value.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.key == key)
    }
}

impl Entry {
    pub fn nested(&self, key: &str) -> Option<&Entry> {
        self.nested.iter().rev().find(|e| e.key == key)
    }
}

/// The sections of `text`, in order of first appearance; a section given twice has both
/// parts' keys. Errors say the line number and what was expected.
pub fn parse(text: &str) -> Result<Vec<Section>, String> {
    let mut sections: Vec<Section> = Vec::new();
    // Each name's place, and where keys go now: a file of many distinct sections is read
    // in one pass, not one search of those before for each (quadratic on a 1 MiB file).
    let mut places: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if trimmed.chars().any(char::is_control) {
            return Err(format!(
                "line {line}{}: a control character (CR, LF, ESC or another) where none belongs",
                named(trimmed).map_or(String::new(), |k| format!(" ('{k}')"))
            ));
        }
        let indented = raw.starts_with([' ', '\t']);
        if trimmed.starts_with('[') {
            let name = trimmed
                .strip_suffix(']')
                .map(|s| s[1..].trim())
                .filter(|s| !s.is_empty())
                .ok_or_else(|| format!("line {line}: a section header is '[name]'"))?;
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            // A repeated section continues the first: keys to come go there.
            let next = sections.len();
            let place = *places.entry(name.clone()).or_insert(next);
            if place == next {
                sections.push(Section {
                    name,
                    entries: Vec::new(),
                });
            }
            current = Some(place);
            continue;
        }
        let (key, value) = split_pair(trimmed).ok_or_else(|| match named(trimmed) {
            Some(k) => format!(
                "line {line}: '{k}' has no '=' (expected '[section]', 'key = value' or a comment)"
            ),
            None => format!(
                "line {line}: expected '[section]', 'key = value' or a comment \
                 (the line is not shown: it may hold a secret)"
            ),
        })?;
        let Some(section) = current.map(|i| &mut sections[i]) else {
            return Err(format!(
                "line {line}: {} comes before any [section]",
                named(&key).map_or("a key".into(), |k| format!("'{k}'"))
            ));
        };
        let entry = Entry {
            key,
            value,
            line,
            nested: Vec::new(),
        };
        match section.entries.last_mut() {
            Some(parent) if indented && parent.value.is_empty() => parent.nested.push(entry),
            Some(_) if indented => {
                return Err(format!(
                    "line {line}: an indented {} belongs under a key with no value (like 's3 =')",
                    named(&entry.key).map_or("key".into(), |k| format!("'{k}'"))
                ))
            }
            _ => section.entries.push(entry),
        }
    }
    Ok(sections)
}

/// The key a line starts with, when it looks like one (lowercase letters, digits and
/// `_`, as every AWS setting is named), to name in an error; anything else may be a
/// secret, and a line whose first word is 40 random characters is never named.
fn named(line: &str) -> Option<&str> {
    let end = line
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(line.len());
    let (key, rest) = line.split_at(end);
    let whole_word =
        rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '=' || c == ':');
    (whole_word && (1..=32).contains(&key.len())).then_some(key)
}

/// `key = value` or `key: value`, split at the first `=` or `:`; the key lowercase.
fn split_pair(line: &str) -> Option<(String, String)> {
    let at = line.find(['=', ':'])?;
    let key = line[..at].trim();
    if key.is_empty() {
        return None;
    }
    Some((key.to_ascii_lowercase(), line[at + 1..].trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_whitespace_nesting_and_repeats_are_read_as_the_aws_cli_does() {
        let text = "# top\n\n  [ profile   dev ]  \nRegion=eu-west-1\n; note\n\
                    s3 =\n  addressing_style = path\n\tendpoint_url: http://h:9000\n\
                    [default]\nregion = us-east-1\n[profile dev]\nregion = eu-north-1\n";
        let s = parse(text).unwrap();
        assert_eq!(
            s.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["profile dev", "default"]
        );
        let dev = &s[0];
        assert_eq!(
            dev.get("region").map(|e| (e.value.as_str(), e.line)),
            Some(("eu-north-1", 12))
        );
        let s3 = dev.get("s3").unwrap();
        assert_eq!(s3.nested("addressing_style").unwrap().value, "path");
        assert_eq!(s3.nested("endpoint_url").unwrap().value, "http://h:9000");
    }

    #[test]
    fn many_sections_are_read_in_one_pass() {
        // 100,000 distinct sections, and the first again at the end: a search of those
        // before for each header took minutes; one pass takes milliseconds.
        let mut text: String = (0..100_000)
            .map(|i| {
                format!(
                    "[s{i}]
k = {i}
"
                )
            })
            .collect();
        text.push_str(
            "[s0]
last = yes
",
        );
        let started = std::time::Instant::now();
        let s = parse(&text).unwrap();
        assert_eq!(s.len(), 100_000);
        assert_eq!(s[0].get("last").unwrap().value, "yes");
        assert_eq!(s[0].get("k").unwrap().value, "0");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn malformed_lines_name_their_line() {
        for (text, want) in [
            (
                "[default]\nthis is not a pair\n",
                "line 2: 'this' has no '=' (expected '[section]'",
            ),
            ("key = v\n", "line 1: 'key' comes before any [section]"),
            ("[default\n", "line 1: a section header"),
            ("[]\n", "line 1: a section header"),
            (
                "[a]\nregion = x\n  nested = y\n",
                "line 3: an indented 'nested'",
            ),
            ("[a]\n= x\n", "line 2: expected"),
            (
                "[a]\naws_secret_access_key SECRET\n",
                "line 2: 'aws_secret_access_key' has no '='",
            ),
            (
                "[a]\nwJalrXUtnFEMI/K7MDENG\n",
                "line 2: expected '[section]', 'key = value' or a comment (the line is not shown",
            ),
            (
                "[a]\nregion = x\rX-Injected: 1\n",
                "line 2 ('region'): a control character",
            ),
            (
                "[a]\naws_session_token = a\x1b[2Jb\n",
                "line 2 ('aws_session_token'): a control",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.starts_with(want), "{text:?}: {e}");
            for secret in ["SECRET", "wJalr", "X-Injected", "\x1b"] {
                assert!(!e.contains(secret), "{text:?}: {e}");
            }
        }
    }
}
