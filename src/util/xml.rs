//! XML text escaping, one way each: for the bodies sent to S3 and the SVG charts, and
//! back for the text of S3's answers.

/// `s` as XML text; the characters XML 1.0 forbids (the C0 controls but tab, line feed
/// and carriage return; U+FFFE and U+FFFF) left out, so that the document stays
/// well-formed whatever a result file held.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => {}
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

pub fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#34;", "\"")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_xml_forbids_is_left_out_and_the_rest_escaped() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(escape("x\u{1b}[31m\u{0}y\u{ffff}\tz"), "x[31my\tz");
        assert_eq!(unescape(&escape("a&b<c")), "a&b<c");
    }
}
