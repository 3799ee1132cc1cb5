//! A board's own noise, as data: the noise profile a calibration writes (each binary's
//! band of a lone fork, run floor and the variance at each level, measured by repeated
//! runs on this board), read back bounded and checked, and where a row's noise came from.

use crate::stats::components::Components;
use crate::util::format::printable;
use crate::util::json::Json;

/// The `noiseProfile` version this build writes and reads.
pub const VERSION: f64 = 1.0;

/// The largest noise profile read: a few lines a binary.
pub const MAX_BYTES: u64 = 1 << 20;

/// The largest band or floor a profile may hold (relative: ×11): past it, a board's
/// runs say nothing a verdict could use, and a crafted file could silence every one.
pub const MAX_NOISE: f64 = 10.0;

/// What a binary's noise is, measured on one board.
#[derive(Debug, Clone, PartialEq)]
pub struct BinaryNoise {
    /// The relative half-width of a score from fewer than three forks.
    pub band: f64,
    /// What whole runs differ by beyond their forks, relative.
    pub run_floor: f64,
    /// The runs it was measured from.
    pub runs: usize,
    /// The rows it pooled.
    pub rows: usize,
    /// The variance of ln(score) at each level: iterations, forks, runs.
    pub variance: [Option<f64>; 3],
}

impl BinaryNoise {
    /// From a calibration's variance components; None where they give no band.
    pub fn of(c: &Components) -> Option<BinaryNoise> {
        let band = c.band()?;
        Some(BinaryNoise {
            band,
            // From one fork a run, the run's part is not told from the fork's: the band.
            run_floor: c.run_floor().unwrap_or(band),
            runs: c.run_count,
            rows: c.rows,
            variance: [c.iterations, c.forks, c.runs],
        })
    }
}

/// The noise every binary measured on one board.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseProfile {
    /// The board it was measured on ([`crate::system::env::board_identity`]).
    pub board: String,
    /// The day it was measured, `YYYY-MM-DD`.
    pub measured: String,
    /// By binary (`bb-zstd`), in order.
    pub binaries: Vec<(String, BinaryNoise)>,
}

/// Where a row's band and run floor came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum NoiseSource {
    /// Nothing measured on this board: the binary's built-in band (from another machine,
    /// said so), no run floor.
    #[default]
    Default,
    /// A noise profile of this board.
    Calibration {
        /// The profile's path, as shown.
        file: String,
        runs: usize,
        measured: String,
    },
}

impl NoiseSource {
    /// As the JSON names it (`boardbench.noiseSource`).
    pub fn name(&self) -> &'static str {
        match self {
            NoiseSource::Default => "default",
            NoiseSource::Calibration { .. } => "calibration",
        }
    }
}

/// The binary a benchmark belongs to, from its name: `bb.zstd.compress` is `bb-zstd`'s.
pub fn binary_of(benchmark: &str) -> Option<String> {
    let mut parts = benchmark.split('.');
    match (parts.next(), parts.next()) {
        (Some("bb"), Some(name)) if !name.is_empty() => Some(format!("bb-{name}")),
        _ => None,
    }
}

impl NoiseProfile {
    /// The noise of `binary`, where the profile measured it.
    pub fn of(&self, binary: &str) -> Option<&BinaryNoise> {
        self.binaries
            .iter()
            .find(|(name, _)| name == binary)
            .map(|(_, n)| n)
    }

    pub fn to_json(&self) -> Json {
        let variance = |v: &[Option<f64>; 3]| {
            Json::obj([
                ("iterations", Json::opt_num(v[0])),
                ("forks", Json::opt_num(v[1])),
                ("runs", Json::opt_num(v[2])),
            ])
        };
        Json::obj([
            ("noiseProfile", Json::Num(VERSION)),
            ("board", Json::str(&self.board)),
            ("measured", Json::str(&self.measured)),
            (
                "binaries",
                Json::obj(self.binaries.iter().map(|(name, n)| {
                    (
                        name.clone(),
                        Json::obj([
                            ("band", Json::Num(n.band)),
                            ("runFloor", Json::Num(n.run_floor)),
                            ("runs", Json::Num(n.runs as f64)),
                            ("rows", Json::Num(n.rows as f64)),
                            ("variance", variance(&n.variance)),
                        ]),
                    )
                })),
            ),
        ])
    }

    /// A profile [`NoiseProfile::to_json`] wrote; an error names the first thing wrong.
    /// Every figure is checked against its sane range: a band, floor or count out of it
    /// is refused, never obeyed.
    pub fn parse(text: &str) -> Result<NoiseProfile, String> {
        let doc = Json::parse(text)?;
        match doc.get("noiseProfile").and_then(Json::as_f64) {
            Some(v) if v == VERSION => {}
            Some(v) => return Err(format!("it is version {v}; this build reads {VERSION}")),
            None => return Err("it is not a noise profile (no noiseProfile field)".into()),
        }
        let text_field = |key: &str| -> Result<String, String> {
            match doc.get(key).and_then(Json::as_str) {
                Some(s) if !s.is_empty() && s.len() <= 256 => Ok(s.to_string()),
                _ => Err(format!("its {key} is not a short string")),
            }
        };
        let (board, measured) = (text_field("board")?, text_field("measured")?);
        let Some(Json::Obj(entries)) = doc.get("binaries") else {
            return Err("its binaries are not an object".into());
        };
        if entries.len() > 64 {
            return Err(format!("it names {} binaries, more than 64", entries.len()));
        }
        let binaries = entries
            .iter()
            .map(|(name, n)| binary(name, n).map(|n| (name.clone(), n)))
            .collect::<Result<_, _>>()?;
        Ok(NoiseProfile {
            board,
            measured,
            binaries,
        })
    }
}

