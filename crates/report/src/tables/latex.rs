//! A table as LaTeX: `booktabs` rules, text columns left-aligned, number columns
//! right-aligned with the same decimals down a column (so decimal points line up), intervals
//! written `low--high`, and statuses as superscript marks explained under the table.
//!
//! A file is one `tabular` and its notes, to `\input` inside the paper's own `table`
//! environment (the caption is the paper's); it needs `\usepackage{booktabs}` and nothing
//! else.

use std::fmt::Write as _;

/// How a column is aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Names: left.
    Text,
    /// Numbers and intervals: right, so fixed decimals line up.
    Number,
}

/// Superscript marks for statuses, given in order of first use (`a`, `b`…) with the note
/// each stands for.
#[derive(Default)]
pub(crate) struct Marks {
    notes: Vec<(String, String)>,
}

impl Marks {
    /// The mark for `key` (its note `note`), as LaTeX that takes no width, so marked and
    /// unmarked numbers stay aligned.
    pub(crate) fn mark(&mut self, key: &str, note: &str) -> String {
        let index = match self.notes.iter().position(|(k, _)| k == key) {
            Some(index) => index,
            None => {
                self.notes.push((key.to_string(), note.to_string()));
                self.notes.len() - 1
            }
        };
        format!("\\rlap{{\\textsuperscript{{{}}}}}", mark_letter(index))
    }
}

/// `a`…`z`, then `aa`, `ab`…
fn mark_letter(index: usize) -> String {
    let letter = |i: usize| char::from(b'a' + (i % 26) as u8);
    if index < 26 {
        letter(index).to_string()
    } else {
        format!("{}{}", letter(index / 26 - 1), letter(index))
    }
}

/// One table: what it shows (a comment line), its columns, rows of LaTeX cells and marks.
pub(crate) struct LatexTable {
    pub(crate) what: String,
    pub(crate) columns: Vec<(String, Align)>,
    pub(crate) rows: Vec<Vec<String>>,
    pub(crate) marks: Marks,
    /// A sentence under the table (units, what a mean is over), LaTeX already.
    pub(crate) note: String,
}

impl LatexTable {
    pub(crate) fn new(what: &str, columns: &[(&str, Align)]) -> LatexTable {
        LatexTable {
            what: what.to_string(),
            columns: columns
                .iter()
                .map(|(head, align)| (escape(head), *align))
                .collect(),
            rows: Vec::new(),
            marks: Marks::default(),
            note: String::new(),
        }
    }

    /// The file's text.
    pub(crate) fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "% {}", self.what.replace('\n', " "));
        let _ = writeln!(
            out,
            "% Written by gapbench; needs \\usepackage{{booktabs}}."
        );
        let spec: String = self
            .columns
            .iter()
            .map(|(_, align)| match align {
                Align::Text => 'l',
                Align::Number => 'r',
            })
            .collect();
        let _ = writeln!(out, "\\begin{{tabular}}{{@{{}}{spec}@{{}}}}");
        let _ = writeln!(out, "\\toprule");
        let heads: Vec<&str> = self.columns.iter().map(|(h, _)| h.as_str()).collect();
        let _ = writeln!(out, "{} \\\\", heads.join(" & "));
        let _ = writeln!(out, "\\midrule");
        for row in &self.rows {
            let _ = writeln!(out, "{} \\\\", row.join(" & "));
        }
        let _ = writeln!(out, "\\bottomrule");
        let _ = writeln!(out, "\\end{{tabular}}");
        let notes: Vec<String> = self
            .marks
            .notes
            .iter()
            .enumerate()
            .map(|(i, (_, note))| {
                format!("\\textsuperscript{{{}}}\\,{}", mark_letter(i), escape(note))
            })
            .chain((!self.note.is_empty()).then(|| self.note.clone()))
            .collect();
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "\\par\\smallskip{{\\footnotesize {}\\par}}",
                notes.join("; ")
            );
        }
        out
    }
}

