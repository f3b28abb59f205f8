//! Property test of the bench spec loader, fed with the shipped specs (`workloads/*.toml`)
//! mutated line by line and byte by byte (10,000 cases): it never panics; a spec it accepts
//! survives a TOML round trip unchanged (so no value it took is NaN or otherwise unequal to
//! itself) and expands to at most a million seeds; a spec it refuses is refused naming the
//! file. The test binary's allocator refuses anything past 1 GiB, so a value that makes
//! the loader allocate in proportion to it fails the test.

use std::path::Path;

use gapbench::bench::spec::BenchSpec;
use proptest::prelude::*;

#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, 1 << 30);

/// The shipped specs' text, read once.
fn shipped() -> &'static [String] {
    static SPECS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../workloads");
        ["paper.toml", "quick.toml", "eaco.toml", "full-cluster.toml"]
            .iter()
            .map(|name| std::fs::read_to_string(root.join(name)).unwrap())
            .collect()
    })
}

/// A TOML value as a careless edit or a hostile user might write it.
fn odd_value() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["nan", "-nan", "inf", "-inf", "-1", "0", "-0.0", "1e308", "1e-300"])
            .prop_map(String::from),
        1 => any::<i64>().prop_map(|v| v.to_string()),
        1 => (0u32..200).prop_map(|v| v.to_string()),
        1 => any::<f64>().prop_map(|v| format!("{v:?}")),
        4 => prop::sample::select(vec![
            "nan", "inf", "-inf", "-1", "0", "0.0", "1e308", "-0.0", "18446744073709551615",
            "\"0..18446744073709551615\"", "\"42..41\"", "\"1..3\"", "\"x..y\"", "[42, 42]",
            "[]", "[0]", "[-1]", "[1e9]", "\"\"", "\"fgd\"", "[\"fgd\", \"fgd\"]",
            "[\"pwr:4294967296\"]", "[\"nosuch\"]", "[\"default\", \"gpushare4O\"]",
            "[\"eaco-r\"]", "[\"always-on\", \"never\"]", "{ a = 1 }", "true",
        ])
        .prop_map(String::from),
    ]
}

#[derive(Debug, Clone)]
enum Edit {
    /// Replace the `n`th value (a leaf, array or table, depth first) by another.
    Value(usize, String),
    /// Replace the `n`th leaf (neither a table nor an array) by another value.
    Leaf(usize, String),
    /// Remove the `n`th value from its table or array.
    Remove(usize),
    /// Replace a character of the TOML text: syntax errors.
    Byte(usize, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        2 => (any::<usize>(), odd_value()).prop_map(|(n, v)| Edit::Value(n, v)),
        8 => (any::<usize>(), odd_value()).prop_map(|(n, v)| Edit::Leaf(n, v)),
        2 => any::<usize>().prop_map(Edit::Remove),
        1 => (any::<usize>(), prop::sample::select(vec!['=', '[', ']', '"', '\n', '#', '0', 'x', '.', ',']))
            .prop_map(|(at, c)| Edit::Byte(at, c)),
    ]
}

/// Every value below `value`, depth first, as a path of keys and indices, and whether it
/// is a leaf (neither a table nor an array).
fn paths(value: &toml::Value, path: Vec<PathStep>, out: &mut Vec<(Vec<PathStep>, bool)>) {
    let children: Vec<(PathStep, &toml::Value)> = match value {
        toml::Value::Table(table) => table
            .iter()
            .map(|(k, v)| (PathStep::Key(k.clone()), v))
            .collect(),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (PathStep::Index(i), v))
            .collect(),
        _ => Vec::new(),
    };
    for (step, child) in children {
        let mut next = path.clone();
        next.push(step);
        let leaf = !matches!(child, toml::Value::Table(_) | toml::Value::Array(_));
        out.push((next.clone(), leaf));
        paths(child, next, out);
    }
}

#[derive(Debug, Clone)]
enum PathStep {
    Key(String),
    Index(usize),
}

/// The parent of `path`'s last step, and that step.
fn parent<'v>(root: &'v mut toml::Value, path: &[PathStep]) -> (&'v mut toml::Value, PathStep) {
    let (last, init) = path.split_last().unwrap();
    let mut node = root;
    for step in init {
        node = match step {
            PathStep::Key(k) => &mut node[k.as_str()],
            PathStep::Index(i) => &mut node[*i],
        };
    }
    (node, last.clone())
}

fn apply(text: &str, edit: &Edit) -> String {
    if let Edit::Byte(at, c) = edit {
        let mut chars: Vec<char> = text.chars().collect();
        if !chars.is_empty() {
            let i = at % chars.len();
            chars[i] = *c;
        }
        return chars.into_iter().collect();
    }
    let Ok(mut root) = toml::from_str::<toml::Value>(text) else {
        return text.to_string();
    };
    let mut all = Vec::new();
    paths(&root, Vec::new(), &mut all);
    if all.is_empty() {
        return text.to_string();
    }
    let leaves: Vec<Vec<PathStep>> = all
        .iter()
        .filter(|(_, leaf)| *leaf)
        .map(|(path, _)| path.clone())
        .collect();
    let all: Vec<Vec<PathStep>> = all.into_iter().map(|(path, _)| path).collect();
    match edit {
        Edit::Value(n, value) | Edit::Leaf(n, value) => {
            let pool = if matches!(edit, Edit::Leaf(..)) && !leaves.is_empty() {
                &leaves
            } else {
                &all
            };
            let path = &pool[n % pool.len()];
            let (node, step) = parent(&mut root, path);
            let new: toml::Value = toml::from_str::<toml::Table>(&format!("v = {value}"))
                .map(|t| t["v"].clone())
                .unwrap_or_else(|_| toml::Value::String(value.clone()));
            match step {
                PathStep::Key(k) => node[k.as_str()] = new,
                PathStep::Index(i) => node[i] = new,
            }
        }
        Edit::Remove(n) => {
            let path = &all[n % all.len()];
            let (node, step) = parent(&mut root, path);
            match (node, step) {
                (toml::Value::Table(t), PathStep::Key(k)) => {
                    t.remove(&k);
                }
                (toml::Value::Array(a), PathStep::Index(i)) => {
                    a.remove(i);
                }
                _ => {}
            }
        }
        Edit::Byte(..) => unreachable!(),
    }
    toml::to_string(&root).unwrap_or_else(|_| text.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn specs_round_trip_or_are_refused_naming_the_file(
        which in 0usize..4,
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let text = edits.iter().fold(shipped()[which].clone(), |t, e| apply(&t, e));
        let path = Path::new("fuzzed.toml");
        match BenchSpec::parse(path, &text) {
            Err(error) => {
                let message = format!("{error:#}");
                prop_assert!(message.starts_with("fuzzed.toml"), "{}", message);
            }
            Ok(spec) => {
                let again: BenchSpec = toml::from_str(&toml::to_string(&spec).unwrap()).unwrap();
                prop_assert_eq!(&again, &spec, "{}", text);
                for seeds in [Some(&spec.seeds), spec.replay.as_ref().map(|r| &r.seeds)]
                    .into_iter()
                    .flatten()
                {
                    prop_assert!(seeds.expand().unwrap().len() <= 1_000_000);
                }
            }
        }
    }
}
