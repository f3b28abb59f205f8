//! Serde for numbers that may be infinite or NaN (an unbounded gap, a failed front point).
//! JSON has no such numbers — serde_json would write `null` and then fail to read it back,
//! so a finished cell would look unfinished forever. Finite values stay JSON numbers (exact
//! round trip); the others are the strings `inf`, `-inf`, `nan`. In CSV every value is text
//! and the same strings are what [`crate::csv_text::number`] writes.
//!
//! Use `#[serde(with = "float_text")]` on `f64` and `#[serde(with = "float_text::option")]`
//! on `Option<f64>` fields.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;

pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.is_finite() {
        serializer.serialize_f64(*value)
    } else {
        serializer.serialize_str(&crate::csv_text::number(*value, 0))
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    deserializer.deserialize_any(NumberVisitor)
}

struct NumberVisitor;

impl Visitor<'_> for NumberVisitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, `inf`, `-inf` or `nan`")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        v.trim()
            .parse()
            .map_err(|_| E::custom(format_args!("{v:?} is not a number")))
    }
}

/// The same for `Option<f64>`: `null` in JSON, an empty field in CSV.
pub mod option {
    use super::*;

    pub fn serialize<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) if v.is_finite() => serializer.serialize_some(v),
            Some(v) => serializer.serialize_some(&crate::csv_text::number(*v, 0)),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        deserializer.deserialize_option(OptionVisitor)
    }

    struct OptionVisitor;

    impl<'de> Visitor<'de> for OptionVisitor {
        type Value = Option<f64>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("nothing, a number, `inf`, `-inf` or `nan`")
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Serialize, Deserialize)]
    struct Sample {
        #[serde(with = "super")]
        value: f64,
        #[serde(with = "super::option")]
        maybe: Option<f64>,
    }

    #[test]
    fn non_finite_values_survive_json() {
        for (value, maybe) in [
            (f64::INFINITY, Some(f64::NEG_INFINITY)),
            (1.25, None),
            (0.1 + 0.2, Some(7.0)),
        ] {
            let text = serde_json::to_string(&Sample { value, maybe }).unwrap();
            let back: Sample = serde_json::from_str(&text).unwrap();
            assert_eq!((back.value, back.maybe), (value, maybe), "{text}");
        }
        let text = serde_json::to_string(&Sample {
            value: f64::NAN,
            maybe: Some(f64::NAN),
        })
        .unwrap();
        let back: Sample = serde_json::from_str(&text).unwrap();
        assert!(back.value.is_nan() && back.maybe.unwrap().is_nan());
    }

    #[test]
    fn csv_fields_read_as_numbers_or_nothing() {
        let text = "value,maybe\n1500,\ninf,2.5\n";
        let rows: Vec<Sample> = csv::Reader::from_reader(text.as_bytes())
            .deserialize()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!((rows[0].value, rows[0].maybe), (1500.0, None));
        assert_eq!((rows[1].value, rows[1].maybe), (f64::INFINITY, Some(2.5)));
    }
}
