//! One declaration per results file: [`declare_row!`] turns a row struct whose fields carry
//! a spelling and a unit (and a doc comment: the column's meaning) into the struct itself,
//! its CSV header, its CSV line and its column documentation (`docs/results.md`), so that
//! none of the three can drift from the others.
//!
//! Every number is spelled by one of two rules: fixed decimals ([`crate::csv_text::number`])
//! or the shortest text that reads back exactly ([`shortest`], what serde's CSV writer wrote
//! before the files it wrote were declared here; kept so their bytes did not change).

use crate::csv_text::{field, number};

/// How a column's values are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// Text, quoted when it holds a comma, quote or line break.
    Text,
    /// Text as it is: names that never hold a separator (trace task and node names).
    Raw,
    /// An integer, a flag (`true`/`false`) or a label, as it displays.
    Plain,
    /// A number with this many decimals; `inf`, `-inf`, `nan` for the non-finite.
    Fixed(usize),
    /// The shortest decimal that reads back as the same number (`0.9`, `3600.0`, `1e-7`);
    /// `inf`, `-inf`, `NaN` for the non-finite.
    Shortest,
    /// Another declared row whose columns stand here in its order.
    Nested,
}

/// A column's spelling as declared: fixed, or taken from the row (a gap row's values have
/// its objective's decimals).
pub enum Format<R> {
    Text,
    Raw,
    Plain,
    Fixed(usize),
    Shortest,
    Nested,
    /// Fixed decimals that depend on the row; the text says which (for the documentation).
    FixedBy(fn(&R) -> usize, &'static str),
    /// Text computed from the row (a label standing for an absent value); the text says
    /// what (for the documentation).
    Computed(fn(&R) -> String, &'static str),
}

impl<R> Format<R> {
    /// The spelling of this column in `row`.
    pub fn spelling(&self, row: &R) -> Spelling {
        match self {
            Format::Text => Spelling::Text,
            Format::Raw => Spelling::Raw,
            Format::Plain => Spelling::Plain,
            Format::Fixed(decimals) => Spelling::Fixed(*decimals),
            Format::Shortest => Spelling::Shortest,
            Format::Nested => Spelling::Nested,
            Format::FixedBy(decimals, _) => Spelling::Fixed(decimals(row)),
            Format::Computed(..) => Spelling::Text,
        }
    }

    /// Appends `value`, the field of `row` in this column, to `out`.
    pub fn write<T: CsvCell + ?Sized>(&self, row: &R, value: &T, out: &mut String) {
        match self {
            Format::Computed(text, _) => out.push_str(&field(&text(row))),
            _ => value.write_cell(self.spelling(row), out),
        }
    }

    /// How the documentation describes the spelling.
    pub fn describe(&self) -> String {
        match self {
            Format::Text => "text".into(),
            Format::Raw => "name".into(),
            Format::Plain => "integer or label".into(),
            Format::Fixed(decimals) => format!("{decimals} decimals"),
            Format::Shortest => "shortest exact".into(),
            Format::Nested => String::new(),
            Format::FixedBy(_, text) | Format::Computed(_, text) => (*text).into(),
        }
    }
}

/// One column of a results file, as the documentation lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: &'static str,
    /// The unit (`W`, `s`, `kWh`, `%`, `milli-GPU`…); empty for names, labels and counts.
    pub unit: &'static str,
    /// How values are spelled (`4 decimals`, `text`…).
    pub spelling: String,
    /// What the column holds: the field's doc comment.
    pub meaning: String,
}

/// A value that can stand in a CSV column.
pub trait CsvCell {
    /// Appends the value spelled `spelling` to `out`.
    fn write_cell(&self, spelling: Spelling, out: &mut String);

    /// The columns this value fills: one, or a nested row's.
    fn cell_columns(column: Column) -> Vec<Column> {
        vec![column]
    }
}

/// A declared row: its file, its columns and its line ([`declare_row!`] implements it).
pub trait CsvRow {
    /// The file the row is a line of.
    const FILE: &'static str;
    /// What a row is, for the documentation: the struct's doc comment.
    const ABOUT: &'static [&'static str];

