//! The layers run one way: every `crate::`, `$crate::`, `super::`, `self::` and
//! `boardbench::` path in src/ is read (use trees expanded, comments and strings, raw and
//! byte ones too, skipped), and an import that climbs the order ARCHITECTURE.md's `layers`
//! block draws, one between two modules of the same layer, or a cycle among the files of
//! one folder fails the test with the file and line of each offending path. A name at the
//! crate's root is followed to where it comes from: one of src/lib.rs's re-exports to the
//! module it names, a `#[macro_export]` macro to the file that defines it; a path that
//! leads to no module of src/, and a glob of the root or in lib.rs, fail the test too, as
//! imports it cannot judge.
//!
//! One home per fact: ARCHITECTURE.md's table of folders has one line for each folder of
//! src/ and no other, and every file under src/ opens with its own `//!` doc, the only
//! description of that file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// One path found in a file: the module it was found in (inline `mod tests` included), the
/// path as written with `super`/`self` resolved to absolute segments, and its line.
#[derive(Debug, Clone)]
struct Reference {
    /// Where the path was found (the file's module, or an inline module in it).
    #[allow(dead_code)]
    from: Vec<String>,
    to: Vec<String>,
    line: usize,
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Dollar,
    Star,
    Other,
}

/// The tokens of Rust source with their lines, comments, strings and chars left out.
fn tokenize(src: &str) -> Vec<(Token, usize)> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(b[i] == '\n');
                    i += 1;
                }
            }
        } else if let Some(mut j) = raw_string_at(&b, i) {
            // A raw string: r"...", r#"..."#, and the byte (br) and C (cr) ones alike.
            let mut hashes = 0;
            while b[j] == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            loop {
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                line += usize::from(b[j] == '\n');
                j += 1;
            }
            out.push((Token::Other, line));
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                line += usize::from(b.get(i) == Some(&'\n'));
                i += 1;
            }
            i += 1;
            out.push((Token::Other, line));
        } else if c == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
            out.push((Token::Other, line));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(b[start..i].iter().collect()), line));
        } else if c == ':' && next == Some(':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((
                match c {
                    '{' => Token::Open,
                    '}' => Token::Close,
                    ';' => Token::Semi,
                    ',' => Token::Comma,
                    '$' => Token::Dollar,
                    '*' => Token::Star,
                    _ => Token::Other,
                },
                line,
            ));
            i += 1;
        }
    }
    out
}

/// Where the hashes (or the opening quote) of a raw string starting at `i` begin: after
/// its `r`, `br` or `cr`; None where no raw string starts there (`r#ident` is an
/// identifier).
fn raw_string_at(b: &[char], i: usize) -> Option<usize> {
    let after_r = match (b[i], b.get(i + 1)) {
        ('r', _) => i + 1,
        ('b' | 'c', Some('r')) => i + 2,
        _ => return None,
    };
    let mut j = after_r;
    while b.get(j) == Some(&'#') {
        j += 1;
    }
    (b.get(j) == Some(&'"')).then_some(after_r)
}

