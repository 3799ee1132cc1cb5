//! The fleet playbook, tested for real: ansible-playbook (scripts/setup.sh test puts it in
//! target/tools-venv) runs ansible/boardbench.yml against two OpenSSH servers on
//! 127.0.0.1 as two boards, with a board that does not answer and one refused for its
//! architecture; and ansible-lint passes on ansible/ at its default profile.

use crate::support::boards::{
    check_default_suite, check_zstd_results, start_boards, user, x86_musl_bb_zstd, Boards, REPO,
    SHORT_TIMING, ZSTD_FLAGS,
};
use crate::support::{free_port, run_in, Run, TempDir};
use std::path::{Path, PathBuf};

/// The venv's bin directory, where setup.sh installs ansible-core and ansible-lint.
fn venv_bin() -> PathBuf {
    let bin = Path::new(REPO).join("target/tools-venv/bin");
    assert!(
        bin.join("ansible-playbook").exists() && bin.join("ansible-lint").exists(),
        "{} lacks ansible-playbook or ansible-lint: run scripts/setup.sh test",
        bin.display()
    );
    bin
}

/// The environment of an Ansible command: the venv first on PATH, Ansible's own files
/// in the test's folder, and no ssh master left running after the play.
fn ansible_env(boards: &Boards) -> Vec<(String, String)> {
    let path = format!(
        "{}:{}",
        venv_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    vec![
        ("PATH".into(), path),
        (
            "ANSIBLE_HOME".into(),
            boards.dir.join("ansible-home").display().to_string(),
        ),
        ("ANSIBLE_SSH_ARGS".into(), "-o ControlMaster=no".into()),
        ("ANSIBLE_NOCOLOR".into(), "1".into()),
        ("ANSIBLE_HOST_KEY_CHECKING".into(), "False".into()),
        // As docs/ansible.md says to run it: the playbook's own config (the YAML result
        // format, in which the comparison prints as lines of text).
        (
            "ANSIBLE_CONFIG".into(),
            Path::new(REPO)
                .join("ansible/ansible.cfg")
                .display()
                .to_string(),
        ),
    ]
}

/// Runs `exe args` in `cwd` with Ansible's environment.
fn run_ansible(boards: &Boards, cwd: &Path, exe: &str, args: &[&str]) -> Run {
    let env = ansible_env(boards);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    run_in(cwd, exe, args, &env)
}

/// An inventory of the two boards (`board1`, `board2`) and the lines given, every host
/// reached with the boards' key; `vars` go to [all:vars].
fn inventory(boards: &Boards, hosts: &str, vars: &str) -> PathBuf {
    let d = boards.dir.path();
    let path = d.join(format!("inventory-{}.ini", free_port()));
    std::fs::write(
        &path,
        format!(
            "[boards]\n\
             board1 ansible_host=127.0.0.1 ansible_port={p1}\n\
             board2 ansible_host=127.0.0.1 ansible_port={p2}\n\
             {hosts}\n\
             [all:vars]\n\
             ansible_user={me}\n\
             ansible_ssh_private_key_file={d}/id_ed25519\n\
             ansible_ssh_common_args='-o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o ConnectTimeout=10'\n\
             {vars}\n",
            p1 = boards.servers[0].port,
            p2 = boards.servers[1].port,
            me = user(),
            d = d.display(),
        ),
    )
    .unwrap();
    path
}

/// The one `ansible-*` folder under `results` that is not in `before`.
fn new_run_dir(results: &Path, before: &[PathBuf]) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap_or_else(|e| panic!("{}: {e}", results.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("ansible-")
                && !before.contains(p)
        })
        .collect();
    assert_eq!(runs.len(), 1, "one folder for the whole play: {runs:?}");
    let name = runs[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.len() == "ansible-20261130T091656Z".len() && name.ends_with('Z'),
        "a UTC date-time: {name}"
    );
    runs[0].clone()
}

