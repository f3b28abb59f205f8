//! CSV text as gapbench writes it: one quoting rule and one number rule for every file.

/// A CSV field, quoted when it holds a comma, quote or line break (policy mixes such as
/// `pwr:200,fgd:800`, solver error messages), with quotes doubled (RFC 4180).
pub fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A number with `decimals` decimals; `inf`, `-inf` and `nan` for the non-finite (Rust's
/// `f64` parser reads all three back).
pub fn number(value: f64, decimals: usize) -> String {
    if value.is_infinite() {
        if value > 0.0 { "inf" } else { "-inf" }.to_string()
    } else if value.is_nan() {
        "nan".to_string()
    } else {
        format!("{value:.decimals$}")
    }
}

/// An optional number: empty when absent.
pub fn optional_number(value: Option<f64>, decimals: usize) -> String {
    value.map_or(String::new(), |v| number(v, decimals))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_separators_are_quoted_and_read_back() {
        for text in ["fgd", "pwr:200,fgd:800", "error: \"x\"", "two\nlines", ""] {
            let line = format!("{},end\n", field(text));
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes());
            let record = reader.records().next().unwrap().unwrap();
            assert_eq!(&record[0], text);
            assert_eq!(&record[1], "end");
        }
    }

    #[test]
    fn non_finite_numbers_read_back() {
        for v in [f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(number(v, 2).parse::<f64>().unwrap(), v);
        }
        assert!(number(f64::NAN, 2).parse::<f64>().unwrap().is_nan());
        assert_eq!(number(1.23456, 2), "1.23");
        assert_eq!(optional_number(None, 2), "");
    }
}