fn ident(t: Option<&(Token, usize)>) -> Option<&str> {
    match t {
        Some((Token::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// Every path that starts at `crate`, `$crate`, `super`, `self` or `boardbench` in the
/// file of module `module`, resolved to absolute segments.
fn references(module: &[String], src: &str) -> Vec<Reference> {
    let tokens = tokenize(src);
    let mut out = Vec::new();
    // Inline modules open at a brace depth: (name, depth).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        match &tokens[i].0 {
            Token::Open => depth += 1,
            Token::Close => {
                depth -= 1;
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(m)
                if m == "mod" && matches!(tokens.get(i + 2), Some((Token::Open, _))) =>
            {
                if let Some(name) = ident(tokens.get(i + 1)) {
                    inline.push((name.to_string(), depth));
                }
            }
            Token::Ident(u) if u == "use" => {
                let mut j = i + 1;
                let mut paths = Vec::new();
                use_tree(&tokens, &mut j, Vec::new(), &mut paths);
                for used in paths {
                    if let Some(to) = resolve(&here, &used.path) {
                        out.push(Reference {
                            from: here.clone(),
                            to,
                            line: used.line,
                        });
                    }
                }
                i = j;
                continue;
            }
            Token::Ident(_) | Token::Dollar => {
                let start = if tokens[i].0 == Token::Dollar {
                    i + 1
                } else {
                    i
                };
                let preceded_by_sep = i > 0 && tokens[i - 1].0 == Token::PathSep;
                if let (false, Some(first)) = (preceded_by_sep, ident(tokens.get(start))) {
                    if is_root(first) && matches!(tokens.get(start + 1), Some((Token::PathSep, _)))
                    {
                        let mut path = vec![first.to_string()];
                        let mut j = start + 1;
                        while let (Some((Token::PathSep, _)), Some(seg)) =
                            (tokens.get(j), ident(tokens.get(j + 1)))
                        {
                            path.push(seg.to_string());
                            j += 2;
                        }
                        if let Some(to) = resolve(&here, &path) {
                            out.push(Reference {
                                from: here.clone(),
                                to,
                                line: tokens[i].1,
                            });
                        }
                        i = j;
                        continue;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn is_root(s: &str) -> bool {
    matches!(s, "crate" | "super" | "self" | "boardbench")
}

/// One path of a use tree: its segments as written (a glob's last one `*`), the name it
/// is brought in as where `as` renames it, and its line.
struct Used {
    path: Vec<String>,
    renamed: Option<String>,
    line: usize,
}

/// Expands the use tree at `*j` into full paths with their lines; leaves `*j` after it.
fn use_tree(tokens: &[(Token, usize)], j: &mut usize, prefix: Vec<String>, out: &mut Vec<Used>) {
    let mut path = prefix.clone();
    let mut renamed = None;
    let mut line = tokens.get(*j).map_or(0, |t| t.1);
    if tokens.get(*j).map(|t| &t.0) == Some(&Token::Dollar) {
        *j += 1;
    }
    loop {
        match tokens.get(*j).map(|t| &t.0) {
            Some(Token::Ident(s)) if s == "as" => {
                renamed = ident(tokens.get(*j + 1)).map(String::from);
                *j += 2;
            }
            Some(Token::Ident(s)) => {
                line = tokens[*j].1;
                path.push(s.clone());
                *j += 1;
            }
            Some(Token::PathSep) => *j += 1,
            Some(Token::Open) => {
                *j += 1;
                loop {
                    use_tree(tokens, j, path.clone(), out);
                    match tokens.get(*j).map(|t| &t.0) {
                        Some(Token::Comma) => *j += 1,
                        Some(Token::Close) => {
                            *j += 1;
                            break;
                        }
                        _ => break,
                    }
                    if tokens.get(*j).map(|t| &t.0) == Some(&Token::Close) {
                        *j += 1;
                        break;
                    }
                }
                path.clear();
            }
            Some(Token::Star) => {
                path.push("*".to_string());
                *j += 1;
            }
            _ => break,
        }
        if matches!(
            tokens.get(*j).map(|t| &t.0),
            Some(Token::Comma | Token::Close | Token::Semi) | None
        ) {
            break;
        }
    }
    if !path.is_empty() && path.len() > prefix.len() {
        out.push(Used {
            path,
            renamed,
            line,
        });
    }
    if tokens.get(*j).map(|t| &t.0) == Some(&Token::Semi) {
        *j += 1;
    }
}

/// A path made absolute (without `crate`), or None where it leaves the crate (std, an
/// external crate) or is a macro variable.
fn resolve(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = match path.first()?.as_str() {
        "crate" | "boardbench" => Vec::new(),
        "self" => here.to_vec(),
        "super" => here.to_vec(),
        _ => return None,
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        base.pop()?;
        while rest.first().map(String::as_str) == Some("super") {
            base.pop()?;
            rest = &rest[1..];
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The modules of the tree under src/, each with its file; `bin` stands for src/bin, and
/// src/lib.rs is the root, the empty path.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut segs: Vec<String> = rel
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if segs == ["lib"] {
                segs.clear();
            } else if segs[0] == "bin" {
                segs.truncate(2);
            } else if segs.last().map(String::as_str) == Some("mod") {
                segs.pop();
            }
            out.insert(segs, path);
        }
    }
    out
}

/// The longest module that is a prefix of `path`.
fn owner<'a>(
    known: &'a BTreeMap<Vec<String>, PathBuf>,
    path: &[String],
) -> Option<&'a Vec<String>> {
    (1..=path.len())
        .rev()
        .find_map(|n| known.get_key_value(&path[..n]).map(|(k, _)| k))
}

/// The names at the crate's root that are not modules, each with the module path it
/// stands for: src/lib.rs's `use`s (a re-export, `pub use`, or not: both are `crate::name`
/// to the whole crate) as the path they name, and each `#[macro_export]` macro as its
/// defining module's path and its name. `problems` gets a glob in lib.rs, whose names
/// cannot be followed.
fn root_names(
    files: &BTreeMap<Vec<String>, (PathBuf, String)>,
    problems: &mut Vec<String>,
) -> BTreeMap<String, Vec<String>> {
    let mut names = BTreeMap::new();
    let tops: BTreeSet<&str> = files
        .keys()
        .filter_map(|k| k.first())
        .map(String::as_str)
        .collect();
    if let Some((lib, src)) = files.get(&Vec::new()) {
        let tokens = tokenize(src);
        let mut depth = 0;
        let mut i = 0;
        while i < tokens.len() {
            match &tokens[i].0 {
                Token::Open => depth += 1,
                Token::Close => depth -= 1,
                Token::Ident(u) if u == "use" && depth == 0 => {
                    let mut j = i + 1;
                    let mut paths = Vec::new();
                    use_tree(&tokens, &mut j, Vec::new(), &mut paths);
                    for used in paths {
                        let mut path = used.path;
                        if matches!(path[0].as_str(), "crate" | "self") {
                            path.remove(0);
                        }
                        // Another crate's (std, argh): not ours to follow.
                        if !path.first().is_some_and(|p| tops.contains(p.as_str())) {
                            continue;
                        }
                        if path.last().map(String::as_str) == Some("self") {
                            path.pop();
                        }
                        if path.last().map(String::as_str) == Some("*") {
                            problems.push(format!(
                                "{}:{}: the glob {} hides which module each name comes from",
                                lib.display(),
                                used.line,
                                path.join("::")
                            ));
                            continue;
                        }
                        let name = used.renamed.unwrap_or_else(|| path.last().unwrap().clone());
                        names.insert(name, path);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    for (module, (_, src)) in files {
        let tokens = tokenize(src);
        for i in 0..tokens.len() {
            if ident(tokens.get(i)) != Some("macro_export") {
                continue;
            }
            // The next `macro_rules! NAME`, past any other attributes.
            let name = (i..tokens.len())
                .find(|&at| ident(tokens.get(at)) == Some("macro_rules"))
                .and_then(|at| ident(tokens.get(at + 2)));
            if let Some(name) = name {
                let mut path = module.clone();
                path.push(name.to_string());
                names.insert(name.to_string(), path);
            }
        }
    }
    names
}

/// The module that `to` (a resolved path) leads to: the longest module that is a prefix
/// of it, or of what a root name stands for.
fn target<'a>(
    known: &'a BTreeMap<Vec<String>, PathBuf>,
    roots: &BTreeMap<String, Vec<String>>,
    to: &[String],
) -> Option<(Vec<String>, &'a Vec<String>)> {
    let first = to.first()?;
    let through = match roots.get(first) {
        Some(named) if !known.contains_key(std::slice::from_ref(first)) => {
            named.iter().chain(&to[1..]).cloned().collect()
        }
        _ => to.to_vec(),
    };
    let module = owner(known, &through)?;
    Some((through, module))
}

/// The layers, top first, from the ```layers block of ARCHITECTURE.md.
fn layers(architecture: &str) -> Vec<Vec<String>> {
    let start = architecture
        .find("```layers\n")
        .expect("ARCHITECTURE.md has a ```layers block")
        + "```layers\n".len();
    let end = start
        + architecture[start..]
            .find("```")
            .expect("the layers block ends");
    architecture[start..end]
        .lines()
        .map(|l| l.split('#').next().unwrap())
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            l.split_whitespace()
                .map(|m| m.trim_end_matches('/').to_string())
                .collect()
        })
        .collect()
}

/// The violations of `layers` by the references in `files` (module path, source): an
/// upward or same-layer import between top-level modules, a top-level module missing from
/// the layers, or a cycle among the sibling files of one folder.
fn violations(
    layers: &[Vec<String>],
    files: &BTreeMap<Vec<String>, (PathBuf, String)>,
) -> Vec<String> {
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(r, ms)| ms.iter().map(move |m| (m.as_str(), r)))
        .collect();
    let known: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|(k, (p, _))| (k.clone(), p.clone()))
        .collect();
    let mut problems = Vec::new();
    let roots = root_names(files, &mut problems);
    let tops: BTreeSet<&str> = known
        .keys()
        .filter_map(|k| k.first())
        .map(String::as_str)
        .collect();
    for top in &tops {
        if !rank.contains_key(top) {
            problems.push(format!("src/{top} is in no layer of ARCHITECTURE.md"));
        }
    }
    // Sibling edges, per folder: parent -> (child -> children it imports).
    let mut siblings: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for (module, (path, src)) in files {
        // The root (src/lib.rs) is above every layer; its names are followed above.
        let Some(top) = module.first().map(String::as_str) else {
            continue;
        };
        for r in references(module, src) {
            let at = format!("{}:{}", path.display(), r.line);
            // A bin's `boardbench::x` is the crate's x.
            let Some((to, target)) = target(&known, &roots, &r.to) else {
                problems.push(if r.to == ["*"] {
                    format!(
                        "{at}: a glob of the crate's root hides which module each name comes from"
                    )
                } else {
                    format!("{at}: {} leads to no module of src/", r.to.join("::"))
                });
                continue;
            };
            let (from_top, to_top) = (top, target[0].as_str());
            if from_top != to_top {
                match (rank.get(from_top), rank.get(to_top)) {
                    (Some(a), Some(b)) if a >= b => problems.push(format!(
                        "{at}: {from_top} imports {} from {to_top}, {}",
                        to.join("::"),
                        if a == b {
                            "a module of its own layer"
                        } else {
                            "a layer above it"
                        }
                    )),
                    _ => {}
                }
                continue;
            }
            // Within one top-level module: lift both ends to the children of their
            // common ancestor; a module and its own ancestors are not an edge.
            let common = module
                .iter()
                .zip(target.iter())
                .take_while(|(a, b)| a == b)
                .count();
            if common == module.len() || common == target.len() {
                continue;
            }
            siblings
                .entry(module[..common].to_vec())
                .or_default()
                .entry(module[common].clone())
                .or_default()
                .entry(target[common].clone())
                .or_insert(at);
        }
    }
    for (parent, edges) in &siblings {
        for cycle in cycles(edges) {
            let at: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], edges[&w[0]][&w[1]]))
                .collect();
            problems.push(format!(
                "a cycle among the files of src/{}: {}",
                parent.join("/"),
                at.join(", ")
            ));
        }
    }
    problems
}

/// One cycle (as a closed walk, first node repeated at the end) per strongly connected
/// set of more than one node.
fn cycles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    let reaches = |from: &str, to: &str| -> Option<Vec<String>> {
        // Breadth-first search for a path from -> to, returned without `from`.
        let mut seen = BTreeSet::new();
        let mut queue =
            std::collections::VecDeque::from([(from.to_string(), Vec::<String>::new())]);
        while let Some((node, path)) = queue.pop_front() {
            for next in edges.get(&node).into_iter().flat_map(|m| m.keys()) {
                let mut p = path.clone();
                p.push(next.clone());
                if next == to {
                    return Some(p);
                }
                if seen.insert(next.clone()) {
                    queue.push_back((next.clone(), p));
                }
            }
        }
        None
    };
    let mut found: Vec<Vec<String>> = Vec::new();
    let mut covered = BTreeSet::new();
    for node in edges.keys() {
        if covered.contains(node) {
            continue;
        }
        if let Some(path) = reaches(node, node) {
            let mut cycle = vec![node.clone()];
            cycle.extend(path);
            covered.extend(cycle.iter().cloned());
            found.push(cycle);
        }
    }
    found
}

fn source_files() -> BTreeMap<Vec<String>, (PathBuf, String)> {
    let src = Path::new(REPO).join("src");
    modules(&src)
        .into_iter()
        .map(|(m, p)| {
            let text = std::fs::read_to_string(&p).unwrap();
            let shown = p.strip_prefix(REPO).unwrap().to_path_buf();
            (m, (shown, text))
        })
        .collect()
}

#[test]
fn imports_run_one_way_down_the_layers_of_architecture_md() {
    let architecture = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let layers = layers(&architecture);
    assert!(layers.len() >= 3, "{layers:?}");
    let files = source_files();
    assert!(
        files.len() > 50,
        "found only {} files under src/",
        files.len()
    );
    let problems = violations(&layers, &files);
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// A made-up file of module `m` (`a::b`) with source `src`, as [`source_files`] gives one.
fn made_up(m: &str, src: &str) -> (Vec<String>, (PathBuf, String)) {
    let segs: Vec<String> = m.split("::").map(String::from).collect();
    (
        segs,
        (
            PathBuf::from(format!("src/{}.rs", m.replace("::", "/"))),
            src.to_string(),
        ),
    )
}

/// The checker itself, on a small made-up tree: it must see each kind of violation.
#[test]
fn the_check_fails_on_an_upward_import_a_same_layer_import_and_a_cycle() {
    let layers = layers("text\n```layers\nbin\nharness  # the core\nreport model\nutil/\n```\n");
    assert_eq!(
        layers,
        [
            vec!["bin"],
            vec!["harness"],
            vec!["report", "model"],
            vec!["util"]
        ]
    );
    let file = made_up;
    let clean: BTreeMap<_, _> = [
        file("bin::bb-x", "use boardbench::harness::run; fn main() { boardbench::util::f(); }"),
        file("harness", "use crate::{report::text, util::{a, b as c}};\nuse super::report::*;"),
        file("report", "use crate::util::format; // crate::harness::x in a comment\nconst S: &str = \"crate::harness::y\";"),
        file("report::text", "use super::super::util::x; use self::inner::y; mod inner { use super::super::csv::q; }"),
        file("report::csv", "use crate::util::z;"),
        file("model", "fn f() -> crate::util::Thing { todo!() }"),
        file("util", "use std::fmt; use crate::util::inner::x;"),
    ]
    .into_iter()
    .collect();
    assert_eq!(violations(&layers, &clean), Vec::<String>::new());

    let mut bad = clean.clone();
    for (m, src) in [
        ("util", "\n\nfn f() { crate::harness::run(); }"),
        ("model", "use crate::report::{text};"),
        ("report::csv", "use super::text::t;"),
        ("report::text", "pub use crate::report::csv::c;"),
        ("stray", ""),
    ] {
        let (k, v) = file(m, src);
        bad.insert(k, v);
    }
    let problems = violations(&layers, &bad);
    let has = |s: &str| problems.iter().any(|p| p.contains(s));
    assert!(
        has("src/util.rs:3: util imports harness::run from harness, a layer above it"),
        "{problems:#?}"
    );
    assert!(
        has("model imports report::text from report, a module of its own layer"),
        "{problems:#?}"
    );
    assert!(
        has("a cycle among the files of src/report: csv -> text"),
        "{problems:#?}"
    );
    assert!(has("src/stray is in no layer"), "{problems:#?}");
    assert_eq!(problems.len(), 4, "{problems:#?}");
}

/// The holes the check once had, each closed: lib.rs's re-exports followed to the module
/// they name, an exported macro (through `crate::name!` or `$crate::name!`) to the file
/// that defines it, raw byte strings skipped like any string, and what it cannot follow
/// (a path to no module, a glob of the root or in lib.rs) a failure.
#[test]
fn the_check_sees_through_re_exports_and_macros_and_skips_raw_byte_strings() {
    let layers = layers("```layers\nbin\nharness\nmodel\nutil\n```\n");
    let root = |src: &str| (Vec::new(), (PathBuf::from("src/lib.rs"), src.to_string()));
    let clean: BTreeMap<_, _> = [
        root("pub mod harness; pub mod model; pub mod util;\npub use harness::{run as run_suite, Suite};\npub use util::error::{self, Error};\npub use argh;"),
        made_up("bin::bb-x", "boardbench::bench_args! {} fn main() { boardbench::run_suite(); }"),
        made_up("harness", "#[macro_export]\nmacro_rules! bench_args { () => { $crate::stderr!(); $crate::Error }; }\npub fn run() { crate::stderr!(); }"),
        made_up("model", "use crate::{error::Error, Error as E, stderr}; fn f() { stderr!(); }"),
        made_up("util", r##"#[macro_export]
#[doc(hidden)]
macro_rules! stderr { ($($a:tt)*) => {{ $crate::util::error::f() }}; }
const B: &[u8] = br#"a "crate::harness::z" b"#;
const C: (&[u8], &str) = (br"\", "crate::harness::q");"##),
        made_up("util::error", "pub struct Error; pub fn f() {}"),
    ]
    .into_iter()
    .collect();
    assert_eq!(violations(&layers, &clean), Vec::<String>::new());

    let mut bad = clean.clone();
    for (m, src) in [
        (
            "util::file",
            "use crate::run_suite;\nfn f() -> crate::Suite { todo!() }\nmacro_rules! m { () => { $crate::bench_args! {} }; }",
        ),
        ("model", "\nfn f() { crate::bench_args!(); }"),
        ("model::x", "use super::super::*; fn f() { crate::nowhere::g(); }"),
    ] {
        let (k, v) = made_up(m, src);
        bad.insert(k, v);
    }
    let problems = violations(&layers, &bad);
    let has = |s: &str| problems.iter().any(|p| p.contains(s));
    for expected in [
        "src/util/file.rs:1: util imports harness::run from harness, a layer above it",
        "src/util/file.rs:2: util imports harness::Suite from harness, a layer above it",
        "src/util/file.rs:3: util imports harness::bench_args from harness, a layer above it",
        "src/model.rs:2: model imports harness::bench_args from harness, a layer above it",
        "src/model/x.rs:1: a glob of the crate's root hides which module each name comes from",
        "src/model/x.rs:1: nowhere::g leads to no module of src/",
    ] {
        assert!(has(expected), "{expected}\n{problems:#?}");
    }
    assert_eq!(problems.len(), 6, "{problems:#?}");

    // A glob in lib.rs: its names cannot be followed.
    let mut glob = clean.clone();
    let (k, v) = root("pub mod harness; pub mod model; pub mod util;\npub use harness::{run as run_suite, Suite};\npub use util::error::{self, Error};\npub use model::*;");
    glob.insert(k, v);
    assert_eq!(
        violations(&layers, &glob),
        ["src/lib.rs:4: the glob model::* hides which module each name comes from"]
    );
}

/// The folders ARCHITECTURE.md's table of folders has a line for, as written
/// (`src/net/http`, without the slash), in its order.
fn folder_lines(architecture: &str) -> Vec<String> {
    architecture
        .lines()
        .filter_map(|l| l.strip_prefix("| `src/"))
        .filter_map(|l| l.split('`').next())
        .map(|p| format!("src/{}", p.trim_end_matches('/')))
        .collect()
}

/// Every folder under src/ (`src/net/http`), src/ itself left out.
fn src_folders() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![Path::new(REPO).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                let shown = path.strip_prefix(REPO).unwrap().to_string_lossy();
                out.insert(shown.into_owned());
                stack.push(path);
            }
        }
    }
    out
}

/// Where ARCHITECTURE.md's folder `lines` and the `folders` of src/ differ: a folder
/// without a line, a line for no folder, and a folder with two.
fn folder_problems(lines: &[String], folders: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for folder in folders {
        if !lines.contains(folder) {
            problems.push(format!(
                "{folder}/ has no line in ARCHITECTURE.md's table of folders: add one, what it is for"
            ));
        }
    }
    let mut seen = BTreeSet::new();
    for line in lines {
        if !folders.contains(line) {
            problems.push(format!(
                "ARCHITECTURE.md has a line for {line}/, which is no folder of src/"
            ));
        } else if !seen.insert(line) {
            problems.push(format!("ARCHITECTURE.md has two lines for {line}/"));
        }
    }
    problems
}

/// The files of `files` (as [`source_files`] gives them) that do not open with a `//!`
/// doc that says something: the only description of a file is its own.
fn undocumented(files: &BTreeMap<Vec<String>, (PathBuf, String)>) -> Vec<String> {
    files
        .values()
        .filter(|(_, text)| {
            let first = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && !l.starts_with("#!["));
            !first
                .and_then(|l| l.strip_prefix("//!"))
                .is_some_and(|doc| doc.chars().any(char::is_alphanumeric))
        })
        .map(|(path, _)| {
            format!(
                "{} has no //! doc at its top: say there what the file is for (its one home)",
                path.display()
            )
        })
        .collect()
}

#[test]
fn architecture_md_has_a_line_for_each_folder_of_src_and_no_other() {
    let architecture = std::fs::read_to_string(Path::new(REPO).join("ARCHITECTURE.md")).unwrap();
    let lines = folder_lines(&architecture);
    let folders = src_folders();
    assert!(folders.len() > 10, "found only {folders:?} under src/");
    let problems = folder_problems(&lines, &folders);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_file_under_src_opens_with_its_own_doc() {
    let files = source_files();
    assert!(
        files.len() > 50,
        "found only {} files under src/",
        files.len()
    );
    let problems = undocumented(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The two checks above, on made-up input: each fault they exist for is found.
#[test]
fn the_folder_and_doc_checks_find_a_missing_line_a_stale_one_and_a_file_without_a_doc() {
    let architecture = "| folder | what it is for |\n| --- | --- |\n\
        | `src/bin/` | the binaries |\n| `src/gone/` | a folder since removed |\n\
        | `src/net/http/` | the client |\n| `src/bin/` | again |\n";
    let lines = folder_lines(architecture);
    assert_eq!(lines, ["src/bin", "src/gone", "src/net/http", "src/bin"]);
    let folders: BTreeSet<String> = ["src/bin", "src/net", "src/net/http"]
        .map(String::from)
        .into();
    assert_eq!(
        folder_problems(&lines, &folders),
        [
            "src/net/ has no line in ARCHITECTURE.md's table of folders: add one, what it is for",
            "ARCHITECTURE.md has a line for src/gone/, which is no folder of src/",
            "ARCHITECTURE.md has two lines for src/bin/",
        ]
    );

    let files: BTreeMap<_, _> = [
        made_up("a", "//! What a is for.\nfn f() {}"),
        made_up("b", "\n#![allow(dead_code)]\n//! What b is for.\n"),
        made_up("c", "/// An item's doc, not the file's.\nfn f() {}"),
        made_up("d", "//!\n//! Text after an empty first line.\n"),
        made_up("e", ""),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        undocumented(&files),
        [
            "src/c.rs has no //! doc at its top: say there what the file is for (its one home)",
            "src/d.rs has no //! doc at its top: say there what the file is for (its one home)",
            "src/e.rs has no //! doc at its top: say there what the file is for (its one home)",
        ]
    );
}