fn runs_in(results: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(results)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// The one results directory a board brought back to `run/<board>/`.
fn board_results(run: &Path, board: &str) -> PathBuf {
    let dirs = runs_in(&run.join(board));
    assert_eq!(dirs.len(), 1, "{board}: {dirs:?}");
    dirs[0].clone()
}

/// The recap line of `host`.
fn recap<'a>(run: &'a Run, host: &str) -> &'a str {
    run.stdout
        .lines()
        .rev()
        .find(|l| l.starts_with(&format!("{host} ")) && l.contains(" : ok="))
        .unwrap_or_else(|| panic!("no recap line for {host}:\n{}", run.stdout))
}

/// The compare table, markdown and chart of a run, each naming both boards.
fn check_compare(run: &Path) {
    let table = std::fs::read_to_string(run.join("compare.txt")).unwrap();
    let header = table
        .lines()
        .find(|l| l.starts_with("Benchmark"))
        .unwrap_or_else(|| panic!("no header:\n{table}"));
    assert!(
        header.contains("board1") && header.contains("board2"),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("bb.zstd.compress")),
        "{table}"
    );
    let markdown = std::fs::read_to_string(run.join("compare.md")).unwrap();
    let header = markdown.lines().find(|l| l.starts_with('|')).unwrap_or("");
    assert!(
        header.contains("board1") && header.contains("board2"),
        "{markdown}"
    );
    let svg = std::fs::read_to_string(run.join("compare.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.starts_with("<?xml"), "{svg}");
    // Each binary's headline panel comes first, whichever of its rows that is.
    assert!(svg.contains("bb.zstd."), "{svg}");
}

/// The play's printed comparison: the answer under its marker, then the table, as lines
/// of text (not a JSON list of strings) of at most 120 columns.
fn check_printed_comparison(stdout: &str) {
    let section = |task: &str| -> Vec<&str> {
        stdout
            .lines()
            .skip_while(|l| !l.starts_with(&format!("TASK [{task}]")))
            .skip(1)
            .take_while(|l| !l.starts_with("TASK [") && !l.starts_with("PLAY "))
            .collect()
    };
    let answer = section("Show the answer");
    let table = section("Show the table (compare.txt)");
    assert!(
        answer
            .iter()
            .any(|l| l.trim() == "== bb-compare: the answer =="),
        "{stdout}"
    );
    assert!(
        answer.iter().any(|l| l.contains("bb.zstd")),
        "the answer names the binary: {answer:#?}"
    );
    assert!(
        table
            .iter()
            .any(|l| l.trim_start().starts_with("Benchmark")),
        "{stdout}"
    );
    for l in answer.iter().chain(&table) {
        assert!(l.chars().count() <= 120, "wider than 120: {l:?}");
        assert!(
            !l.contains("\\n") && !l.contains("\"msg\": ["),
            "not text: {l:?}"
        );
    }
}

#[test]
#[ignore = "needs make cross, openssh-server and ansible (scripts/setup.sh test); run by make test"]
fn playbook_runs_the_boards_and_reports_the_ones_that_fail() {
    x86_musl_bb_zstd();
    venv_bin();
    let boards = start_boards();
    let d = boards.dir.path();
    // board2 has no Python as far as the play knows: the raw path, through deploy.sh.
    let inv = inventory(
        &boards,
        &format!(
            "board2 bb_python=false remote_dir='{d}/remote 2'\n\
             dead ansible_host=127.0.0.1 ansible_port={dead}\n\
             wrongarch ansible_host=127.0.0.1 ansible_port={p1} target=armv7\n",
            d = d.display(),
            dead = free_port(),
            p1 = boards.servers[0].port,
        ),
        &format!("bb_flags_zstd={ZSTD_FLAGS}"),
    );
    let results = d.join("results");
    let cwd = TempDir::new("ansible-cwd");
    let run = run_ansible(
        &boards,
        cwd.path(),
        "ansible-playbook",
        &[
            "-i",
            inv.to_str().unwrap(),
            &format!("{REPO}/ansible/boardbench.yml"),
            "-e",
            "profile=quick",
            "-e",
            "only=zstd",
            "-e",
            &format!("bb_flags='{SHORT_TIMING}'"),
            "-e",
            &format!("results_dir={}", results.display()),
            "-e",
            "poll_interval=1",
        ],
    );
    assert_eq!(
        run.code, 2,
        "failed boards make the exit status 2\n{}\n{}",
        run.stdout, run.stderr
    );
    for good in ["board1", "board2"] {
        assert!(recap(&run, good).contains(" failed=0 "), "{}", run.stdout);
    }
    for bad in ["dead", "wrongarch"] {
        assert!(recap(&run, bad).contains(" failed=1 "), "{}", run.stdout);
    }
    let fleet = new_run_dir(&results, &[]);
    for board in ["board1", "board2"] {
        check_zstd_results(&board_results(&fleet, board));
    }
    assert!(!fleet.join("dead").exists() && !fleet.join("wrongarch").exists());
    check_compare(&fleet);
    check_printed_comparison(&run.stdout);
    let failed = std::fs::read_to_string(fleet.join("failed.txt")).unwrap();
    let lines: Vec<&str> = failed.lines().collect();
    assert_eq!(lines.len(), 2, "{failed}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("dead: ") && l.contains("unreachable")),
        "{failed}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("wrongarch: ")
            && l.contains("reports 'x86_64'")
            && l.contains("target=x86 would")),
        "{failed}"
    );
    // remote_dir unset: the board's home, expanded there; given: that folder.
    assert!(d.join("home-sshd1/boardbench/results").is_dir());
    assert!(d.join("remote 2/results").is_dir());
    assert!(!cwd.join("~").exists() && !Path::new(REPO).join("~").exists());
}

