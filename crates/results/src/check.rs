//! What a row read back must satisfy beyond its types: finite numbers in their ranges, a
//! bound on the right side of its incumbent. The rows declare their checks here, next to
//! the schema, so every reader (report, runner, tests) refuses the same edited or corrupt
//! values with the same message, naming the column.

use std::fmt;

/// One column of a row and what is wrong with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnError {
    pub column: &'static str,
    pub message: String,
}

impl fmt::Display for ColumnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column `{}`: {}", self.column, self.message)
    }
}

/// A row whose values can be checked after it was read: `table::read_rows` checks
/// every row and names the file, line and column of the first value out of range.
pub trait CheckedRow {
    fn check(&self) -> Result<(), ColumnError>;
}

/// A [`ColumnError`] for `column`.
pub fn column_error(column: &'static str, message: impl fmt::Display) -> ColumnError {
    ColumnError {
        column,
        message: message.to_string(),
    }
}

/// `value` is a finite number.
pub fn finite(column: &'static str, value: f64) -> Result<(), ColumnError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(column_error(
            column,
            format_args!("{value} is not a finite number"),
        ))
    }
}

/// `value` is a finite number ≥ 0 (energies, powers, durations, counts of milli-GPU).
pub fn non_negative(column: &'static str, value: f64) -> Result<(), ColumnError> {
    finite(column, value)?;
    if value < 0.0 {
        return Err(column_error(column, format_args!("{value} is negative")));
    }
    Ok(())
}

/// [`non_negative`] when present.
pub fn optional_non_negative(column: &'static str, value: Option<f64>) -> Result<(), ColumnError> {
    value.map_or(Ok(()), |v| non_negative(column, v))
}

/// A statistic of a sample that may be empty: `nan` (what the runner writes for an empty
/// sample) or a finite number ≥ 0.
pub fn statistic(column: &'static str, value: f64) -> Result<(), ColumnError> {
    if value.is_nan() {
        Ok(())
    } else {
        non_negative(column, value)
    }
}

/// A bound that may be `inf` (nothing meets its constraints): ≥ 0, never NaN.
pub fn non_negative_or_inf(column: &'static str, value: f64) -> Result<(), ColumnError> {
    if value == f64::INFINITY {
        Ok(())
    } else {
        non_negative(column, value)
    }
}

/// A share of a capacity in percent: finite, within 0–100.
pub fn percent(column: &'static str, value: f64) -> Result<(), ColumnError> {
    finite(column, value)?;
    // The CSVs round to 4 decimals; a share of 100 % never reads above it by more.
    if !(0.0..=100.0 + 1e-6).contains(&value) {
        return Err(column_error(
            column,
            format_args!("{value} is not a percentage within 0–100"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_what_no_run_writes() {
        assert!(finite("x", f64::NAN).is_err());
        assert!(non_negative("x", -0.5).is_err());
        assert!(non_negative("x", 0.0).is_ok());
        assert!(percent("alloc_pct", -50.0).is_err());
        assert!(percent("alloc_pct", 100.5).is_err());
        assert!(percent("alloc_pct", 100.0).is_ok());
        assert!(statistic("mean_jct_s", f64::NAN).is_ok());
        assert!(statistic("mean_jct_s", f64::INFINITY).is_err());
        assert_eq!(
            percent("alloc_pct", -50.0).unwrap_err().to_string(),
            "column `alloc_pct`: -50 is not a percentage within 0–100"
        );
    }
}
