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

/// The number [`number`]'s text reads back as, without writing the text (typed columns,
/// the Python binding's DataFrames): `value` rounded to `decimals` decimals. Away from a
/// tie, `round(value · 10^d) / 10^d` is that number: the product is within half an ULP of
/// the exact one (its fraction further than an ULP from ½), so it rounds to the same integer `n` the text prints, and `n / 10^d`
/// (both exact) is the nearest float to the decimal, as the parser's. Near a tie, or past
/// 2^52, the text is written and parsed.
pub fn fixed_value(value: f64, decimals: usize) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    if !value.is_finite() || decimals > 22 {
        return value;
    }
    let scale = 10f64.powi(decimals as i32);
    let scaled = value * scale;
    let tie_distance = (scaled - scaled.trunc()).abs() - 0.5;
    if scaled.abs() < TWO_52 && tie_distance.abs() > scaled.abs() * f64::EPSILON + 1e-9 {
        return scaled.round() / scale;
    }
    number(value, decimals)
        .parse()
        .expect("a number's text reads back")
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

    #[test]
    fn fixed_values_are_what_the_text_reads_back_as() {
        // Ties and near-ties in binary (x.xx5), large, tiny, negative and signed-zero values.
        let mut values = vec![
            0.125,
            2.675,
            1.005,
            -0.00004,
            -0.0,
            1e15 + 0.3,
            3e17,
            5e-324,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            let exponent = (state % 13) as i32 - 4;
            values.push((unit - 0.3) * 10f64.powi(exponent));
            values.push((unit * 2e4).round() / 2e4 + 5e-5);
        }
        for value in values {
            for decimals in [0, 1, 2, 3, 4, 6] {
                let text: f64 = number(value, decimals).parse().unwrap();
                let fixed = fixed_value(value, decimals);
                assert_eq!(
                    fixed.to_bits(),
                    text.to_bits(),
                    "{value} to {decimals} decimals"
                );
            }
        }
    }
}
