//! One declaration per results file: [`declare_row!`] turns a row struct whose fields carry
//! a spelling and a unit (and a doc comment: the column's meaning) into the struct itself,
//! its CSV header, its CSV line and its column documentation (`docs/results.md`), so that
//! none of the three can drift from the others.
//!
//! Every number is spelled by one of two rules: fixed decimals ([`crate::csv_text::number`])
//! or the shortest text that reads back exactly ([`shortest`], what serde's CSV writer wrote
//! before the files it wrote were declared here; kept so their bytes did not change).

use crate::csv_text::{field, fixed_value, number};

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

    /// Pushes `value`, the field of `row` in this column, onto `columns` (its own column
    /// first); returns how many columns it filled.
    pub fn push<T: CsvCell + ?Sized>(
        &self,
        row: &R,
        value: &T,
        columns: &mut [Vec<Cell>],
    ) -> usize {
        match self {
            Format::Computed(text, _) => {
                columns[0].push(Cell::text(text(row)));
                1
            }
            _ => value.push_cells(self.spelling(row), columns),
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

/// A value as a typed column holds it (the Python binding's DataFrames): the value its
/// CSV text reads back as, fixed decimals rounded as the text rounds them.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// An empty field.
    Missing,
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Cell {
    /// Text, empty being missing (as the empty field reads back).
    pub fn text(text: String) -> Cell {
        if text.is_empty() {
            Cell::Missing
        } else {
            Cell::Text(text)
        }
    }
}

/// A value that can stand in a CSV column.
pub trait CsvCell {
    /// Appends the value spelled `spelling` to `out`.
    fn write_cell(&self, spelling: Spelling, out: &mut String);

    /// Pushes the value onto its column (`columns[0]`; a nested row's columns in order);
    /// returns how many columns it filled. By default its text as written, unquoted.
    fn push_cells(&self, spelling: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        let mut text = String::new();
        self.write_cell(spelling, &mut text);
        if let Some(quoted) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
            text = quoted.replace("\"\"", "\"");
        }
        columns[0].push(Cell::text(text));
        1
    }

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

    /// Pushes the row's fields onto `columns` (one per column, in order); returns how many
    /// columns it filled.
    fn push_fields(&self, columns: &mut [Vec<Cell>]) -> usize;

    /// Rows as typed columns, `(name, values)` in order: what the CSV text reads back as,
    /// without writing it.
    fn cells(rows: &[Self]) -> Vec<(&'static str, Vec<Cell>)>
    where
        Self: Sized,
    {
        let names = Self::columns();
        let mut columns: Vec<Vec<Cell>> = names
            .iter()
            .map(|_| Vec::with_capacity(rows.len()))
            .collect();
        for row in rows {
            row.push_fields(&mut columns);
        }
        names.iter().map(|c| c.name).zip(columns).collect()
    }

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

    fn push_cells(&self, spelling: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        let value = match spelling {
            Spelling::Fixed(decimals) => fixed_value(*self, decimals),
            // The shortest exact text reads back as the value itself.
            _ => *self,
        };
        columns[0].push(Cell::Float(value));
        1
    }
}

impl CsvCell for str {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        match spelling {
            Spelling::Raw | Spelling::Plain => out.push_str(self),
            _ => out.push_str(&field(self)),
        }
    }

    fn push_cells(&self, _: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        columns[0].push(Cell::text(self.to_string()));
        1
    }
}

impl CsvCell for String {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        self.as_str().write_cell(spelling, out);
    }

    fn push_cells(&self, spelling: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        self.as_str().push_cells(spelling, columns)
    }
}

impl CsvCell for &str {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        (**self).write_cell(spelling, out);
    }

    fn push_cells(&self, spelling: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        (**self).push_cells(spelling, columns)
    }
}

macro_rules! plain_cells {
    ($($ty:ty),*) => {$(
        impl CsvCell for $ty {
            fn write_cell(&self, _: Spelling, out: &mut String) {
                use std::fmt::Write as _;
                write!(out, "{self}").expect("writing to a String cannot fail");
            }

            fn push_cells(&self, _: Spelling, columns: &mut [Vec<Cell>]) -> usize {
                // Counts and watts; one past i64 (never written) would read back as text.
                columns[0].push(i64::try_from(*self).map_or_else(|_| Cell::text(self.to_string()), Cell::Int));
                1
            }
        }
    )*};
}