    /// Every column in order, nested rows' columns in place.
    fn columns() -> Vec<Column>;

    /// Appends the row's fields, comma-separated, to `out`.
    fn write_fields(&self, out: &mut String);

    /// The header line (without line break).
    fn csv_header() -> String {
        let names: Vec<&str> = Self::columns().iter().map(|c| c.name).collect();
        names.join(",")
    }

    /// The row as one CSV line (without line break).
    fn csv_line(&self) -> String {
        let mut out = String::new();
        self.write_fields(&mut out);
        out
    }

    /// A whole file: the header and one line per row.
    fn csv(rows: &[Self]) -> String
    where
        Self: Sized,
    {
        let mut out = Self::csv_header();
        out.push('\n');
        for row in rows {
            row.write_fields(&mut out);
            out.push('\n');
        }
        out
    }
}

/// A file's text as serde's CSV writer, which wrote some files first, left it: nothing at
/// all for no rows, else the header and one line per row.
pub fn rows_to_csv<T: CsvRow>(rows: &[T]) -> Vec<u8> {
    if rows.is_empty() {
        return Vec::new();
    }
    T::csv(rows).into_bytes()
}

/// The shortest decimal that reads back as `value` (Ryū, as serde's CSV writer spells it).
pub fn shortest(value: f64) -> String {
    ryu::Buffer::new().format(value).to_string()
}

fn write_number(value: f64, spelling: Spelling, out: &mut String) {
    match spelling {
        Spelling::Fixed(decimals) => out.push_str(&number(value, decimals)),
        Spelling::Shortest => out.push_str(ryu::Buffer::new().format(value)),
        other => panic!("a number cannot be spelled {other:?}"),
    }
}

impl CsvCell for f64 {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        write_number(*self, spelling, out);
    }
}

impl CsvCell for str {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        match spelling {
            Spelling::Raw | Spelling::Plain => out.push_str(self),
            _ => out.push_str(&field(self)),
        }
    }
}

impl CsvCell for String {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        self.as_str().write_cell(spelling, out);
    }
}

impl CsvCell for &str {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        (**self).write_cell(spelling, out);
    }
}

macro_rules! plain_cells {
    ($($ty:ty),*) => {$(
        impl CsvCell for $ty {
            fn write_cell(&self, _: Spelling, out: &mut String) {
                use std::fmt::Write as _;
                write!(out, "{self}").expect("writing to a String cannot fail");
            }
        }
    )*};
}

plain_cells!(u8, u16, u32, u64, usize, i64, bool);

/// Absent: an empty field.
impl<T: CsvCell> CsvCell for Option<T> {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        if let Some(value) = self {
            value.write_cell(spelling, out);
        }
    }
}

impl CsvCell for crate::Objective {
    fn write_cell(&self, _: Spelling, out: &mut String) {
        out.push_str(self.name());
    }
}

impl CsvCell for crate::SolveStatus {
    fn write_cell(&self, _: Spelling, out: &mut String) {
        out.push_str(&field(&self.label()));
    }
}