#[test]
#[ignore = "needs make cross, openssh-server and ansible (scripts/setup.sh test); run by make test"]
fn make_fleet_with_only_an_inventory_runs_the_standard_suite_and_exits_zero() {
    x86_musl_bb_zstd();
    venv_bin();
    let boards = start_boards();
    // Only the timing shortened, through the inventory: no -e at all.
    let inv = inventory(&boards, "", &format!("bb_flags='{SHORT_TIMING}'"));
    let results = Path::new(REPO).join("results");
    let before = runs_in(&results);
    let run = run_ansible(
        &boards,
        Path::new(REPO),
        "make",
        &["-s", "fleet", &format!("INVENTORY={}", inv.display())],
    );
    let made: Vec<TempDir> = runs_in(&results)
        .into_iter()
        .filter(|p| !before.contains(p))
        .map(TempDir)
        .collect();
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let fleet = new_run_dir(&results, &before);
    assert_eq!(made.len(), 1);
    for board in ["board1", "board2"] {
        assert!(recap(&run, board).contains(" failed=0 "), "{}", run.stdout);
        check_default_suite(&board_results(&fleet, board));
    }
    check_compare(&fleet);
    check_printed_comparison(&run.stdout);
    assert!(!fleet.join("failed.txt").exists());
    for home in ["home-sshd1", "home-sshd2"] {
        assert!(boards.dir.join(home).join("boardbench/results").is_dir());
    }
}

#[test]
#[ignore = "needs ansible-lint (scripts/setup.sh test); run by make test"]
fn ansible_lint_passes_on_the_playbook() {
    let dir = TempDir::new("ansible-lint");
    let bin = venv_bin();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = run_in(
        Path::new(REPO),
        bin.join("ansible-lint").to_str().unwrap(),
        &["--offline", "ansible/"],
        &[
            ("PATH", &path),
            ("NO_COLOR", "1"),
            ("HOME", dir.path().to_str().unwrap()),
        ],
    );
    run.assert_ok();
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("Passed: 0 failure(s), 0 warning(s)"), "{all}");
}