plain_cells!(u8, u16, u32, u64, usize, i64);

impl CsvCell for bool {
    fn write_cell(&self, _: Spelling, out: &mut String) {
        out.push_str(if *self { "true" } else { "false" });
    }

    fn push_cells(&self, _: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        columns[0].push(Cell::Bool(*self));
        1
    }
}

/// Absent: an empty field.
impl<T: CsvCell> CsvCell for Option<T> {
    fn write_cell(&self, spelling: Spelling, out: &mut String) {
        if let Some(value) = self {
            value.write_cell(spelling, out);
        }
    }

    fn push_cells(&self, spelling: Spelling, columns: &mut [Vec<Cell>]) -> usize {
        match self {
            Some(value) => value.push_cells(spelling, columns),
            None => {
                // A missing nested row leaves each of its columns empty.
                let width = T::cell_columns(Column {
                    name: "",
                    unit: "",
                    spelling: String::new(),
                    meaning: String::new(),
                })
                .len();
                for column in &mut columns[..width] {
                    column.push(Cell::Missing);
                }
                width
            }
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

            fn push_fields(&self, columns: &mut [Vec<$crate::row::Cell>]) -> usize {
                let mut formats = $name::column_formats().into_iter();
                let mut filled = 0;
                $(
                    let format = formats.next().expect("one format per field");
                    filled += format.push(self, &self.$field, &mut columns[filled..]);
                )+
                filled
            }
        }

        impl $crate::row::CsvCell for $name {
            fn write_cell(&self, _: $crate::row::Spelling, out: &mut String) {
                $crate::row::CsvRow::write_fields(self, out);
            }

            fn cell_columns(_: $crate::row::Column) -> Vec<$crate::row::Column> {
                <$name as $crate::row::CsvRow>::columns()
            }

            fn push_cells(
                &self,
                _: $crate::row::Spelling,
                columns: &mut [Vec<$crate::row::Cell>],
            ) -> usize {
                $crate::row::CsvRow::push_fields(self, columns)
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

    /// A field of a written CSV text as its cell: what reading the text back gives.
    fn read_back(field: &str, cell: &Cell) -> Cell {
        match cell {
            _ if field.is_empty() => Cell::Missing,
            Cell::Int(_) => Cell::Int(field.parse().unwrap()),
            Cell::Float(_) => Cell::Float(field.parse().unwrap()),
            Cell::Bool(_) => Cell::Bool(field.parse().unwrap()),
            Cell::Text(_) | Cell::Missing => Cell::Text(field.to_string()),
        }
    }

    #[test]
    fn cells_are_what_the_csv_text_reads_back_as() {
        let row = |event: usize, pct: f64, node: &str| crate::CurveRow {
            event,
            task: "pod-1".into(),
            outcome: "placed",
            reason: "",
            node: node.into(),
            devices: "0|3".into(),
            arrived_gpu_milli: 1500,
            arrived_pct: pct,
            used_gpu_milli: 1000,
            alloc_pct: pct / 3.0,
            frag_gpu_milli: 2.675,
            frag_ratio_pct: f64::INFINITY,
            q124_pct: -0.00004,
            idle_gpu_milli: 1e17 / 7.0,
            power_cpu_w: -3,
            power_gpu_w: 400,
            power_total_w: 397,
            used_nodes: 2,
            used_gpus: 16,
            arrived_cpu_milli: 4000,
            used_cpu_milli: 2000,
            failed_tasks: 0,
        };
        let rows = [row(0, 12.345_65, "node-a"), row(1, 1.0 / 3.0, "")];
        let text = crate::CurveRow::csv(&rows);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let records: Vec<_> = reader.records().map(Result::unwrap).collect();
        let columns = crate::CurveRow::cells(&rows);
        assert_eq!(columns.len(), crate::CurveRow::columns().len());
        for (index, (name, cells)) in columns.iter().enumerate() {
            assert_eq!(*name, crate::CurveRow::columns()[index].name);
            for (record, cell) in records.iter().zip(cells) {
                let expected = read_back(&record[index], cell);
                match (&expected, cell) {
                    (Cell::Float(a), Cell::Float(b)) => {
                        assert_eq!(a.to_bits(), b.to_bits(), "{name}")
                    }
                    _ => assert_eq!(&expected, cell, "{name}"),
                }
            }
        }
        assert_eq!(columns[4].1, [Cell::Text("node-a".into()), Cell::Missing]);
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
