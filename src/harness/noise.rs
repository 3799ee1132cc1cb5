//! The board's own noise for a run: the noise profile a calibration wrote on this board
//! (`--noise FILE`, else `BB_NOISE`, else the default path), checked to be this board's,
//! in place of a binary's default band; where there is none, the run says so.

use crate::model::noise::{binary_of, NoiseProfile, NoiseSource, MAX_BYTES};
use crate::model::settings::Settings;
use crate::util::error::{Error, Result};
use crate::util::format::printable;
use crate::util::terminal::warn;
use std::path::{Path, PathBuf};

/// The variable that names a noise profile where `--noise` does not.
pub const VARIABLE: &str = "BB_NOISE";

/// Where a calibration writes the profile and a run looks for it by default:
/// `$XDG_CONFIG_HOME/boardbench/noise.json`, else `~/.config/boardbench/noise.json`.
pub fn default_path(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |v: Option<String>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    absolute(var("XDG_CONFIG_HOME"))
        .or_else(|| absolute(var("HOME")).map(|h| h.join(".config")))
        .map(|dir| dir.join("boardbench").join("noise.json"))
}

/// The profile a run uses: `flag`'s, else `BB_NOISE`'s, else the default path's where a
/// file is there. One given by flag or variable must be readable, well formed and this
/// board's (`board`), else the run is refused (exit 2); one at the default path that is
/// not is named in a warning and left out.
pub fn find(
    flag: Option<&Path>,
    var: &dyn Fn(&str) -> Option<String>,
    board: &str,
) -> Result<Option<(PathBuf, NoiseProfile)>> {
    let given = match (flag, var(VARIABLE).filter(|v| !v.is_empty())) {
        (Some(path), _) => Some((path.to_path_buf(), "--noise".to_string())),
        (None, Some(v)) => Some((PathBuf::from(v), VARIABLE.to_string())),
        (None, None) => None,
    };
    if let Some((path, how)) = given {
        return read(&path, &how, board).map(|p| Some((path, p)));
    }
    let Some(path) = default_path(var).filter(|p| p.exists()) else {
        return Ok(None);
    };
    match read(&path, "the noise profile", board) {
        Ok(profile) => Ok(Some((path, profile))),
        Err(e) => {
            warn(&format!("{e}; the run uses its defaults"));
            Ok(None)
        }
    }
}

/// The profile at `path`, named `how` (`--noise`) in its errors: bounded, well formed,
/// each figure in its range (exit 2 where not).
pub fn read_profile(path: &Path, how: &str) -> Result<NoiseProfile> {
    let name = format!("{how} {}", printable(&path.display().to_string()));
    let limit = "1 MiB (a noise profile is a few lines a binary)";
    let bytes = crate::util::file::read_regular(path, &name, MAX_BYTES, limit)?;
    let text =
        String::from_utf8(bytes).map_err(|_| Error::usage(format!("{name}: not UTF-8 text")))?;
    NoiseProfile::parse(&text).map_err(|e| Error::usage(format!("{name}: {e}")))
}

/// The profile at `path` (named `how`), if it is this board's.
fn read(path: &Path, how: &str, board: &str) -> Result<NoiseProfile> {
    let profile = read_profile(path, how)?;
    let name = format!("{how} {}", printable(&path.display().to_string()));
    if profile.board != board {
        return Err(Error::usage(format!(
            "{name} was measured on {}, not this board ({}): its noise is not this \
             board's (scripts/run-all.sh --calibrate measures this one)",
            printable(&profile.board),
            printable(board)
        )));
    }
    Ok(profile)
}

/// `settings` with `binary`'s noise from `found`, where it measured `binary`; else as
/// they are, from the default.
pub fn apply(
    settings: Settings,
    found: Option<&(PathBuf, NoiseProfile)>,
    binary: &str,
) -> Settings {
    let Some((path, profile)) = found else {
        return settings;
    };
    let Some(noise) = profile.of(binary) else {
        return settings;
    };
    Settings {
        noise_band: noise.band,
        run_floor: noise.run_floor,
        noise_source: NoiseSource::Calibration {
            file: printable(&path.display().to_string()),
            runs: noise.runs,
            measured: profile.measured.clone(),
        },
        ..settings
    }
}