/// Declares a results row: the struct (every field `pub`, its doc comment the column's
/// meaning), its file, and for each field its spelling and unit:
///
/// ```
/// use gapbench_results::declare_row;
///
/// declare_row! {
///     /// One row of `example.csv`.
///     #[derive(Debug, Clone)]
///     pub struct ExampleRow in "example.csv" {
///         /// The trace.
///         trace: String [Text, ""],
///         /// Allocated GPU, % of capacity.
///         alloc_pct: f64 [Fixed(2), "%"],
///     }
/// }
///
/// let row = ExampleRow { trace: "a,b".into(), alloc_pct: 12.5 };
/// assert_eq!(ExampleRow::csv_header(), "trace,alloc_pct");
/// assert_eq!(row.csv_line(), "\"a,b\",12.50");
/// ```
///
/// Spellings are [`Format`]'s variants. Field attributes other than doc comments must be
/// `#[serde(…)]`, after the doc comment.
#[macro_export]
macro_rules! declare_row {
    (
        $(#[doc = $about:literal])+
        #[derive $derive:tt]
        $(#[serde $struct_serde:tt])*
        pub struct $name:ident in $file:literal {
            $(
                $(#[doc = $meaning:literal])+
                $(#[serde $serde:tt])*
                $field:ident : $ty:ty [$format:expr, $unit:literal]
            ),+ $(,)?
        }
    ) => {
        $(#[doc = $about])+
        #[derive $derive]
        $(#[serde $struct_serde])*
        pub struct $name {
            $(
                $(#[doc = $meaning])+
                $(#[serde $serde])*
                pub $field: $ty,
            )+
        }

        impl $name {
            /// This row's spelling of each column, in order.
            #[allow(unused_imports)]
            fn column_formats() -> Vec<$crate::row::Format<$name>> {
                use $crate::row::Format::*;
                vec![$($format),+]
            }

            /// The header line (without line break).
            pub fn csv_header() -> String {
                <$name as $crate::row::CsvRow>::csv_header()
            }

            /// The row as one CSV line (without line break).
            pub fn csv_line(&self) -> String {
                <$name as $crate::row::CsvRow>::csv_line(self)
            }

            /// A whole file: the header and one line per row.
            pub fn csv(rows: &[$name]) -> String {
                <$name as $crate::row::CsvRow>::csv(rows)
            }
        }

        impl $crate::row::CsvRow for $name {
            const FILE: &'static str = $file;
            const ABOUT: &'static [&'static str] = &[$($about),+];

            fn columns() -> Vec<$crate::row::Column> {
                let mut formats = $name::column_formats().into_iter();
                let mut columns = Vec::new();
                $(
                    let format = formats.next().expect("one format per field");
                    columns.extend(<$ty as $crate::row::CsvCell>::cell_columns(
                        $crate::row::Column {
                            name: stringify!($field),
                            unit: $unit,
                            spelling: format.describe(),
                            meaning: $crate::row::join_doc(&[$($meaning),+]),
                        },
                    ));
                )+
                columns
            }

            fn write_fields(&self, out: &mut String) {
                let mut formats = $name::column_formats().into_iter();
                let mut first = true;
                $(
                    if !first {
                        out.push(',');
                    }
                    first = false;
                    let format = formats.next().expect("one format per field");
                    format.write(self, &self.$field, out);
                )+
                let _ = first;
            }
        }

        impl $crate::row::CsvCell for $name {
            fn write_cell(&self, _: $crate::row::Spelling, out: &mut String) {
                $crate::row::CsvRow::write_fields(self, out);
            }

            fn cell_columns(_: $crate::row::Column) -> Vec<$crate::row::Column> {
                <$name as $crate::row::CsvRow>::columns()
            }
        }
    };
}

/// A doc comment's lines as one sentence run (for the documentation's tables).
pub fn join_doc(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|line| line.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_spelled_by_one_of_two_rules() {
        let mut out = String::new();
        1.23456.write_cell(Spelling::Fixed(2), &mut out);
        out.push(',');
        0.9.write_cell(Spelling::Shortest, &mut out);
        out.push(',');
        3600.0.write_cell(Spelling::Shortest, &mut out);
        out.push(',');
        f64::NAN.write_cell(Spelling::Fixed(1), &mut out);
        out.push(',');
        None::<f64>.write_cell(Spelling::Fixed(1), &mut out);
        out.push(',');
        "a,b".write_cell(Spelling::Text, &mut out);
        assert_eq!(out, "1.23,0.9,3600.0,nan,,\"a,b\"");
    }

    #[test]
    fn shortest_is_what_serde_csv_writes() {
        for value in [
            0.9,
            3600.0,
            1e-7,
            1e16,
            123_456.789,
            f64::INFINITY,
            f64::NAN,
            -0.0,
        ] {
            let mut writer = csv::Writer::from_writer(Vec::new());
            writer.serialize([value]).unwrap();
            let serde_text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
            assert_eq!(serde_text.trim_end(), shortest(value));
        }
    }
}