/// `text` with LaTeX's special characters escaped and the few non-ASCII signs gapbench
/// writes (dashes, ×, ÷, σ, ≤, ∞, ±) spelled in LaTeX; any other non-ASCII character
/// becomes `?`, which every LaTeX input encoding can typeset.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' | '}' | '$' | '&' | '#' | '_' | '%' => {
                out.push('\\');
                out.push(c);
            }
            '^' => out.push_str("\\textasciicircum{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '<' => out.push_str("\\textless{}"),
            '>' => out.push_str("\\textgreater{}"),
            '|' => out.push_str("\\textbar{}"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            '×' => out.push_str("$\\times$"),
            '÷' => out.push_str("$\\div$"),
            'σ' => out.push_str("$\\sigma$"),
            '≤' => out.push_str("$\\le$"),
            '∞' => out.push_str("$\\infty$"),
            '±' => out.push_str("$\\pm$"),
            c if c.is_ascii() => out.push(c),
            _ => out.push('?'),
        }
    }
    out
}

/// `value` with `decimals` decimals, `--` when absent or not finite (a minus sign as LaTeX
/// math, so it is as wide as a plus).
pub(crate) fn number(value: Option<f64>, decimals: usize) -> String {
    match value {
        Some(v) if v.is_finite() => {
            let text = format!("{v:.decimals$}");
            match text.strip_prefix('-') {
                Some(rest) if rest.chars().any(|c| c != '0' && c != '.') => format!("$-${rest}"),
                Some(rest) => rest.to_string(),
                None => text,
            }
        }
        _ => "--".to_string(),
    }
}

/// `low--high` (one number when they are equal at the decimals shown).
pub(crate) fn interval(low: Option<f64>, high: Option<f64>, decimals: usize) -> String {
    let (low, high) = (number(low, decimals), number(high, decimals));
    if low == high {
        low
    } else {
        format!("{low}--{high}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_characters_are_escaped() {
        assert_eq!(escape("pwr:200,fgd:800"), "pwr:200,fgd:800");
        assert_eq!(escape("a_b 5 % & #1"), "a\\_b 5 \\% \\& \\#1");
        assert_eq!(
            escape("1.2–3 × σ ≤ ∞"),
            "1.2--3 $\\times$ $\\sigma$ $\\le$ $\\infty$"
        );
        assert_eq!(
            escape("expr:{free_gpu}^2"),
            "expr:\\{free\\_gpu\\}\\textasciicircum{}2"
        );
    }

    #[test]
    fn numbers_intervals_and_marks() {
        assert_eq!(number(Some(-1.234), 2), "$-$1.23");
        assert_eq!(number(Some(-0.001), 2), "0.00");
        assert_eq!(number(None, 2), "--");
        assert_eq!(interval(Some(1.0), Some(2.5), 2), "1.00--2.50");
        assert_eq!(interval(Some(1.0), Some(1.001), 2), "1.00");
        let mut marks = Marks::default();
        let a = marks.mark("time_limit", "the clock stopped the solve");
        let b = marks.mark("lp_bound", "LP bound");
        assert_eq!(marks.mark("time_limit", "ignored"), a);
        assert!(a.contains("{a}") && b.contains("{b}"));
        assert_eq!(mark_letter(27), "ab");
    }

    #[test]
    fn a_table_has_booktabs_rules_and_its_notes() {
        let mut table =
            LatexTable::new("test", &[("policy", Align::Text), ("gap %", Align::Number)]);
        let mark = table
            .marks
            .mark("time_limit", "time_limit: the clock stopped");
        table
            .rows
            .push(vec!["FGD".into(), format!("1.00--2.00{mark}")]);
        let text = table.render();
        assert!(text.contains("\\begin{tabular}{@{}lr@{}}"));
        assert!(text.contains("policy & gap \\% \\\\\n\\midrule\nFGD & 1.00--2.00"));
        assert!(text.contains("\\bottomrule\n\\end{tabular}"));
        assert!(text.contains("\\textsuperscript{a}\\,time\\_limit: the clock stopped"));
    }
}