/// The binary a suite's benchmarks belong to (`bb-zstd`), as a profile names it.
pub fn binary_of_names<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<String> {
    names.find_map(binary_of)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::noise::tests::profile_of as profile;
    use std::collections::HashMap;

    const BOARD: &str = "pi4: Raspberry Pi 4 Model B, 4 cores, aarch64";

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn the_flag_then_the_variable_then_the_default_path() {
        let dir = crate::util::temp::TempDir::new("noise");
        let config = dir.path().join("boardbench");
        std::fs::create_dir_all(&config).unwrap();
        let write = |path: &Path, board: &str| {
            std::fs::write(path, profile(board).to_json().to_pretty()).unwrap()
        };
        let home = dir.path().to_str().unwrap();
        // Nothing anywhere: the defaults.
        assert!(find(None, &vars(&[("XDG_CONFIG_HOME", home)]), BOARD)
            .unwrap()
            .is_none());
        write(&config.join("noise.json"), BOARD);
        let found = find(None, &vars(&[("XDG_CONFIG_HOME", home)]), BOARD).unwrap();
        assert_eq!(found.unwrap().0, config.join("noise.json"));
        let other = dir.path().join("other.json");
        write(&other, BOARD);
        let by_var = vars(&[
            ("XDG_CONFIG_HOME", home),
            (VARIABLE, other.to_str().unwrap()),
        ]);
        assert_eq!(find(None, &by_var, BOARD).unwrap().unwrap().0, other);
        let flag = dir.path().join("flag.json");
        write(&flag, BOARD);
        assert_eq!(find(Some(&flag), &by_var, BOARD).unwrap().unwrap().0, flag);
    }

    #[test]
    fn another_boards_profile_is_refused_where_given_and_left_out_where_found() {
        let dir = crate::util::temp::TempDir::new("noise");
        let path = dir.path().join("boardbench/noise.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            profile("vm: x86, 2 cores, x86_64").to_json().to_pretty(),
        )
        .unwrap();
        let err = find(Some(&path), &vars(&[]), BOARD).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("not this board's"), "{err}");
        let home = dir.path().to_str().unwrap();
        assert!(find(None, &vars(&[("XDG_CONFIG_HOME", home)]), BOARD)
            .unwrap()
            .is_none());
        // A missing or malformed file given by name is an error, not the defaults.
        let missing = dir.path().join("none.json");
        assert!(find(Some(&missing), &vars(&[]), BOARD).is_err());
        std::fs::write(&missing, "{\"noiseProfile\": 1}").unwrap();
        let err = find(Some(&missing), &vars(&[]), BOARD).unwrap_err();
        assert!(err.to_string().contains("board"), "{err}");
    }

    #[test]
    fn a_profile_sets_its_binarys_noise_and_says_where_from() {
        let found = (PathBuf::from("/n.json"), profile(BOARD));
        let s = apply(Settings::quick(), Some(&found), "bb-zstd");
        assert_eq!((s.noise_band, s.run_floor), (0.08, 0.03));
        assert_eq!(s.noise_source.name(), "calibration");
        let s = apply(Settings::quick(), Some(&found), "bb-ipc");
        assert_eq!(s, Settings::quick());
        assert_eq!(
            apply(Settings::quick(), None, "bb-zstd")
                .noise_source
                .name(),
            "default"
        );
    }

    #[test]
    fn the_default_path_follows_xdg_then_home() {
        let p = default_path(&vars(&[("HOME", "/home/pi")])).unwrap();
        assert_eq!(p, PathBuf::from("/home/pi/.config/boardbench/noise.json"));
        let p = default_path(&vars(&[("HOME", "/home/pi"), ("XDG_CONFIG_HOME", "/c")]));
        assert_eq!(p.unwrap(), PathBuf::from("/c/boardbench/noise.json"));
        assert_eq!(default_path(&vars(&[("HOME", "relative")])), None);
    }
}
