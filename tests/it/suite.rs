//! The suite on boards, tested for real: scripts/run-all.sh end to end in a temporary
//! directory (with a failing binary among the real ones), and scripts/deploy.sh and
//! scripts/fleet.sh against two OpenSSH servers started on 127.0.0.1 as two boards.

use crate::support::boards::{
    check_default_suite, check_zstd_results, results_dir, start_boards, user, x86_musl_bb_zstd,
    Boards, Sshd, REPO, SHORT_TIMING, ZSTD_FLAGS,
};
use crate::support::{free_port, run_with, Run, TempDir};
use std::path::{Path, PathBuf};

fn script(name: &str) -> String {
    format!("{REPO}/scripts/{name}")
}

/// A bin directory with the real bb-zstd and bb-compare, and a bb-broken that fails.
fn bin_dir(dir: &TempDir) -> PathBuf {
    let bin = dir.join("bin");
    if bin.exists() {
        return bin;
    }
    std::fs::create_dir_all(&bin).unwrap();
    for (name, exe) in [
        ("bb-zstd", env!("CARGO_BIN_EXE_bb-zstd")),
        ("bb-compare", env!("CARGO_BIN_EXE_bb-compare")),
    ] {
        std::os::unix::fs::symlink(exe, bin.join(name)).unwrap();
    }
    let broken = bin.join("bb-broken");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'bb-broken: error: broken on purpose' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    bin
}

/// Runs run-all.sh with `shell` (`sh`, or `busybox sh`).
fn run_all(shell: &[&str], dir: &TempDir, args: &[&str]) -> Run {
    run_all_with(shell, dir, args, &[])
}

fn run_all_with(shell: &[&str], dir: &TempDir, args: &[&str], env: &[(&str, &str)]) -> Run {
    let bin = bin_dir(dir);
    let out = dir.join("out");
    let mut all: Vec<String> = shell[1..].iter().map(|s| s.to_string()).collect();
    all.extend([
        script("run-all.sh"),
        "--out".into(),
        out.to_str().unwrap().into(),
    ]);
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run_with(
        shell[0],
        &all,
        &[
            &[
                ("BB_BIN_DIR", bin.to_str().unwrap()),
                ("BB_FLAGS_zstd", ZSTD_FLAGS),
            ][..],
            env,
        ]
        .concat(),
    )
}

fn check_run_all(shell: &[&str]) {
    let dir = TempDir::new("run-all");
    let run = run_all(shell, &dir, &["--quick"]);
    assert_eq!(
        run.code, 1,
        "a failed binary makes the exit code 1\n{}\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.contains("bb-broken: FAILED with exit code 1"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("broken on purpose"), "{}", run.stdout);
    assert!(
        run.stdout.contains("bb-zstd: ok in "),
        "the rest still run:\n{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("bb-compare"),
        "bb-compare is not a measurement"
    );
    // The screen ends with each binary's answer, then the summary and where the results are.
    let answer = run
        .stdout
        .find("\n== bb-zstd: the answer ==\ncompress: ")
        .unwrap_or_else(|| panic!("no answer block on the screen:\n{}", run.stdout));
    let summary_line = run.stdout.find("FAILED: bb-broken").unwrap();
    assert!(answer < summary_line, "{}", run.stdout);
    assert!(
        run.stdout[answer..]
            .lines()
            .all(|l| l.chars().count() <= 80),
        "{}",
        run.stdout
    );
    let res = results_dir(&run);
    check_zstd_results(&res);
    assert!(!res.join("bb-broken.json").exists());
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(
        summary.contains("== bb-broken: FAILED with exit code 1"),
        "{summary}"
    );
    assert!(summary.contains("FAILED: bb-broken"), "{summary}");
    // Files left behind: the reports, the logs, nothing half-written.
    let mut names: Vec<String> = std::fs::read_dir(&res)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bb-broken.log",
            "bb-zstd.json",
            "bb-zstd.log",
            "env.json",
            "summary.txt"
        ]
    );

    // --only picks binaries, and a run where everything succeeds exits 0; a second run
    // in the same second gets its own directory.
    let first = run_all(shell, &dir, &["--quick", "--only", "zstd"]);
    first.assert_ok();
    let second = run_all(shell, &dir, &["--quick", "--only=zstd"]);
    second.assert_ok();
    assert_ne!(results_dir(&first), results_dir(&second));
    assert!(!first.stdout.contains("bb-broken"));
    check_zstd_results(&results_dir(&second));
    // The results directories are what bb-compare reads.
    let cmp = run_with(
        env!("CARGO_BIN_EXE_bb-compare"),
        &[
            results_dir(&first).to_str().unwrap(),
            results_dir(&second).to_str().unwrap(),
        ],
        &[],
    );
    assert!(cmp.code == 0 || cmp.code == 1, "{}", cmp.stderr);
    assert_eq!(
        cmp.stdout
            .lines()
            .filter(|l| l.starts_with("bb.zstd.") && !l.starts_with("bb.zstd.*"))
            .count(),
        8,
        "{}",
        cmp.stdout
    );

    let bad = run_all(shell, &dir, &["--only", "nosuch"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("no binary bb-nosuch"), "{}", bad.stderr);
    let bad = run_all(shell, &dir, &["--fast"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown argument '--fast'"),
        "{}",
        bad.stderr
    );

    // --against: the other build's binaries in a folder whose name has a space and a
    // quote (here the same bb-zstd); the path reaches the binary as one word, and its
    // answer block ends with the A/B lines.
    let other = other_build(&dir);
    let run = run_all(
        shell,
        &dir,
        &[
            "--quick",
            "--only",
            "zstd",
            "--against",
            other.to_str().unwrap(),
        ],
    );
    run.assert_ok();
    let against = format!("{}/bb-zstd", other.display());
    assert!(
        run.stdout.contains(&format!(
            "run-all: this build against the one in {}\n",
            other.display()
        )),
        "{}",
        run.stdout
    );
    check_ran_against(&run, &against, other.to_str().unwrap());
}

/// Checks a run-all results directory of bb-zstd run `--against` the build in `against`
/// (as run-all was given it): its report (this build's rows and the other's, as the
/// harness lays them out), and summary.txt naming the other build, its answer block
/// ending with the A/B lines.
/// A run-all run with `--against`: bb-zstd's command line ended with `--against
/// FLAG`, its answer block has the A/B lines, and its results name the other build
/// (`against`, see [`check_against_results`]).
fn check_ran_against(run: &Run, flag: &str, against: &str) {
    assert!(
        run.stdout.lines().any(
            |l| l.starts_with("bb-zstd --quick ") && l.ends_with(&format!(" --against {flag}"))
        ),
        "{}",
        run.stdout
    );
    let block = run
        .stdout
        .split_once("== bb-zstd: the answer ==\n")
        .unwrap_or_else(|| panic!("no answer block:\n{}", run.stdout))
        .1;
    assert!(
        block.lines().any(|l| l.starts_with("this build against ")),
        "no A/B lines in the answer:\n{block}"
    );
    check_against_results(&results_dir(run), against);
}

pub(crate) fn check_against_results(res: &Path, against: &str) {
    let report = crate::support::boards::read_json(&res.join("bb-zstd.json"));
    assert!(!report.as_array().unwrap().is_empty(), "{}", res.display());
    assert!(res.join("env.json").is_file(), "{}", res.display());
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(
        summary.contains(&format!("\nagainst: {against}\n"))
            && summary.contains("\n== bb-zstd: ok in "),
        "{summary}"
    );
    let block = summary
        .split_once("== bb-zstd: the answer ==\n")
        .unwrap_or_else(|| panic!("no answer block:\n{summary}"))
        .1;
    assert!(
        block.lines().any(|l| l.starts_with("this build against ")),
        "no A/B lines in the answer:\n{summary}"
    );
}

/// A folder named with a space and a quote, holding the same bb-zstd as [`bin_dir`]: the
/// other build of `--against`.
fn other_build(dir: &TempDir) -> PathBuf {
    let other = dir.join("the other build's");
    if !other.exists() {
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_bb-zstd"), other.join("bb-zstd")).unwrap();
    }
    other
}

#[test]
fn run_all_quick_end_to_end() {
    check_run_all(&["sh"]);
}

#[test]
#[ignore = "runs target/release, as run-all does by default; run by make test"]
fn run_all_with_no_arguments_runs_the_standard_suite() {
    // run-all's default binaries are the repository's target/release: these.
    let release = Path::new(REPO).join("target/release/bb-zstd");
    assert_eq!(Path::new(env!("CARGO_BIN_EXE_bb-zstd")), release);
    let dir = TempDir::new("run-all-defaults");
    let run = crate::support::run_in(
        dir.path(),
        "sh",
        &[&script("run-all.sh")],
        &[("BB_FLAGS", SHORT_TIMING)],
    );
    run.assert_ok();
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("run-all: 4 binaries, profile standard, estimated duration: about "),
        "the estimate comes first: {first}"
    );
    // The default suite warns of nothing but the machine's own state.
    crate::defaults::assert_warns_of_the_machine_alone(&run.stderr);
    let res = results_dir(&run);
    assert!(res.starts_with(dir.join("results")), "{}", res.display());
    check_default_suite(&res);
    assert!(
        dir.join("data/random-16mb.txt").is_file(),
        "bb-seek made its data"
    );
}

