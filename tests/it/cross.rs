//! The cross-built binaries, checked as a board would run them: each is a static ELF for
//! its architecture, and runs the quick profile correctly under qemu-user (correctness
//! only, never a timing). Run by `make test` after the cross builds, with every other
//! ignored test that needs them: `cargo test --release --test it -- --ignored`.

use crate::support::{run_with, Run};
use std::path::PathBuf;

/// A cross build as the tests find and run it.
struct Target {
    triple: &'static str,
    /// Where the build puts it, under the repository: `target`, or `target/zig` for
    /// the zig path (`CROSS=zig`), kept apart from the Debian build of the same board.
    dir: &'static str,
    /// ELF e_machine and class (1 = 32-bit, 2 = 64-bit).
    machine: u16,
    class: u8,
    /// The qemu-user that runs it here, and the CPU it emulates (`QEMU_CPU`, which the
    /// forks inherit with the environment): none for this machine's own.
    qemu: Option<&'static str>,
    cpu: Option<&'static str>,
    /// What the binary reports as its architecture (uname -m) there.
    arch: &'static str,
}

const ARMV7: Target = Target {
    triple: "armv7-unknown-linux-gnueabihf",
    dir: "target",
    machine: 40,
    class: 1,
    qemu: Some("qemu-arm-static"),
    cpu: None,
    arch: "armv7l",
};

/// The Pi Zero and Pi 1: an ARM1176, where an ARMv7 instruction is SIGILL.
const ARMV6: Target = Target {
    triple: "arm-unknown-linux-musleabihf",
    dir: "target",
    machine: 40,
    class: 1,
    qemu: Some("qemu-arm-static"),
    cpu: Some("arm1176"),
    arch: "armv6l",
};

const TARGETS: &[Target] = &[
    ARMV7,
    Target {
        triple: "aarch64-unknown-linux-musl",
        dir: "target",
        machine: 183,
        class: 2,
        qemu: Some("qemu-aarch64-static"),
        cpu: None,
        arch: "aarch64",
    },
    Target {
        triple: "x86_64-unknown-linux-musl",
        dir: "target",
        machine: 62,
        class: 2,
        qemu: None,
        cpu: None,
        arch: "x86_64",
    },
    ARMV6,
    // make cross-armv7 CROSS=zig: static musl, since zig links glibc only dynamically.
    Target {
        triple: "armv7-unknown-linux-musleabihf",
        dir: "target/zig",
        ..ARMV7
    },
];

impl Target {
    fn built(&self, bin: &str) -> PathBuf {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(self.dir)
            .join(self.triple)
            .join("release")
            .join(bin);
        assert!(
            p.exists(),
            "{} is missing: run make cross (and make cross-armv7 CROSS=zig) first",
            p.display()
        );
        p
    }

    /// Runs `exe` as the board would, through its qemu where it needs one; with
    /// `forks`, copies of itself re-executed through that qemu too (`BB_FORK_RUNNER`).
    fn run(&self, exe: &str, args: &[&str], forks: bool, env: &[(&str, &str)]) -> Run {
        let Some(qemu) = self.qemu else {
            return run_with(exe, args, env);
        };
        let mut env = [env, &self.cpu_env()].concat();
        if forks {
            env.push(("BB_FORK_RUNNER", qemu));
        }
        run_with(qemu, &[&[exe][..], args].concat(), &env)
    }

    /// The environment that makes its qemu emulate the board's CPU.
    fn cpu_env(&self) -> Vec<(&'static str, &'static str)> {
        self.cpu.map(|cpu| ("QEMU_CPU", cpu)).into_iter().collect()
    }

    fn name(&self) -> String {
        format!("{}/{}", self.dir, self.triple)
    }
}

/// bb-zstd's input and warm-up made small for qemu-user: the start of every run here.
const SMALL: [&str; 7] = [
    "--quick",
    "--size",
    "64k",
    "--jobs",
    "2",
    "--warmup-time",
    "50ms",
];

