//! Value parsers for number flags: a value the flag cannot mean — not a number, infinite,
//! out of its range — is refused by clap with the flag's name and the range, before
//! anything runs. (NaN compares false with everything, so a later `x > 0.0` test would
//! let it through, or switch a feature off.)

fn number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("`{text}` is not a finite number"))
}

/// A number > 0.
pub fn positive(text: &str) -> Result<f64, String> {
    let x = number(text)?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err(format!("{x} is not positive"))
    }
}

/// A number ≥ 0.
pub fn non_negative(text: &str) -> Result<f64, String> {
    let x = number(text)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(format!("{x} is negative; it takes 0 or more"))
    }
}

/// A share between 0 and 1.
pub fn share(text: &str) -> Result<f64, String> {
    let x = number(text)?;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!("{x} is outside 0..=1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_numbers_and_out_of_range_values_are_refused() {
        assert_eq!(positive("2.5"), Ok(2.5));
        assert_eq!(non_negative("0"), Ok(0.0));
        assert_eq!(share("1"), Ok(1.0));
        for bad in ["NaN", "nan", "inf", "-inf", "x", ""] {
            assert!(positive(bad).is_err() && non_negative(bad).is_err() && share(bad).is_err());
        }
        assert!(positive("0").is_err());
        assert!(non_negative("-1").is_err());
        assert!(share("2").is_err() && share("-0.1").is_err());
    }
}