/// One binary's entry, each figure in its range.
fn binary(name: &str, n: &Json) -> Result<BinaryNoise, String> {
    let shown = printable(name);
    let tame = name.len() <= 32 && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
    if !tame || binary_of(&name.replacen('-', ".", 1)).as_deref() != Some(name) {
        return Err(format!("'{shown}' is not a binary's name (bb-zstd)"));
    }
    let number = |key: &str, low: f64, high: f64| -> Result<f64, String> {
        match n.get(key).and_then(Json::as_f64) {
            Some(v) if (low..=high).contains(&v) => Ok(v),
            Some(v) => Err(format!("{shown}'s {key} {v} is outside {low} to {high}")),
            None => Err(format!("{shown} has no {key}")),
        }
    };
    let count = |key: &str, low: f64| -> Result<usize, String> {
        let v = number(key, low, 1e6)?;
        if v.fract() != 0.0 {
            return Err(format!("{shown}'s {key} {v} is not a whole number"));
        }
        Ok(v as usize)
    };
    let variance = n.get("variance");
    let level = |key: &str| -> Result<Option<f64>, String> {
        match variance.and_then(|v| v.get(key)) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if (0.0..=MAX_NOISE).contains(&x) => Ok(Some(x)),
                _ => Err(format!(
                    "{shown}'s variance of {key} is not a number from 0 to 10"
                )),
            },
        }
    };
    let band = number("band", 0.0, MAX_NOISE)?;
    if band == 0.0 {
        return Err(format!("{shown}'s band is 0: a lone fork is never exact"));
    }
    Ok(BinaryNoise {
        band,
        run_floor: number("runFloor", 0.0, MAX_NOISE)?,
        runs: count("runs", 2.0)?,
        rows: count("rows", 1.0)?,
        variance: [level("iterations")?, level("forks")?, level("runs")?],
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A profile of bb-zstd's noise measured on `board`.
    pub(crate) fn profile_of(board: &str) -> NoiseProfile {
        NoiseProfile {
            board: board.into(),
            measured: "2026-12-08".into(),
            binaries: vec![(
                "bb-zstd".into(),
                BinaryNoise {
                    band: 0.08,
                    run_floor: 0.03,
                    runs: 3,
                    rows: 8,
                    variance: [Some(1e-4), Some(2e-4), None],
                },
            )],
        }
    }

    fn profile() -> NoiseProfile {
        profile_of("pi4, Raspberry Pi 4 Model B, 4 cores, aarch64")
    }

    #[test]
    fn a_profile_reads_back_as_written() {
        let p = profile();
        let back = NoiseProfile::parse(&p.to_json().to_pretty()).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.of("bb-zstd").unwrap().run_floor, 0.03);
        assert!(back.of("bb-ipc").is_none());
    }

    #[test]
    fn a_figure_out_of_its_range_is_refused_and_named() {
        let text = profile().to_json().to_pretty().replace("\" : ", "\": ");
        for (from, to, said) in [
            ("\"runFloor\": 0.03", "\"runFloor\": 1e308", "runFloor"),
            ("\"runFloor\": 0.03", "\"runFloor\": -0.1", "runFloor"),
            ("\"band\": 0.08", "\"band\": 0", "band is 0"),
            ("\"band\": 0.08", "\"band\": \"NaN\"", "band"),
            ("\"runs\": 3", "\"runs\": 1", "runs"),
            ("\"runs\": 3", "\"runs\": 2.5", "whole"),
            ("\"bb-zstd\"", "\"bb-zstd\\u001b[2J\"", "binary's name"),
            ("\"noiseProfile\": 1", "\"noiseProfile\": 2", "version 2"),
            (
                "\"board\": \"pi4, Raspberry Pi 4 Model B, 4 cores, aarch64\"",
                "\"board\": \"\"",
                "board",
            ),
        ] {
            assert!(text.contains(from), "{from}");
            let err = NoiseProfile::parse(&text.replacen(from, to, 1)).unwrap_err();
            assert!(err.contains(said), "{to}: {err}");
            assert!(!err.contains('\x1b'), "{err}");
        }
        assert!(NoiseProfile::parse("[]")
            .unwrap_err()
            .contains("not a noise profile"));
    }

    #[test]
    fn a_benchmark_names_its_binary() {
        assert_eq!(binary_of("bb.zstd.compress").as_deref(), Some("bb-zstd"));
        assert_eq!(binary_of("bb.ipc").as_deref(), Some("bb-ipc"));
        assert_eq!(binary_of("org.openjdk.Bench.x"), None);
        assert_eq!(binary_of("bb..x"), None);
    }
}