fn binaries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/src/bin"))
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".rs")
                .map(String::from)
        })
        .filter(|n| n.starts_with("bb-"))
        .collect();
    names.sort();
    names
}

/// Reads the ELF header and program headers: (class, machine, has PT_INTERP).
fn elf_facts(bytes: &[u8]) -> (u8, u16, bool) {
    assert_eq!(&bytes[..4], b"\x7fELF", "not an ELF file");
    let class = bytes[4];
    assert_eq!(bytes[5], 1, "little-endian");
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    let machine = u16_at(18);
    let (phoff, phentsize, phnum) = if class == 1 {
        (u32_at(28), u16_at(42), u16_at(44))
    } else {
        (u64_at(32), u16_at(54), u16_at(56))
    };
    const PT_INTERP: u32 = 3;
    let interp =
        (0..phnum as usize).any(|i| u32_at(phoff + i * phentsize as usize) as u32 == PT_INTERP);
    (class, machine, interp)
}

#[test]
#[ignore = "needs make cross; run by make test"]
fn cross_binaries_are_static_elfs_of_their_architecture() {
    for target in TARGETS {
        for bin in binaries() {
            let path = target.built(&bin);
            let bytes = std::fs::read(&path).unwrap();
            let (c, m, interp) = elf_facts(&bytes);
            assert_eq!((c, m), (target.class, target.machine), "{}", path.display());
            assert!(
                !interp,
                "{} asks for a dynamic loader: not static",
                path.display()
            );
            let file = std::process::Command::new("file")
                .arg(&path)
                .output()
                .unwrap();
            let file = String::from_utf8_lossy(&file.stdout);
            assert!(
                file.contains("statically linked") || file.contains("static-pie linked"),
                "{file}"
            );
        }
    }
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn bb_zstd_runs_correctly_under_qemu() {
    for target in TARGETS {
        let exe = target.built("bb-zstd");
        let exe = exe.to_str().unwrap();
        let args = [
            "--quick",
            "--size",
            "64k",
            "--jobs",
            "2",
            "--threads",
            "1,2",
            "--lock",
            "none",
            "--warmup-time",
            "50ms",
            "--iterations",
            "2",
            "--time",
            "100ms",
            "--forks",
            "1",
            "--format",
            "json",
        ];
        // Forks re-execute the binary: through qemu too, as the kernel cannot.
        let run = target.run(exe, &args, true, &[]);
        run.assert_ok();
        let json = run.json();
        let entries = json.as_array().unwrap();
        let name = target.name();
        assert_eq!(entries.len(), 4, "{name}");
        for e in entries {
            assert_eq!(e["environment"]["arch"], target.arch, "{name}");
            assert_eq!(
                e["primaryMetric"]["rawData"][0].as_array().unwrap().len(),
                2
            );
            assert!(e["primaryMetric"]["score"].as_f64().unwrap() > 0.0);
            assert!(e["secondaryMetrics"]["ratio"]["score"].as_f64().unwrap() > 2.0);
        }
        // Bad input is exit 2 on every architecture.
        let bad = target.run(exe, &["--threads", "0"], false, &[]);
        assert_eq!(bad.code, 2, "{name}: {}", bad.stderr);
    }
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn against_another_build_runs_under_qemu() {
    let args = |other: &str| -> Vec<String> {
        let rest = [
            "--threads",
            "1",
            "--lock",
            "none",
            "--op",
            "compress",
            "--iterations",
            "1",
            "--time",
            "100ms",
            "--forks",
            "1",
            "--against",
            other,
        ];
        SMALL.iter().chain(&rest).map(|a| a.to_string()).collect()
    };
    let check = |target: &Target, other: &std::path::Path| {
        let exe = target.built("bb-zstd");
        let other = other.to_str().unwrap();
        let args = args(other);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = target.run(exe.to_str().unwrap(), &args, true, &[]);
        run.assert_ok();
        let name = target.name();
        // The path's end: a long one is cut at its start to keep 80 columns.
        assert!(
            run.stdout.contains("this build against ")
                && run.stdout.contains("/release/bb-zstd:\n  compress: "),
            "{name}: {}",
            run.stdout
        );
    };
    // Each target against itself, its forks and the other's through its qemu.
    for target in TARGETS {
        check(target, &target.built("bb-zstd"));
    }
    // armv7 against aarch64, as on a Pi 3 with a 64-bit kernel: the other build's qemu
    // found by its architecture, not the runner of this one's forks.
    let aarch64 = TARGETS.iter().find(|t| t.arch == "aarch64").unwrap();
    check(&ARMV7, &aarch64.built("bb-zstd"));
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn bb_compare_runs_correctly_under_qemu() {
    let dir = crate::support::TempDir::new("cross-compare");
    let result = |name: &str, raw: [f64; 4]| {
        let path = dir.join(name);
        let entry = serde_json::json!([{
            "benchmark": "bb.x.op", "mode": "thrpt", "params": {"threads": "1"},
            "primaryMetric": {"score": raw.iter().sum::<f64>() / 4.0, "scoreError": "NaN",
                              "scoreUnit": "ops/s", "rawData": [raw]}
        }]);
        std::fs::write(&path, entry.to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let base = result("base.json", [100.0, 101.0, 99.0, 100.0]);
    let new = result("new.json", [50.0, 51.0, 49.0, 50.0]);
    for target in TARGETS {
        let exe = target.built("bb-compare");
        let exe = exe.to_str().unwrap();
        let run = |args: &[&str]| target.run(exe, args, false, &[]);
        let target = target.name();
        let slower = run(&["--format", "json", &base, &new]);
        assert_eq!(slower.code, 1, "{target}: {}", slower.stderr);
        let v = slower.json();
        assert_eq!(v["rows"][0]["results"][1]["verdict"], "slower", "{target}");
        assert_eq!(v["rows"][0]["results"][1]["ratio"], 0.5, "{target}");
        let faster = run(&[&new, &base]);
        faster.assert_ok();
        assert!(
            faster.stdout.contains("faster"),
            "{target}: {}",
            faster.stdout
        );
        assert_eq!(run(&["--alpha", "7", &base]).code, 2, "{target}");
    }
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn bb_ipc_runs_correctly_under_qemu() {
    for (i, target) in TARGETS.iter().enumerate() {
        let exe = target.built("bb-ipc");
        let exe = exe.to_str().unwrap();
        let tmp = crate::support::TempDir::new("ipc-qemu");
        // Both of the quick profile's modes on the first target (armv7, 32 bits), avgt
        // alone on the others: every call on every transport everywhere, and the
        // sample histogram's code once, for the minutes qemu takes per fork.
        let one_mode: &[&str] = if i == 0 { &[] } else { &["--mode", "avgt"] };
        let args = [
            "--quick",
            "--transport",
            "unix,seqpacket,socketpair,pipes,tcp",
            "--warmup",
            "0",
            "--iterations",
            "1",
            "--time",
            "50ms",
            "--format",
            "json",
        ];
        let args = [&args[..], one_mode].concat();
        let dir = tmp.path().to_str().unwrap();
        // Forks and the server child re-execute the binary: through qemu too.
        let run = target.run(exe, &args, true, &[("TMPDIR", dir)]);
        run.assert_ok();
        let json = run.json();
        let entries = json.as_array().unwrap();
        let arch = target.arch;
        let target = target.name();
        // 8 local calls; per transport a floor and 8 calls across two cores, and the
        // floor and the plain call on one core, in each mode (one placement on one CPU).
        let modes = if one_mode.is_empty() { 2 } else { 1 };
        let per_transport = match std::thread::available_parallelism().map_or(1, |n| n.get()) {
            1 => 9,
            _ => 9 + 2,
        };
        assert_eq!(entries.len(), 8 + 5 * per_transport * modes, "{target}");
        for e in entries {
            assert_eq!(e["environment"]["arch"], arch, "{target}");
            assert!(e["primaryMetric"]["score"].as_f64().unwrap() > 0.0);
            if e["benchmark"] == "bb.ipc.remote" {
                assert!(e["secondaryMetrics"]["vs floor"]["score"].as_f64().unwrap() > 0.0);
            }
        }
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert!(left.is_empty(), "{target}: left {left:?}");
    }
}

/// `name` on PATH, as a path: a run given another PATH must still find it.
fn on_path(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{name} is not on PATH"))
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn forks_under_qemu_find_their_qemu_or_say_how_to_set_it() {
    let no_qemu = crate::support::TempDir::new("cross-no-qemu");
    for target in TARGETS {
        let Some(qemu) = target.qemu else { continue };
        let qemu_path = on_path(qemu);
        let exe = target.built("bb-zstd");
        let cpu = target.cpu_env();
        let target = target.name();
        let args = [
            exe.to_str().unwrap(),
            "--quick",
            "--size",
            "64k",
            "--jobs",
            "2",
            "--threads",
            "1",
            "--warmup-time",
            "50ms",
            "--iterations",
            "1",
            "--time",
            "50ms",
            "--forks",
            "1",
        ];
        let binfmt = format!(
            "/proc/sys/fs/binfmt_misc/{}",
            qemu.trim_end_matches("-static")
        );
        if std::path::Path::new(&binfmt).exists() {
            eprintln!("{binfmt} is registered: the kernel runs {target} binaries itself");
            continue;
        }
        // No BB_FORK_RUNNER: the fork finds the qemu on PATH by itself.
        let run = run_with(qemu_path.to_str().unwrap(), &args, &cpu);
        run.assert_ok();
        // No qemu on PATH either: one line says what to set.
        let run = run_with(
            qemu_path.to_str().unwrap(),
            &args,
            &[&cpu[..], &[("PATH", no_qemu.path().to_str().unwrap())]].concat(),
        );
        assert_eq!(run.code, 1, "{target}: {}", run.stderr);
        let error = format!(
            " (exec format error): under qemu-user without binfmt_misc, set BB_FORK_RUNNER={qemu}, or use --forks 0"
        );
        assert!(
            run.stderr.contains("error: cannot re-execute ") && run.stderr.contains(&error),
            "{target}: {}",
            run.stderr
        );
    }
}

/// The ELF attributes (`readelf -A`) of a 32-bit ARM binary: the architecture and FPU
/// that the compiler and linker built it for, merged over every object, zstd's C too.
fn arm_attributes(path: &std::path::Path) -> String {
    let out = std::process::Command::new("readelf")
        .arg("-A")
        .arg(path)
        .output()
        .expect("readelf (binutils, scripts/setup.sh test)");
    assert!(out.status.success(), "readelf -A {}", path.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs make cross; run by make test"]
fn armv6_binaries_are_built_for_the_arm1176_and_armv7_ones_are_not() {
    for bin in binaries() {
        let path = ARMV6.built(&bin);
        let attributes = arm_attributes(&path);
        for tag in ["Tag_CPU_arch: v6\n", "Tag_FP_arch: VFPv2\n"] {
            assert!(
                attributes.contains(tag),
                "{}: no {tag}{attributes}",
                path.display()
            );
        }
    }
    // The same check tells an ARMv7 build apart.
    let attributes = arm_attributes(&ARMV7.built("bb-zstd"));
    assert!(attributes.contains("Tag_CPU_arch: v7\n"), "{attributes}");
}

#[test]
#[ignore = "needs make cross and qemu-user; run by make test"]
fn qemu_as_an_arm1176_refuses_armv7_code() {
    // What makes the armv6 runs above a proof: the emulated Pi Zero's CPU stops at the
    // first ARMv7 instruction, as the board does ("Illegal instruction").
    let exe = ARMV7.built("bb-zstd");
    let run = ARMV6.run(exe.to_str().unwrap(), &["--help"], false, &[]);
    assert!(
        run.code != 0 && run.stderr.contains("(Illegal instruction)"),
        "exit code {}: {}",
        run.code,
        run.stderr
    );
    let run = ARMV7.run(exe.to_str().unwrap(), &["--help"], false, &[]);
    run.assert_ok();
}