#[test]
#[ignore = "needs busybox (scripts/setup.sh test); run by make test"]
fn run_all_runs_under_busybox_sh() {
    check_run_all(&["busybox", "sh"]);
    // A board with only busybox: no other tool on PATH.
    let dir = TempDir::new("run-all-busybox");
    let applets = dir.join("applets");
    std::fs::create_dir_all(&applets).unwrap();
    run_with(
        "busybox",
        &["--install", "-s", applets.to_str().unwrap()],
        &[],
    )
    .assert_ok();
    let sh = applets.join("sh");
    let run = run_all_with(
        &[sh.to_str().unwrap()],
        &dir,
        &["--quick", "--only", "zstd"],
        &[("PATH", applets.to_str().unwrap())],
    );
    run.assert_ok();
    check_zstd_results(&results_dir(&run));
}

/// Runs deploy.sh with REMOTE_DIR set to `remote_dir`, as given (a `~` is the board's).
fn deploy(boards: &Boards, args: &[&str], remote_dir: &str) -> Run {
    let mut all = vec![script("deploy.sh")];
    all.extend(args.iter().map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run_with(
        "sh",
        &all,
        &[
            ("SSH_OPTS", boards.ssh_opts.as_str()),
            ("REMOTE_DIR", remote_dir),
            ("BB_FLAGS_zstd", ZSTD_FLAGS),
        ],
    )
}

#[test]
#[ignore = "needs make cross and openssh-server (scripts/setup.sh test); run by make test"]
fn deploy_copies_runs_and_fetches_results_over_ssh() {
    x86_musl_bb_zstd();
    let boards = start_boards();
    let local = boards.dir.join("results");
    let run = deploy(
        &boards,
        &[
            "--quick",
            "--target",
            "x86",
            "--no-build",
            "--only",
            "zstd",
            "--results",
            local.to_str().unwrap(),
            "board1",
        ],
        boards.dir.join("remote1").to_str().unwrap(),
    );
    run.assert_ok();
    // The board's run reaches the screen as it goes, over ssh without a terminal: a
    // line as each benchmark starts and ends; then the answer, within 80 columns.
    let both = format!("{}{}", run.stdout, run.stderr);
    assert!(
        both.contains("[1/8] bb.zstd.compress") && both.contains("done in"),
        "{both}"
    );
    let answer: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| *l != "== bb-zstd: the answer ==")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        answer.first().is_some_and(|l| l.starts_with("compress: ")),
        "{}",
        run.stdout
    );
    assert!(answer.iter().all(|l| l.chars().count() <= 80), "{answer:?}");
    let res = results_dir(&run);
    assert!(res.starts_with(&local), "{}", res.display());
    check_zstd_results(&res);
    // bb-zstd run by hand as README shows it, `ssh board ./bb-zstd`, with no terminal:
    // its progress lines on stderr, its answer last on stdout.
    let unpacked = std::fs::read_dir(boards.dir.join("remote1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir() && p.to_str().unwrap().ends_with("x86_64-unknown-linux-musl"))
        .unwrap();
    let mut ssh: Vec<String> = boards
        .ssh_opts
        .split_whitespace()
        .map(String::from)
        .collect();
    ssh.push("board1".into());
    ssh.push(format!(
        "{}/bin/bb-zstd --quick {ZSTD_FLAGS} --threads 1",
        unpacked.display()
    ));
    let by_hand = run_with(
        "ssh",
        &ssh.iter().map(String::as_str).collect::<Vec<_>>(),
        &[],
    );
    by_hand.assert_ok();
    assert!(
        by_hand.stderr.contains("[1/4] bb.zstd.compress") && by_hand.stderr.contains("done in"),
        "{}",
        by_hand.stderr
    );
    assert!(
        by_hand
            .stdout
            .contains("== bb-zstd: the answer ==\ncompress: "),
        "{}",
        by_hand.stdout
    );
    // The board keeps its copy: the dist and the results under REMOTE_DIR.
    let remote = boards.dir.join("remote1");
    let dists: Vec<_> = std::fs::read_dir(&remote)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        dists
            .iter()
            .any(|n| n.to_str().unwrap().ends_with("x86_64-unknown-linux-musl")),
        "{dists:?}"
    );
    assert!(remote
        .join("results")
        .join(res.file_name().unwrap())
        .join("bb-zstd.json")
        .exists());

    // --against: another build's binaries (here the same build's, from a folder named
    // with a space and a quote) go beside the dist, into REMOTE_DIR/against/, and each
    // binary runs against them: its answer block ends with the A/B lines.
    let other = boards.dir.join("the old build's");
    std::fs::create_dir_all(&other).unwrap();
    let musl = Path::new(REPO).join("target/x86_64-unknown-linux-musl/release");
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek", "bb-compare"] {
        std::os::unix::fs::symlink(musl.join(name), other.join(name)).unwrap();
    }
    std::fs::write(other.join("bb-zstd.d"), "").unwrap();
    let run = deploy(
        &boards,
        &[
            "--quick",
            "--target",
            "x86",
            "--no-build",
            "--only",
            "zstd",
            "--results",
            local.to_str().unwrap(),
            "--against",
            other.to_str().unwrap(),
            "board1",
        ],
        remote.to_str().unwrap(),
    );
    run.assert_ok();
    check_ran_against(&run, "../against/bb-zstd", "../against");
    // The measurement binaries, not bb-compare nor cargo's bb-zstd.d.
    let mut copied: Vec<String> = std::fs::read_dir(remote.join("against"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    copied.sort();
    assert_eq!(copied, ["bb-ipc", "bb-rpc", "bb-seek", "bb-zstd"]);

    // A board of another architecture is refused before anything is copied.
    let run = deploy(
        &boards,
        &["--quick", "--target", "armv7", "--no-build", "board1"],
        boards.dir.join("remote-armv7").to_str().unwrap(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("reports 'x86_64'") && run.stderr.contains("TARGET=x86"),
        "{}",
        run.stderr
    );
    assert!(!boards.dir.join("remote-armv7").exists());
    // Without --target, the board's own architecture is used.
    let run = deploy(&boards, &["--print-target", "board1"], "unused");
    run.assert_ok();
    assert_eq!(run.stdout.trim(), "x86");
    // A board that does not answer is exit 1 with a clear message.
    let dead = format!("{}@127.0.0.1", user());
    let run = run_with(
        "sh",
        &[&script("deploy.sh"), "--quick", "--no-build", &dead],
        &[(
            "SSH_OPTS",
            &format!("{} -o Port={}", boards.ssh_opts, free_port()),
        )],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("cannot run ssh"), "{}", run.stderr);
}

#[test]
#[ignore = "needs make cross and openssh-server (scripts/setup.sh test); run by make test"]
fn make_deploy_with_only_a_host_runs_the_standard_suite_in_the_boards_home() {
    x86_musl_bb_zstd();
    let boards = start_boards();
    let run = crate::support::run_in(
        Path::new(REPO),
        "make",
        &["-s", "deploy", "HOST=board1"],
        &[
            ("SSH_OPTS", boards.ssh_opts.as_str()),
            ("BB_FLAGS", SHORT_TIMING),
        ],
    );
    run.assert_ok();
    assert!(
        run.stderr.contains("copying boardbench-") && run.stderr.contains(" to ~/boardbench "),
        "{}",
        run.stderr
    );
    let res = results_dir(&run);
    let _cleanup = TempDir(res.clone());
    assert!(
        res.starts_with(Path::new(REPO).join("results")),
        "{}",
        res.display()
    );
    check_default_suite(&res);
    // ~/boardbench was the board's home, expanded by the board's shell.
    let home = boards.dir.join("home-sshd1/boardbench");
    assert!(
        home.join("results").join(res.file_name().unwrap()).is_dir(),
        "{}",
        home.display()
    );
    assert!(!Path::new(REPO).join("~").exists());
}

#[test]
#[ignore = "needs make cross and openssh-server (scripts/setup.sh test); run by make test"]
fn make_deploy_on_an_armv6l_board_chooses_armv6() {
    let boards = start_boards();
    let d = boards.dir.path();
    // A Pi Zero: its uname -m says armv6l (the rest of uname is this machine's).
    let bin = d.join("armv6l-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let uname = bin.join("uname");
    std::fs::write(
        &uname,
        "#!/bin/sh\n[ \"$1\" = -m ] && { echo armv6l; exit 0; }\nexec /bin/uname \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&uname, std::fs::Permissions::from_mode(0o755)).unwrap();
    let zero = Sshd::start_with(
        d,
        "sshd-zero",
        &format!("PATH={}:/usr/local/bin:/usr/bin:/bin", bin.display()),
    );
    let host = format!("HOST={}@127.0.0.1", user());
    let ssh_opts = format!("{} -o Port={}", boards.ssh_opts, zero.port);
    // AGAINST=: another build, from a folder named with a space and a quote, goes beside it.
    let other = d.join("the old build's");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("bb-zstd"), "#!/bin/sh\necho the old bb-zstd\n").unwrap();
    std::fs::set_permissions(
        other.join("bb-zstd"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let run = crate::support::run_in(
        Path::new(REPO),
        "make",
        &[
            "-s",
            "deploy",
            &host,
            "PROFILE=quick",
            &format!("AGAINST={}", other.display()),
        ],
        &[("SSH_OPTS", ssh_opts.as_str()), ("BB_FLAGS", SHORT_TIMING)],
    );
    assert!(
        run.stderr.contains("building for armv6")
            && run.stderr.contains(
                "copying boardbench-0.1.0-arm-unknown-linux-musleabihf and against/ to ~/boardbench (armv6l)"
            ),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(d.join("home-sshd-zero/boardbench/against/bb-zstd")).unwrap(),
        "#!/bin/sh\necho the old bb-zstd\n"
    );
    // ARM binaries cannot run on this x86 "board"; what was copied is the armv6 build.
    let copied = d.join(
        "home-sshd-zero/boardbench/boardbench-0.1.0-arm-unknown-linux-musleabihf/bin/bb-zstd",
    );
    let bytes = std::fs::read(&copied).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 40, "EM_ARM");
    if let Some(res) = run
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("results: "))
        .next_back()
    {
        let _cleanup = TempDir(PathBuf::from(res));
    }
}

#[test]
#[ignore = "needs make cross and openssh-server (scripts/setup.sh test); run by make test"]
fn deploy_quotes_a_remote_dir_with_a_space() {
    x86_musl_bb_zstd();
    let boards = start_boards();
    let local = boards.dir.join("results");
    let run = deploy(
        &boards,
        &[
            "--quick",
            "--no-build",
            "--only",
            "zstd",
            "--results",
            local.to_str().unwrap(),
            "board1",
        ],
        "~/bench dir/it's here",
    );
    run.assert_ok();
    check_zstd_results(&results_dir(&run));
    assert!(boards
        .dir
        .join("home-sshd1/bench dir/it's here/results")
        .is_dir());
}

#[test]
#[ignore = "needs make cross and openssh-server (scripts/setup.sh test); run by make test"]
fn fleet_runs_every_board_and_compares_them() {
    x86_musl_bb_zstd();
    let boards = start_boards();
    let d = boards.dir.path();
    let me = user();
    let hosts = d.join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "# two boards on this machine, and one that does not answer\n\
             board1 x86\n\
             {me}@127.0.0.1 dir={d}/remote2 -o Port={p2}   # target from uname -m\n\
             \n\
             {me}@127.0.0.1 x86 dir={d}/remote3 -o Port={dead}\n",
            d = d.display(),
            p2 = boards.servers[1].port,
            dead = free_port()
        ),
    )
    .unwrap();
    let results = d.join("results");
    let run = run_with(
        "sh",
        &[
            &script("fleet.sh"),
            hosts.to_str().unwrap(),
            "--parallel",
            "2",
            "--only",
            "zstd",
            "--no-build",
            "--results",
            results.to_str().unwrap(),
        ],
        &[
            ("SSH_OPTS", boards.ssh_opts.as_str()),
            ("BB_FLAGS", SHORT_TIMING),
            ("BB_FLAGS_zstd", ZSTD_FLAGS),
            ("BB_COMPARE", env!("CARGO_BIN_EXE_bb-compare")),
        ],
    );
    assert_eq!(
        run.code, 1,
        "the dead board fails the fleet\n{}\n{}",
        run.stdout, run.stderr
    );
    let second = format!("{me}_127.0.0.1");
    let dead = format!("{me}_127.0.0.1-5");
    assert!(run.stdout.contains("board1: ok\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("{second}: ok\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("{dead}: FAILED")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("fleet: FAILED: {dead}\n")),
        "{}",
        run.stdout
    );
    let fleet = results_dir(&run);
    for label in ["board1", second.as_str()] {
        let runs: Vec<PathBuf> = std::fs::read_dir(fleet.join(label))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(runs.len(), 1, "{label}: {runs:?}");
        check_zstd_results(&runs[0]);
    }
    assert!(!fleet.join(&dead).exists());
    // The cross-host table: a column per board, every bb-zstd row matched.
    let table = std::fs::read_to_string(fleet.join("compare.txt")).unwrap();
    let header = table.lines().find(|l| l.starts_with("Benchmark")).unwrap();
    // Named in the header, or by letter in a legend where names would take the table
    // past its width (the ratio's range and what it could see are wide).
    let legend = format!("runs: A = board1, B = {second}");
    assert!(
        (header.contains("board1") && header.contains(&second)) || table.contains(&legend),
        "{table}"
    );
    // compare.txt ends with the answer, whose lines name the family too.
    let rows: Vec<&str> = table
        .lines()
        .take_while(|l| *l != "== bb-compare: the answer ==")
        .filter(|l| l.starts_with("bb.zstd."))
        .collect();
    // Two thread counts and two operations, with and without the lock.
    assert_eq!(rows.len(), 8, "{table}");
    assert!(
        table.contains("\n== bb-compare: the answer ==\n"),
        "{table}"
    );
    for r in rows {
        assert!(!r.contains(" - "), "a row without both boards: {r}");
    }
    // On screen: the boards' answer, after every board's line, then where the table is.
    let (before, block) = run
        .stdout
        .split_once("== bb-compare: the answer ==\n")
        .unwrap_or_else(|| panic!("no answer block:\n{}", run.stdout));
    assert!(before.contains("board1: ok\n"), "{}", run.stdout);
    assert!(
        !run.stdout.contains(header),
        "the table stays in compare.txt"
    );
    let answer: Vec<&str> = block
        .lines()
        .take_while(|l| !l.starts_with("table: "))
        .collect();
    assert!(!answer.is_empty(), "{}", run.stdout);
    assert!(answer.iter().all(|l| l.chars().count() <= 80), "{answer:?}");
    // Each line names its rows, but the one that says the boards' run-to-run noise is
    // not in the verdicts (neither board is calibrated).
    assert!(
        answer.iter().all(|l| l.contains("bb.zstd")
            || l.starts_with("  ")
            || l.starts_with("verdicts leave out run-to-run noise")),
        "{answer:?}"
    );
    assert!(
        answer.iter().any(|l| l.contains("same within")
            || l.contains(" is faster at ")
            || l.contains("noise")),
        "{answer:?}"
    );
    assert!(
        run.stdout
            .contains(&format!("table: {}\n", fleet.join("compare.txt").display())),
        "{}",
        run.stdout
    );
    let svg = std::fs::read_to_string(fleet.join("compare.svg")).unwrap();
    assert!(svg.contains("bb.zstd.compress") && svg.contains("vs threads"));
}

/// fleet.sh from a checkout whose path holds a quote, `$(touch X)`, `&`, `|`, a space
/// and a newline, with deploy.sh and pack.sh stood in for (no board, no build): every
/// job gets the paths as they are, and nothing in them runs.
#[test]
fn fleet_jobs_carry_any_checkout_path_and_run_nothing_in_it() {
    use std::os::unix::fs::PermissionsExt;
    let d = TempDir::new("fleet-path");
    let repo = d.join("it's $(touch X) & | a b\nc");
    let scripts = repo.join("scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    for name in ["fleet.sh", "lib.sh"] {
        std::fs::copy(script(name), scripts.join(name)).unwrap();
    }
    let log = d.join("deploy.args");
    let fakes = [
        (
            "deploy.sh",
            // The board's target when asked; otherwise each argument on a line of its
            // own, NUL-ended.
            "#!/bin/sh\ncase \" $* \" in *' --print-target '*) echo x86; exit 0 ;; esac\n\
             printf '%s\\0' \"$@\" >>\"$FAKE_DEPLOY_LOG\"\n",
        ),
        ("pack.sh", "#!/bin/sh\necho \"dist/boardbench-$1.tar.gz\"\n"),
    ];
    for (name, text) in fakes {
        let path = scripts.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let hosts = d.join("hosts");
    std::fs::write(&hosts, "board1 x86\n..\n").unwrap();
    let results = d.join("results");
    // Another build to run against, in the same checkout: passed on to every deploy.
    let other = repo.join("old build");
    std::fs::create_dir_all(&other).unwrap();
    let fleet = scripts.join("fleet.sh");
    let mut c = std::process::Command::new("sh");
    c.args([
        fleet.to_str().unwrap(),
        hosts.to_str().unwrap(),
        "--no-build",
        "--results",
        results.to_str().unwrap(),
        "--against",
        other.to_str().unwrap(),
    ])
    .current_dir(d.path())
    .env("FAKE_DEPLOY_LOG", &log)
    .env("BB_COMPARE", env!("CARGO_BIN_EXE_bb-compare"))
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    let run = crate::support::finish_within(
        c.spawn().unwrap(),
        std::time::Duration::from_secs(60),
        "fleet.sh",
    );
    assert!(!d.join("X").exists(), "$(touch X) ran\n{}", run.stderr);
    assert!(
        run.stdout.contains("board1: ok\n"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout.contains("board-2: ok\n"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let args = std::fs::read(&log).unwrap();
    let args: Vec<String> = args
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    let dist = format!("{}/dist/boardbench-x86.tar.gz", repo.display());
    assert_eq!(
        args.iter().filter(|a| **a == dist).count(),
        2,
        "each job's --dist is the path as it is: {args:?}"
    );
    assert_eq!(
        args.windows(2)
            .filter(|w| w[0] == "--against" && w[1] == other.to_str().unwrap())
            .count(),
        2,
        "each job's --against is the path as it is: {args:?}"
    );
    // `..` as a host: a directory of its own, never the fleet's parent.
    let fleet_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut result_args: Vec<&String> = args
        .iter()
        .zip(args.iter().skip(1))
        .filter(|(flag, _)| *flag == "--results")
        .map(|(_, v)| v)
        .collect();
    result_args.sort();
    assert_eq!(
        result_args,
        [
            &format!("{}/board-2", fleet_dir.display()),
            &format!("{}/board1", fleet_dir.display())
        ],
        "{args:?}"
    );
}

/// run-all.sh's refusals (of --against, of an --only naming nothing) come before anything
/// runs: one line, exit 2, no results directory.
fn check_refused(dir: &TempDir, args: &[&str], said: &str) {
    let run = run_all(&["sh"], dir, args);
    assert_eq!(run.code, 2, "{args:?}: {}\n{}", run.stdout, run.stderr);
    assert_eq!(run.stderr, format!("run-all.sh: {said}\n"), "{args:?}");
    assert_eq!(run.stdout, "", "{args:?}");
    assert!(!dir.join("out").exists(), "{args:?}: a results directory");
}

#[test]
fn run_all_refuses_an_against_that_is_no_directory_in_one_line() {
    let dir = TempDir::new("run-all-against-dir");
    let missing = dir.join("no such build");
    let missing = missing.to_str().unwrap();
    check_refused(
        &dir,
        &["--quick", "--against", missing],
        &format!("--against '{missing}': no such directory"),
    );
    let file = bin_dir(&dir).join("bb-broken");
    let file = file.to_str().unwrap();
    check_refused(
        &dir,
        &["--quick", &format!("--against={file}")],
        &format!(
            "--against '{file}': not a directory (expected one of another build's bb-* binaries)"
        ),
    );
    check_refused(
        &dir,
        &["--quick", "--against", ""],
        "--against '': expected a directory of another build's bb-* binaries",
    );
}

#[test]
fn run_all_refuses_an_against_without_a_binary_that_runs_in_one_line() {
    let dir = TempDir::new("run-all-against-lacks");
    // The other build has bb-zstd (and cargo's bb-zstd.d, no binary), not bb-broken.
    let other = other_build(&dir);
    std::fs::write(other.join("bb-zstd.d"), "").unwrap();
    let path = other.to_str().unwrap();
    check_refused(
        &dir,
        &["--quick", "--against", &format!("{path}/")],
        &format!(
            "--against '{path}': no bb-broken there, which this run needs (--only leaves a binary out)"
        ),
    );
    // With --dry-run too: refused before any binary is asked for its plan.
    check_refused(
        &dir,
        &["--dry-run", "--against", path],
        &format!(
            "--against '{path}': no bb-broken there, which this run needs (--only leaves a binary out)"
        ),
    );
}

#[test]
fn run_all_refuses_an_empty_or_option_like_out_in_one_line() {
    let d = TempDir::new("run-all-out");
    for (value, said) in [
        ("", "--out '': expected a directory"),
        (
            "-x",
            "--out '-x': expected a directory (one named so is ./-x)",
        ),
    ] {
        let mut c = std::process::Command::new("sh");
        c.args([&script("run-all.sh"), "--dry-run", "--out", value])
            .current_dir(d.path());
        let run: Run = c.output().unwrap().into();
        assert_eq!(run.code, 2, "{value:?}: {}", run.stderr);
        assert_eq!(run.stderr, format!("run-all.sh: {said}\n"));
        assert!(!d.join("-x").exists());
    }
}

/// The lines run-all prints as it starts each binary (`bb-x --quick ...`), in order.
fn started(run: &Run) -> Vec<&str> {
    run.stdout
        .lines()
        .filter(|l| l.starts_with("bb-") && !l.contains(": "))
        .collect()
}

/// Every file of a results directory with its size, sorted.
fn files_of(res: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(res)
        .unwrap_or_else(|e| panic!("{}: {e}", res.display()))
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().into_string().unwrap(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn run_all_counts_a_binary_that_wrote_no_report_as_failed() {
    // BB_FLAGS=--dry-run: bb-zstd prints its plan, exits 0 and measures nothing.
    let dir = TempDir::new("run-all-no-report");
    let run = run_all_with(
        &["sh"],
        &dir,
        &["--quick", "--only", "zstd"],
        &[("BB_FLAGS", "--dry-run")],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("\nbb-zstd: FAILED: exit code 0 but no report (bb-zstd.json) after "),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("succeeded"), "{}", run.stdout);
    assert!(
        run.stdout.contains("\nFAILED: bb-zstd (of bb-zstd), "),
        "{}",
        run.stdout
    );
    let res = results_dir(&run);
    assert!(!res.join("bb-zstd.json").exists());
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(
        summary.contains("\n== bb-zstd: FAILED: exit code 0 but no report (bb-zstd.json) after "),
        "{summary}"
    );
}

#[test]
fn run_all_refuses_an_only_that_names_no_binary_in_one_line() {
    let dir = TempDir::new("run-all-only-nothing");
    bin_dir(&dir);
    for (args, only) in [
        (&["--quick", "--only", ","][..], ","),
        (&["--quick", "--only=,,"], ",,"),
        (&["--quick", "--only", ""], ""),
        (&["--dry-run", "--only", " "], " "),
    ] {
        check_refused(
            &dir,
            args,
            &format!("--only '{only}': names no binary (present: bb-broken bb-zstd)"),
        );
    }
}

#[test]
fn run_all_runs_each_binary_of_only_once_in_the_order_given() {
    let dir = TempDir::new("run-all-only-twice");
    let run = run_all(
        &["sh"],
        &dir,
        &["--quick", "--only", "broken,zstd,broken,zstd"],
    );
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let started = started(&run);
    assert_eq!(started.len(), 2, "{}", run.stdout);
    assert_eq!(started[0], "bb-broken --quick");
    assert!(started[1].starts_with("bb-zstd --quick "), "{}", run.stdout);
    assert!(
        run.stdout
            .starts_with("run-all: 2 binaries, profile quick, "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\nFAILED: bb-broken (of bb-broken bb-zstd), "),
        "{}",
        run.stdout
    );
    let res = results_dir(&run);
    check_zstd_results(&res);
    let summary = std::fs::read_to_string(res.join("summary.txt")).unwrap();
    assert!(
        summary.contains("\nbinaries: bb-broken bb-zstd\n"),
        "{summary}"
    );
    assert_eq!(
        summary.matches("\n== bb-zstd: ok in ").count(),
        1,
        "{summary}"
    );
}

/// What run-all leaves when no file of its results can be written: each binary's exit
/// code said (kept in memory, not in a file), the files it could not write named, exit 1,
/// and nothing empty left in their place.
fn check_run_all_that_cannot_write(run: &Run) {
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("\nbb-broken: FAILED with exit code 1 after "),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    // bb-zstd cannot write its report: it fails, with its own exit code.
    let zstd = run
        .stdout
        .split_once("\nbb-zstd: FAILED with exit code ")
        .unwrap_or_else(|| panic!("{}\n{}", run.stdout, run.stderr))
        .1;
    assert!(
        zstd.starts_with(|c: char| c.is_ascii_digit()),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("exit code  "), "{}", run.stdout);
    let res = results_dir(run);
    for file in ["env.json", "summary.txt", "bb-zstd.log", "bb-broken.log"] {
        assert!(
            run.stderr.contains(&format!(
                "run-all.sh: cannot write {}\n",
                res.join(file).display()
            )),
            "{file}:\n{}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains(&format!(
            "run-all.sh: these results lack what could not be written in {}: env.json bb-broken.log bb-zstd.log summary.txt",
            res.display()
        )),
        "{}",
        run.stderr
    );
    let files = files_of(&res);
    assert!(
        files.iter().all(|(_, size)| *size > 0),
        "empty files left: {files:?}"
    );
    assert!(
        !files
            .iter()
            .any(|(n, _)| n == "env.json" || n == "summary.txt"),
        "{files:?}"
    );
}

/// A tmpfs of 64 KiB mounted at a directory and filled up: a full file system, unmounted
/// when dropped. None where mounting is refused (not root, or a container without
/// CAP_SYS_ADMIN), said on stderr.
struct FullTmpfs(PathBuf);

impl FullTmpfs {
    fn mount(dir: &Path, test: &str) -> Option<FullTmpfs> {
        use std::io::Write;
        std::fs::create_dir_all(dir).unwrap();
        let mount = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir)
            .output();
        match mount {
            Ok(o) if o.status.success() => {}
            refused => {
                let why = match refused {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                eprintln!(
                    "{test}: SKIPPED: mounting a small tmpfs is refused here ({why}); \
                     the tests that simulate a full file system with RLIMIT_FSIZE still run"
                );
                return None;
            }
        }
        let full = FullTmpfs(dir.to_path_buf());
        let mut fill = std::fs::File::create(dir.join("fill")).unwrap();
        let chunk = [0u8; 4096];
        loop {
            if let Err(e) = fill.write_all(&chunk) {
                assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
                break;
            }
        }
        Some(full)
    }
}

impl Drop for FullTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Runs `args` with no file writable: RLIMIT_FSIZE 0 (its soft limit, which a child may
/// raise again), SIGXFSZ ignored, so that every write to a file fails (EFBIG) as on a full
/// file system, while directories, pipes and the terminal work. Needs no privilege.
const NO_FILE_WRITES: &[&str] = &[
    "sh",
    "-c",
    "trap '' XFSZ; ulimit -S -f 0 && exec \"$@\"",
    "sh",
];

#[test]
fn run_all_on_a_full_tmpfs_keeps_exit_codes_and_names_what_it_cannot_write() {
    let dir = TempDir::new("run-all-full");
    bin_dir(&dir);
    let Some(_full) = FullTmpfs::mount(&dir.join("out"), "run_all_on_a_full_tmpfs") else {
        return;
    };
    let run = run_all(&["sh"], &dir, &["--quick"]);
    check_run_all_that_cannot_write(&run);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
}

#[test]
fn run_all_that_can_write_no_file_keeps_exit_codes_and_names_what_it_cannot_write() {
    let dir = TempDir::new("run-all-fsize");
    let shell: Vec<&str> = NO_FILE_WRITES.iter().copied().chain(["sh"]).collect();
    let run = run_all(&shell, &dir, &["--quick"]);
    check_run_all_that_cannot_write(&run);
    assert!(run.stderr.contains("File too large"), "{}", run.stderr);
}

/// A board played by this machine: an `ssh` first on PATH that runs the command here with
/// sh (as sshd would hand it to the board's shell), `uname -m` answering x86_64, and a dist
/// tarball of run-all.sh and one fake measurement binary, bb-fake (a plan when asked, else
/// a small JSON report and an answer). Returns PATH and the tarball. BB_TEST_BOARD is set
/// for what runs "on the board".
fn fake_board(dir: &TempDir) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let exe = |path: &Path, text: &str| {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let fake_bin = dir.join("fake-bin");
    std::fs::create_dir_all(&fake_bin).unwrap();
    exe(
        &fake_bin.join("ssh"),
        "#!/bin/sh\n\
         # ssh [-n] HOST COMMAND...: COMMAND run here by sh, as on the board.\n\
         if [ \"$1\" = -n ]; then shift; exec </dev/null; fi\n\
         shift\n\
         [ \"$*\" = 'uname -m' ] && { echo x86_64; exit 0; }\n\
         BB_TEST_BOARD=1\n\
         export BB_TEST_BOARD\n\
         exec sh -c \"$*\"\n",
    );
    let name = "boardbench-0.1.0-fake";
    let tree = dir.join("dist-tree").join(name);
    std::fs::create_dir_all(tree.join("scripts")).unwrap();
    std::fs::create_dir_all(tree.join("bin")).unwrap();
    std::fs::copy(script("run-all.sh"), tree.join("scripts/run-all.sh")).unwrap();
    exe(
        &tree.join("bin/bb-fake"),
        "#!/bin/sh\n\
         case \" $* \" in *' --dry-run '*) echo 'estimated duration: about 1 s (1 s)'; exit 0 ;; esac\n\
         while [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n\
         printf '[{\"benchmark\" : \"bb.fake\", \"mode\" : \"thrpt\", \"primaryMetric\" : {\"score\" : 1.0}}]\\n' >\"$out\" || exit 1\n\
         echo 'bb-fake: progress' >&2\n\
         printf '%s\\n' '== bb-fake: the answer ==' 'fine'\n",
    );
    let dist = dir.join(&format!("{name}.tar.gz"));
    run_with(
        "tar",
        &[
            "-C",
            dir.join("dist-tree").to_str().unwrap(),
            "-czf",
            dist.to_str().unwrap(),
            name,
        ],
        &[],
    )
    .assert_ok();
    let path = format!("{}:{}", fake_bin.display(), std::env::var("PATH").unwrap());
    (path, dist)
}

/// deploy.sh to the board of [`fake_board`], its results fetched into `results`.
fn deploy_to_fake_board(dir: &TempDir, path: &str, dist: &Path, results: &Path) -> Run {
    crate::support::run_bounded(
        "sh",
        &[
            &script("deploy.sh"),
            "--quick",
            "--dist",
            dist.to_str().unwrap(),
            "--results",
            results.to_str().unwrap(),
            "fakeboard",
        ],
        &[
            ("PATH", path),
            ("SSH_OPTS", ""),
            ("REMOTE_DIR", dir.join("board dir").to_str().unwrap()),
        ],
        std::time::Duration::from_secs(120),
    )
}

/// deploy.sh whose results directory is full: the fetch fails, exit 1, and none of the
/// copy is left behind (no empty JSON for bb-compare to find later).
fn check_deploy_into_a_full_results_dir(run: &Run, results: &Path) {
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let said = run
        .stderr
        .lines()
        .find(|l| l.starts_with("deploy fakeboard: fetching "))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert!(
        said.contains(" failed (")
            && said.contains(" tar ")
            && said.ends_with(&format!("): nothing of it kept in {}", results.display())),
        "{}",
        run.stderr
    );
    let left: Vec<String> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "fill")
        .collect();
    assert!(left.is_empty(), "a partial copy is left: {left:?}");
}

#[test]
fn deploy_fetches_the_results_whole_into_place() {
    let dir = TempDir::new("deploy-fetch");
    let (path, dist) = fake_board(&dir);
    let results = dir.join("results");
    let run = deploy_to_fake_board(&dir, &path, &dist, &results);
    run.assert_ok();
    let res = results_dir(&run);
    assert_eq!(res.parent().unwrap(), results);
    let files: Vec<String> = files_of(&res).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        files,
        ["bb-fake.json", "bb-fake.log", "env.json", "summary.txt"]
    );
    assert!(files_of(&res).iter().all(|(_, size)| *size > 0));
    // Nothing else beside it: the temporary directory it came through is gone.
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), 1);
}

#[test]
fn deploy_into_a_full_file_system_leaves_no_partial_copy() {
    let dir = TempDir::new("deploy-full");
    let (path, dist) = fake_board(&dir);
    let results = dir.join("results");
    let Some(_full) = FullTmpfs::mount(&results, "deploy_into_a_full_file_system") else {
        return;
    };
    let run = deploy_to_fake_board(&dir, &path, &dist, &results);
    check_deploy_into_a_full_results_dir(&run, &results);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
}

#[test]
fn deploy_whose_tar_cannot_write_leaves_no_partial_copy() {
    // The tar that unpacks on this machine cannot write a file (RLIMIT_FSIZE, as in
    // NO_FILE_WRITES), the board's can: a full local file system without mounting one.
    let dir = TempDir::new("deploy-fsize");
    let (path, dist) = fake_board(&dir);
    let tar = run_with("sh", &["-c", "command -v tar"], &[]);
    tar.assert_ok();
    let wrapper = dir.join("fake-bin/tar");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n\
             if [ -z \"${{BB_TEST_BOARD:-}}\" ]; then\n\
             \x20   for a; do case $a in -x*) trap '' XFSZ; ulimit -S -f 0 ;; esac; done\n\
             fi\n\
             exec {} \"$@\"\n",
            tar.stdout.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let results = dir.join("results");
    let run = deploy_to_fake_board(&dir, &path, &dist, &results);
    check_deploy_into_a_full_results_dir(&run, &results);
}

/// A checkout for fleet.sh with deploy.sh and pack.sh stood in for: the fake deploy.sh
/// answers --print-target with x86 (noting the host in `print-target.log`) and otherwise
/// writes its REMOTE_DIR, SSH_OPTS and arguments, NUL-ended, to `deploy.log`.
fn fleet_checkout(d: &TempDir) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let scripts = d.join("repo/scripts");
    std::fs::create_dir_all(&scripts).unwrap();
    for name in ["fleet.sh", "lib.sh"] {
        std::fs::copy(script(name), scripts.join(name)).unwrap();
    }
    let log = d.join("deploy.log");
    let asked = d.join("print-target.log");
    let fakes = [
        (
            "deploy.sh",
            format!(
                "#!/bin/sh\n\
                 case \" $* \" in *' --print-target '*) echo \"$*\" >>'{asked}'; echo x86; exit 0 ;; esac\n\
                 printf '%s\\0' \"REMOTE_DIR=${{REMOTE_DIR-}}\" \"SSH_OPTS=$SSH_OPTS\" \"$@\" >>'{log}'\n",
                asked = asked.display(),
                log = log.display()
            ),
        ),
        (
            "pack.sh",
            "#!/bin/sh\necho \"dist/boardbench-$1.tar.gz\"\n".to_string(),
        ),
    ];
    for (name, text) in fakes {
        let path = scripts.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    scripts.join("fleet.sh")
}

fn run_fleet(d: &TempDir, fleet: &Path, hosts: &Path) -> Run {
    crate::support::run_bounded(
        "sh",
        &[
            fleet.to_str().unwrap(),
            hosts.to_str().unwrap(),
            "--no-build",
            "--results",
            d.join("results").to_str().unwrap(),
        ],
        &[
            ("SSH_OPTS", ""),
            ("BB_COMPARE", env!("CARGO_BIN_EXE_bb-compare")),
        ],
        std::time::Duration::from_secs(60),
    )
}

#[test]
fn fleet_reads_quoted_words_of_a_hosts_line() {
    let d = TempDir::new("fleet-quotes");
    let fleet = fleet_checkout(&d);
    let hosts = d.join("hosts");
    std::fs::write(
        &hosts,
        "pi@h14 x86 dir='a b'   # a dir with a blank\n\
         pi@h15 dir=\"c \\\"d\\\" $HOME #e\" -o Port=2222\n\
         pi@h16 dir=f\\ g#h\n",
    )
    .unwrap();
    let run = run_fleet(&d, &fleet, &hosts);
    let args = std::fs::read(d.join("deploy.log"))
        .unwrap_or_else(|e| panic!("no deploy ran ({e}):\n{}\n{}", run.stdout, run.stderr));
    let args: Vec<String> = args
        .split(|&b| b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    for (host, dir, ssh_opts) in [
        ("pi@h14", "a b", " "),
        ("pi@h15", "c \"d\" $HOME #e", " -o Port=2222"),
        ("pi@h16", "f g", " "),
    ] {
        let i = args
            .iter()
            .position(|a| a == host)
            .unwrap_or_else(|| panic!("{host}: {args:?}\n{}", run.stderr));
        let job = &args[..=i];
        let start = job
            .iter()
            .rposition(|a| a.starts_with("REMOTE_DIR="))
            .unwrap();
        assert_eq!(job[start], format!("REMOTE_DIR={dir}"), "{args:?}");
        assert_eq!(job[start + 1], format!("SSH_OPTS={ssh_opts}"), "{args:?}");
    }
    for host in ["pi_h14", "pi_h15", "pi_h16"] {
        assert!(
            run.stdout.contains(&format!("\n{host}: ok\n")),
            "{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

#[test]
fn fleet_refuses_a_hosts_line_it_cannot_read_before_anything_runs() {
    let d = TempDir::new("fleet-bad-line");
    let fleet = fleet_checkout(&d);
    let hosts = d.join("hosts");
    std::fs::write(
        &hosts,
        "pi@h13 x86\n\
         pi@h14 x86 dir='a b\n\
         # fine\n\
         pi@h15 x86 -i '/my keys/id'\n",
    )
    .unwrap();
    let run = run_fleet(&d, &fleet, &hosts);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    let h = hosts.display();
    assert_eq!(
        run.stderr,
        format!(
            "fleet.sh: {h} line 2: a quote (') left open: pi@h14 x86 dir='a b\n\
             fleet.sh: {h} line 4: the ssh option '/my keys/id' holds a blank, which SSH_OPTS \
             cannot carry (put it in ~/.ssh/config): pi@h15 x86 -i '/my keys/id'\n"
        )
    );
    assert_eq!(run.stdout, "");
    assert!(!d.join("print-target.log").exists(), "a board was asked");
    assert!(!d.join("deploy.log").exists(), "a deploy ran");
    assert!(!d.join("results").exists(), "a results directory");
}

#[test]
#[ignore = "needs make cross (the x86_64 musl build is its default other build); run by make test"]
fn bench_ab_with_no_arguments_compares_sequential_and_interleaved_runs() {
    // Its default path (bb-zstd, quick, five repetitions, A/A and A/B), every run
    // shortened by AB_FLAGS.
    let script = format!("{}/scripts/bench-ab.sh", env!("CARGO_MANIFEST_DIR"));
    let short = "--forks 3 --iterations 1 --time 100ms --warmup 0 --size 100k --threads 1";
    let run = crate::support::run_bounded(
        &script,
        &[],
        &[("AB_FLAGS", short)],
        std::time::Duration::from_secs(600),
    );
    run.assert_ok();
    for row in [
        "| A/A | sequential | 4 |",
        "| A/A | interleaved | 4 |",
        "| A/B | sequential | 4 |",
        "| A/B | interleaved | 4 |",
    ] {
        assert!(run.stdout.contains(row), "{row}:\n{}", run.stdout);
    }
    assert!(run.stderr.contains("repetition 5 of 5"), "{}", run.stderr);
}

#[test]
fn bench_ab_power_with_no_arguments_tables_every_slowdown() {
    // Its default path (standard, seven repetitions of 0, 2, 5 and 10%), each run
    // shortened by AB_FLAGS, on this test build (it has the fault-injection feature).
    let script = format!("{}/scripts/bench-ab-power.sh", env!("CARGO_MANIFEST_DIR"));
    let short = "--forks 3 --iterations 1 --time 100ms --warmup 0 --size 100k --precision off";
    let zstd = env!("CARGO_BIN_EXE_bb-zstd");
    let run = crate::support::run_bounded(
        &script,
        &[],
        &[("AB_FLAGS", short), ("BB_FAULT_BIN", zstd)],
        std::time::Duration::from_secs(600),
    );
    run.assert_ok();
    for row in ["| 0 (a byte copy) | ", "| 2% | ", "| 5% | ", "| 10% | "] {
        let line = run.stdout.lines().find(|l| l.starts_with(row));
        let line = line.unwrap_or_else(|| panic!("{row}:\n{}", run.stdout));
        assert!(line.contains(" of 7 |"), "{line}");
    }
    // A build without the fault is refused: its table would be a lie.
    let run = crate::support::run_bounded(
        &script,
        &["--reps", "1"],
        &[("BB_FAULT_BIN", "/bin/true")],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("fault-injection"), "{}", run.stderr);
}

/// `run-all.sh --calibrate`: runs of one build back to back, then this board's noise
/// profile written where every later run reads it by default. A later run's JSON says
/// where its noise came from and carries the profile's floor and band; its answer says
/// its ± includes this board's run-to-run noise; before the calibration, it said that
/// part was not measured here.
#[test]
fn run_all_calibrate_writes_the_boards_noise_and_later_runs_use_it() {
    let dir = TempDir::new("calibrate");
    let config = dir.join("config");
    let config_env = ("XDG_CONFIG_HOME", config.to_str().unwrap());
    let later_run = |name: &str| {
        let out = dir.join(name);
        let mut args: Vec<&str> = ZSTD_FLAGS.split_whitespace().collect();
        args.extend(["--quick", "--forks", "3", "--idle-wait", "0", "--output"]);
        args.push(out.to_str().unwrap());
        let run = run_with(env!("CARGO_BIN_EXE_bb-zstd"), &args, &[config_env]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let text = run_with(
            env!("CARGO_BIN_EXE_bb-compare"),
            &[out.to_str().unwrap()],
            &[],
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        (run, text, json)
    };
    let (before, _, json) = later_run("before.json");
    assert_eq!(json[0]["boardbench"]["noiseSource"], "default");
    assert_eq!(json[0]["boardbench"]["runFloor"], 0.0);
    assert_eq!(
        json[0]["boardbench"]["variance"]["runs"],
        serde_json::Value::Null
    );
    assert!(
        before
            .stdout
            .contains("± is this run's forks: run-to-run unmeasured here"),
        "{}",
        before.stdout
    );

    let run = run_all_with(
        &["sh"],
        &dir,
        &["--quick", "--only", "zstd", "--calibrate", "2"],
        &[config_env, ("BB_FLAGS", "--forks 2 --idle-wait 0")],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let written = config.join("boardbench/noise.json");
    assert_eq!(
        run.stdout.lines().last(),
        Some(format!("noise profile: {}", written.display()).as_str()),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("calibration run 2 of 2"),
        "{}",
        run.stdout
    );
    let answer = run
        .stdout
        .split("== bb-compare: the answer ==\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no answer:\n{}", run.stdout));
    assert!(
        answer.starts_with("this board's noise, from 2 runs"),
        "{answer}"
    );
    assert!(answer.contains("bb-zstd: run to run ±"), "{answer}");
    assert!(answer.lines().all(|l| l.chars().count() <= 80), "{answer}");
    let profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    let zstd = &profile["binaries"]["bb-zstd"];
    assert_eq!(zstd["runs"], 2, "{profile}");
    assert!(zstd["band"].as_f64().unwrap() > 0.0, "{profile}");
    assert!(!zstd["variance"]["forks"].is_null(), "{profile}");

    let (after, compared, json) = later_run("after.json");
    let ours = &json[0]["boardbench"];
    assert_eq!(ours["noiseSource"], "calibration");
    assert_eq!(ours["runFloor"], zstd["runFloor"]);
    assert_eq!(ours["noiseBand"], zstd["band"]);
    assert_eq!(ours["noiseCalibration"]["runs"], 2);
    assert!(!ours["variance"]["runs"].is_null(), "{ours}");
    assert!(
        after
            .stdout
            .contains("± includes this board's run-to-run noise (2 runs, "),
        "{}",
        after.stdout
    );
    assert_eq!(compared.code, 0, "{}", compared.stderr);
}

/// A noise profile is this board's or none: one named by `--noise` or `BB_NOISE` that was
/// measured on another board, or holds a figure out of its range, is refused in one line
/// (exit 2) before anything runs; one at the default path that is another board's is
/// named in a warning and the run goes on with its defaults.
#[test]
fn a_noise_profile_of_another_board_or_out_of_range_is_refused() {
    let dir = TempDir::new("noise-refused");
    let profile = |board: &str, floor: &str| {
        format!(
            r#"{{"noiseProfile": 1, "board": "{board}", "measured": "2026-12-08",
            "binaries": {{"bb-zstd": {{"band": 0.1, "runFloor": {floor}, "runs": 3,
            "rows": 8, "variance": {{}}}}}}}}"#
        )
    };
    let other = dir.join("other.json");
    std::fs::write(
        &other,
        profile("a pi: Raspberry Pi 4, 4 cores, aarch64", "0.05"),
    )
    .unwrap();
    let zstd = env!("CARGO_BIN_EXE_bb-zstd");
    let quick = [
        "--quick",
        "--size",
        "64k",
        "--threads",
        "1",
        "--idle-wait",
        "0",
    ];
    let with = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = quick.to_vec();
        args.extend(extra);
        run_with(zstd, &args, env)
    };
    for run in [
        with(&["--noise", other.to_str().unwrap()], &[]),
        with(&[], &[("BB_NOISE", other.to_str().unwrap())]),
    ] {
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains("not this board's"), "{}", run.stderr);
        assert!(
            !run.stderr.contains("fork 1/"),
            "nothing ran: {}",
            run.stderr
        );
    }
    let crafted = dir.join("crafted.json");
    std::fs::write(&crafted, profile("x", "1e308")).unwrap();
    let run = with(&["--noise", crafted.to_str().unwrap()], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("runFloor"), "{}", run.stderr);
    // Another board's profile at the default path: a warning, and the defaults.
    let config = dir.join("config/boardbench");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::copy(&other, config.join("noise.json")).unwrap();
    let run = with(
        &["--format", "json"],
        &[("XDG_CONFIG_HOME", dir.join("config").to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("warning: the noise profile"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("\"noiseSource\" : \"default\""),
        "{}",
        run.stdout
    );
}
