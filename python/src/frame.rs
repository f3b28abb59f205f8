//! Rows as typed columns for a pandas DataFrame, built in Rust from the rows' declarations
//! (`CsvRow::cells`: each value as its CSV text reads back, fixed decimals rounded alike)
//! instead of writing the CSV text and having pandas parse it, which cost more than the
//! sweep's own text (a sweep's curve is 10,000 rows). The frame equals `pandas.read_csv`
//! of the CLI's file: each column takes the type pandas infers for it — integers (floats
//! when a field is missing), floats, booleans, else text with NaN where missing; a text
//! column whose every value reads as a number becomes numbers, as in pandas.

use gapbench::api::Cell;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// pandas' default NA words (`pandas.read_csv`'s `na_values`), the empty field included.
const NA_WORDS: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];

/// A column's values, typed.
enum Values {
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    /// `None` where the field is missing.
    Text(Vec<Option<String>>),
}

/// An empty field or an NA word; none of those ends in a digit, so numbers are told apart
/// by their last character alone.
fn missing(field: &str) -> bool {
    match field.as_bytes().last() {
        None => true,
        Some(last) if last.is_ascii_digit() => false,
        Some(_) => NA_WORDS.contains(&field),
    }
}

fn boolean(field: &str) -> Option<bool> {
    match field {
        "True" | "TRUE" | "true" => Some(true),
        "False" | "FALSE" | "false" => Some(false),
        _ => None,
    }
}

/// The column's values in the first type all its fields fit (see the module's doc): one
/// pass for integers, a second only for a column that is not.
fn infer(fields: &[&str]) -> Values {
    let mut ints = Vec::with_capacity(fields.len());
    let mut any_missing = false;
    let all_ints = fields.iter().all(|field| {
        if missing(field) {
            any_missing = true;
            ints.push(None);
            return true;
        }
        field.parse::<i64>().map(|v| ints.push(Some(v))).is_ok()
    });
    if all_ints {
        if !any_missing {
            return Values::Int(ints.into_iter().map(|v| v.unwrap_or(0)).collect());
        }
        let value = |v: Option<i64>| v.map_or(f64::NAN, |v| v as f64);
        return Values::Float(ints.into_iter().map(value).collect());
    }
    let mut floats = Vec::with_capacity(fields.len());
    let all_floats = fields.iter().all(|field| {
        if missing(field) {
            floats.push(f64::NAN);
            return true;
        }
        field.parse::<f64>().map(|v| floats.push(v)).is_ok()
    });
    if all_floats {
        return Values::Float(floats);
    }
    if fields.iter().all(|f| boolean(f).is_some()) {
        return Values::Bool(fields.iter().map(|f| boolean(f) == Some(true)).collect());
    }
    let value = |f: &&str| (!missing(f)).then(|| f.to_string());
    Values::Text(fields.iter().map(value).collect())
}

/// Little-endian bytes of fixed-size numbers, for `numpy.frombuffer`.
fn bytes<T: Copy, const N: usize>(values: &[T], to_bytes: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to_bytes(v)).collect()
}

/// A column's values, typed as `pandas.read_csv` would type their text.
fn typed(cells: &[Cell]) -> Values {
    let (mut ints, mut floats, mut bools, mut texts) = (true, true, true, false);
    for cell in cells {
        match cell {
            Cell::Missing => bools = false,
            Cell::Int(_) => bools = false,
            Cell::Float(_) => (ints, bools) = (false, false),
            Cell::Bool(_) => (ints, floats) = (false, false),
            Cell::Text(_) => texts = true,
        }
    }
    if texts {
        let fields: Vec<&str> = cells
            .iter()
            .map(|cell| match cell {
                Cell::Text(text) => text.as_str(),
                _ => "",
            })
            .collect();
        return infer(&fields);
    }
    let missing = cells.contains(&Cell::Missing);
    if ints && !missing {
        return Values::Int(
            cells
                .iter()
                .map(|c| if let Cell::Int(v) = c { *v } else { 0 })
                .collect(),
        );
    }
    if ints || floats {
        let value = |cell: &Cell| match cell {
            Cell::Int(v) => *v as f64,
            Cell::Float(v) => *v,
            _ => f64::NAN,
        };
        return Values::Float(cells.iter().map(value).collect());
    }
    if bools {
        return Values::Bool(cells.iter().map(|c| *c == Cell::Bool(true)).collect());
    }
    // Booleans with missing values: pandas keeps them as objects; as text here.
    let text = |cell: &Cell| match cell {
        Cell::Bool(v) => Some(v.to_string()),
        _ => None,
    };
    Values::Text(cells.iter().map(text).collect())
}

/// `columns` as `(name, dtype, data)`: dtype `"<i8"`, `"<f8"` or `"?"` with the
/// values' bytes, or `"O"` with a list of str (NaN where missing), for `numpy.frombuffer`
/// and `pandas.DataFrame`.
pub fn to_python(
    py: Python<'_>,
    columns: Vec<(&'static str, Vec<Cell>)>,
) -> PyResult<Vec<(&'static str, &'static str, PyObject)>> {
    let (header, columns): (Vec<_>, Vec<_>) = py.allow_threads(|| {
        columns
            .into_iter()
            .map(|(name, cells)| (name, typed(&cells)))
            .unzip()
    });
    let nan = f64::NAN.into_pyobject(py)?.into_any().unbind();
    let mut out = Vec::with_capacity(header.len());
    for (name, values) in header.into_iter().zip(columns) {
        let (dtype, data): (&'static str, PyObject) = match values {
            Values::Int(v) => ("<i8", PyBytes::new(py, &bytes(&v, i64::to_le_bytes)).into()),
            Values::Float(v) => ("<f8", PyBytes::new(py, &bytes(&v, f64::to_le_bytes)).into()),
            Values::Bool(v) => ("?", PyBytes::new(py, &bytes(&v, |b| [u8::from(b)])).into()),
            Values::Text(v) => {
                let items = v.into_iter().map(|value| match value {
                    Some(text) => pyo3::types::PyString::new(py, &text).into_any().unbind(),
                    None => nan.clone_ref(py),
                });
                ("O", PyList::new(py, items)?.into_any().unbind())
            }
        };
        out.push((name, dtype, data));
    }
    Ok(out)
}
