//! XML text escaping, one way each: for the bodies sent to S3 and the SVG charts, and
//! back for the text of S3's answers.

/// `s` as XML text, every character kept (S3's bodies: what is escaped unescapes to
/// itself).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
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

/// `s` as the text of a document that must stay well-formed whatever it was given (the
/// SVG charts of result files): the characters XML 1.0 forbids (the C0 controls but
/// tab, line feed and carriage return; U+FFFE and U+FFFF) left out, the rest escaped.
pub fn document_text(s: &str) -> String {
    let allowed = |c: &char| {
        matches!(c, '\t' | '\n' | '\r') || (*c >= ' ' && *c != '\u{fffe}' && *c != '\u{ffff}')
    };
    escape(&s.chars().filter(allowed).collect::<String>())
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
    fn a_document_leaves_out_what_xml_forbids_and_s3_text_keeps_everything() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        let odd = "x\u{1b}[31m\u{0}y\u{ffff}\tz<";
        assert_eq!(document_text(odd), "x[31my\tz&lt;");
        assert_eq!(unescape(&escape(odd)), odd, "S3's text is kept whole");
    }
}
