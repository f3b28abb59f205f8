//! `mean_grid.csv` by trace: the mean curves every line figure draws.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

/// One CSV file read whole: column positions by header name and records with line numbers.
pub(crate) struct Table {
    pub(crate) path: PathBuf,
    pub(crate) columns: HashMap<String, usize>,
    pub(crate) records: Vec<(u64, csv::StringRecord)>,
}

/// One record of a [`Table`], for typed field access with file-and-line errors.
pub(crate) struct Row<'a> {
    pub(crate) table: &'a Table,
    pub(crate) line: u64,
    pub(crate) record: &'a csv::StringRecord,
}

impl Table {
    /// `None` when the file is absent or has no data row.
    pub(crate) fn read(path: &Path, required: &[&str]) -> Result<Option<Table>> {
        let bytes = match fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .trim(csv::Trim::All)
            .from_reader(bytes.as_slice());
        let header = reader
            .headers()
            .map_err(|e| anyhow!("{}: line 1: {e}", path.display()))?
            .clone();
        let columns: HashMap<String, usize> = header
            .iter()
            .enumerate()
            .map(|(i, name)| (name.to_string(), i))
            .collect();
        for name in required {
            if !columns.contains_key(*name) {
                bail!("{}: line 1: missing column `{name}`", path.display());
            }
        }
        let mut records = Vec::new();
        for result in reader.records() {
            let record = result.map_err(|e| {
                let line = e.position().map_or(0, csv::Position::line);
                anyhow!("{}: line {line}: {e}", path.display())
            })?;
            let line = record.position().map_or(0, csv::Position::line);
            records.push((line, record));
        }
        if records.is_empty() {
            return Ok(None);
        }
        Ok(Some(Table {
            path: path.to_path_buf(),
            columns,
            records,
        }))
    }

    pub(crate) fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.records.iter().map(move |(line, record)| Row {
            table: self,
            line: *line,
            record,
        })
    }
}

impl Row<'_> {
    pub(crate) fn error(&self, message: impl std::fmt::Display) -> anyhow::Error {
        anyhow!(
            "{}: line {}: {message}",
            self.table.path.display(),
            self.line
        )
    }

    pub(crate) fn text(&self, column: &str) -> &str {
        self.table
            .columns
            .get(column)
            .and_then(|&i| self.record.get(i))
            .unwrap_or("")
    }

    /// A non-empty text field.
    pub(crate) fn name(&self, column: &str) -> Result<String> {
        let value = self.text(column);
        if value.is_empty() {
            return Err(self.error(format_args!("column `{column}` is empty")));
        }
        Ok(value.to_string())
    }

    /// A finite number.
    pub(crate) fn number(&self, column: &str) -> Result<f64> {
        self.optional_number(column)?
            .ok_or_else(|| self.error(format_args!("column `{column}` is empty")))
    }

    /// A finite number, or `None` for an empty field.
    pub(crate) fn optional_number(&self, column: &str) -> Result<Option<f64>> {
        match self.number_or_infinity(column)? {
            Some(v) if v.is_infinite() => Err(self.error(format_args!(
                "column `{column}`: {:?} is not a finite number",
                self.text(column)
            ))),
            other => Ok(other),
        }
    }

    /// A number that may be +infinity (`inf`), or `None` for an empty field.
    pub(crate) fn number_or_infinity(&self, column: &str) -> Result<Option<f64>> {
        let text = self.text(column);
        if text.is_empty() {
            return Ok(None);
        }
        match text.parse::<f64>() {
            Ok(v) if v.is_nan() || v == f64::NEG_INFINITY => Err(self.error(format_args!(
                "column `{column}`: {text:?} is not a usable number"
            ))),
            Ok(v) => Ok(Some(v)),
            Err(_) => Err(self.error(format_args!("column `{column}`: {text:?} is not a number"))),
        }
    }
}

/// Mean values at one arrived percent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeanPoint {
    pub(crate) arrived_pct: f64,
    pub(crate) alloc_pct: f64,
    pub(crate) frag_ratio_pct: f64,
    pub(crate) power_total_w: f64,
}

/// The curves of one trace.
pub(crate) struct TraceCurves {
    pub(crate) family: String,
    pub(crate) seeds: BTreeSet<u64>,
    pub(crate) policies: BTreeMap<String, Vec<MeanPoint>>,
}

/// `mean_grid.csv`, by trace.
pub(crate) struct MeanGrid {
    pub(crate) traces: BTreeMap<String, TraceCurves>,
}

impl MeanGrid {
    pub(crate) const COLUMNS: [&'static str; 8] = [
        "trace",
        "family",
        "policy",
        "seeds",
        "arrived_pct",
        "alloc_pct",
        "frag_ratio_pct",
        "power_total_w",
    ];

    pub(crate) fn read(path: &Path) -> Result<Option<MeanGrid>> {
        let Some(table) = Table::read(path, &Self::COLUMNS)? else {
            return Ok(None);
        };
        let mut traces: BTreeMap<String, TraceCurves> = BTreeMap::new();
        let mut seen: BTreeSet<(String, String, i64)> = BTreeSet::new();
        for row in table.rows() {
            let trace = row.name("trace")?;
            let family = row.name("family")?;
            let policy = row.name("policy")?;
            let seeds = row.number("seeds")?;
            if seeds < 1.0 || seeds.fract() != 0.0 {
                return Err(row.error(format_args!(
                    "column `seeds`: {seeds} is not a positive count"
                )));
            }
            let point = MeanPoint {
                arrived_pct: row.number("arrived_pct")?,
                alloc_pct: row.number("alloc_pct")?,
                frag_ratio_pct: row.number("frag_ratio_pct")?,
                power_total_w: row.number("power_total_w")?,
            };
            let key = (
                trace.clone(),
                policy.clone(),
                (point.arrived_pct * 1000.0).round() as i64,
            );
            if !seen.insert(key) {
                return Err(row.error(format_args!(
                    "second row for trace {trace}, policy {policy} at {} % arrived",
                    point.arrived_pct
                )));
            }
            let curves = traces.entry(trace.clone()).or_insert_with(|| TraceCurves {
                family: family.clone(),
                seeds: BTreeSet::new(),
                policies: BTreeMap::new(),
            });
            if curves.family != family {
                return Err(row.error(format_args!(
                    "trace {trace} is in family {family} here but in family {} above",
                    curves.family
                )));
            }
            curves.seeds.insert(seeds as u64);
            curves.policies.entry(policy).or_default().push(point);
        }
        for curves in traces.values_mut() {
            for points in curves.policies.values_mut() {
                points.sort_by(|a, b| a.arrived_pct.total_cmp(&b.arrived_pct));
            }
        }
        Ok(Some(MeanGrid { traces }))
    }
}
