//! The fleet playbook, tested for real: ansible-playbook (scripts/setup.sh test puts it in
//! target/tools-venv) runs ansible/boardbench.yml against two OpenSSH servers on
//! 127.0.0.1 as two boards, with a board that does not answer and one refused for its
//! architecture; as Ansible users run it (--limit, --check, each tag alone, a second
//! deploy, a bad variable, the role imported from their own playbook); and ansible-lint
//! passes on ansible/ at its production profile. What `make fleet` hands ansible-playbook
//! (a crafted `AGAINST`) is checked with a stand-in that prints its arguments.

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
    run_ansible_with(boards, cwd, exe, args, &[])
}

/// [`run_ansible`] with more variables in the environment.
fn run_ansible_with(
    boards: &Boards,
    cwd: &Path,
    exe: &str,
    args: &[&str],
    more: &[(&str, &str)],
) -> Run {
    let mut env = ansible_env(boards);
    env.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
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

/// The lines a task printed, under its `TASK [boardbench : name]` header.
fn task_output<'a>(stdout: &'a str, task: &str) -> Vec<&'a str> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with(&format!("TASK [boardbench : {task}]")))
        .skip(1)
        .take_while(|l| !l.starts_with("TASK [") && !l.starts_with("PLAY "))
        .collect()
}

/// The play's printed comparison: the answer under its marker, then the table, as lines
/// of text (not a JSON list of strings) of at most 120 columns.
fn check_printed_comparison(stdout: &str) {
    let answer = task_output(stdout, "Show the answer");
    let table = task_output(stdout, "Show the table (compare.txt)");
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
             wrongarch ansible_host=127.0.0.1 ansible_port={p1} target=armv7\n\
             [nas]\n\
             nas ansible_host=127.0.0.1 ansible_port={p1}\n",
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
        run.code, 4,
        "an unreachable board makes Ansible's exit status 4 (2 for failed ones alone)\n{}\n{}",
        run.stdout, run.stderr
    );
    for good in ["board1", "board2"] {
        assert!(recap(&run, good).contains(" failed=0 "), "{}", run.stdout);
    }
    // The board that does not answer is unreachable, as tools that count them expect.
    let dead = recap(&run, "dead");
    assert!(
        dead.contains(" unreachable=1 ")
            && dead.contains(" failed=0 ")
            && dead.contains(" ignored=0"),
        "{dead}"
    );
    assert!(
        recap(&run, "wrongarch").contains(" failed=1 "),
        "{}",
        run.stdout
    );
    // Only the group boards: the inventory's other hosts are left alone.
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("nas ")),
        "{}",
        run.stdout
    );
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

    // against: another build's binaries (here the same build's, from a folder named with
    // a space and a quote) beside the dist on both boards, with Python and without, and
    // each binary run against them: its answer block ends with the A/B lines.
    let other = d.join("the old build's");
    std::fs::create_dir_all(&other).unwrap();
    let musl = Path::new(REPO).join("target/x86_64-unknown-linux-musl/release");
    for name in ["bb-zstd", "bb-ipc", "bb-rpc", "bb-seek"] {
        std::os::unix::fs::symlink(musl.join(name), other.join(name)).unwrap();
    }
    let before = runs_in(&results);
    let run = run_ansible(
        &boards,
        cwd.path(),
        "ansible-playbook",
        &[
            "-i",
            inv.to_str().unwrap(),
            &format!("{REPO}/ansible/boardbench.yml"),
            "--limit",
            "board1,board2",
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
            "-e",
            &serde_json::json!({ "against": other }).to_string(),
        ],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let fleet = new_run_dir(&results, &before);
    for board in ["board1", "board2"] {
        crate::suite::check_against_results(&board_results(&fleet, board), "../against");
    }
    // Python's board gets the binaries that run; deploy.sh's, every one of the folder.
    assert!(d.join("home-sshd1/boardbench/against/bb-zstd").is_file());
    assert!(d.join("remote 2/against/bb-zstd").is_file());
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

/// Every file under `dirs` with its size and modification time, Ansible's own temporary
/// files (~/.ansible) aside: what a play that changes nothing leaves as it was.
fn snapshot(dirs: &[PathBuf]) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut all = Vec::new();
    let mut todo = dirs.to_vec();
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            if e.file_name() == ".ansible" {
                continue;
            }
            if m.is_dir() {
                todo.push(e.path());
            }
            all.push((e.path(), m.len(), m.modified().unwrap()));
        }
    }
    all.sort();
    all
}

#[test]
#[ignore = "needs make cross, openssh-server and ansible (scripts/setup.sh test); run by make test"]
fn playbook_takes_ansible_users_habits_limit_check_tags_and_the_role() {
    x86_musl_bb_zstd();
    venv_bin();
    let boards = start_boards();
    let d = boards.dir.path();
    let inv = inventory(
        &boards,
        "[second]\nboard2\n",
        &format!("bb_flags_zstd={ZSTD_FLAGS}"),
    );
    let results = d.join("results");
    let cwd = TempDir::new("ansible-cwd");
    let flags = format!("bb_flags='{SHORT_TIMING}'");
    let results_var = format!("results_dir={}", results.display());
    let play = |extra: &[&str]| -> Run {
        let mut args = vec![
            "-i",
            inv.to_str().unwrap(),
            concat!(env!("CARGO_MANIFEST_DIR"), "/ansible/boardbench.yml"),
            "-e",
            "profile=quick",
            "-e",
            "only=zstd",
            "-e",
            &flags,
            "-e",
            &results_var,
            "-e",
            "poll_interval=1",
        ];
        args.extend_from_slice(extra);
        run_ansible(&boards, cwd.path(), "ansible-playbook", &args)
    };
    let homes = [d.join("home-sshd1"), d.join("home-sshd2")];
    let deployed = |home: &Path| home.join("boardbench").exists();
    let dist = Path::new(REPO).join("dist/boardbench-0.1.0-x86_64-unknown-linux-musl.tar.gz");

    // A typo in a variable is refused on the controller, before anything is copied.
    let run = play(&["-e", "only=zsdt"]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("boardbench_only") && run.stdout.contains("zsdt"),
        "names the variable and the value: {}",
        run.stdout
    );
    assert!(!deployed(&homes[0]) && !deployed(&homes[1]) && !results.exists());

    // The build tag alone: the dist, nothing on the boards, no results folder.
    let run = play(&["--tags", "build"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(dist.is_file());
    assert!(!deployed(&homes[0]) && !deployed(&homes[1]) && !results.exists());

    // Check mode: each board's plan, its estimate from the board, and nothing changed.
    let watched = [homes[0].clone(), homes[1].clone(), results.clone()];
    let before = (
        snapshot(&watched),
        std::fs::metadata(&dist).unwrap().modified().unwrap(),
    );
    let run = play(&["--check"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let plan = task_output(&run.stdout, "Show the board's plan").join("\n");
    for want in [
        "board1: x86_64, the x86 build",
        "board2: x86_64, the x86 build",
        "would copy dist/boardbench-0.1.0-x86_64-unknown-linux-musl.tar.gz",
        "would run: run-all.sh --quick --only zstd",
        "run-all: 1 binaries, profile quick, estimated duration: about ",
    ] {
        assert!(plan.contains(want), "{want:?} in the plan:\n{}", run.stdout);
    }
    for board in ["board1", "board2"] {
        assert!(recap(&run, board).contains(" changed=0 "), "{}", run.stdout);
    }
    let after = (
        snapshot(&watched),
        std::fs::metadata(&dist).unwrap().modified().unwrap(),
    );
    assert!(
        before == after,
        "--check changed files:\n{before:#?}\n{after:#?}"
    );

    // --limit to one board, each stage's tag alone: deploy, then run without copying,
    // then fetch what that run left on the board.
    let run = play(&["--limit", "board1", "--tags", "deploy"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("board2 ")),
        "{}",
        run.stdout
    );
    assert!(deployed(&homes[0]) && !deployed(&homes[1]) && !results.exists());
    let run = play(&["--limit", "board1", "--tags", "run"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(task_output(&run.stdout, "Copy the dist to the board").is_empty());
    assert_eq!(runs_in(&homes[0].join("boardbench/results")).len(), 1);
    assert!(!results.exists(), "run alone fetches nothing");
    let run = play(&["--limit", "board1", "--tags", "fetch"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let fetched = new_run_dir(&results, &[]);
    check_zstd_results(&board_results(&fetched, "board1"));
    assert!(!fetched.join("board2").exists() && !fetched.join("compare.txt").exists());

    // --limit to a group: board2 alone is built for and deployed.
    let run = play(&["--limit", "second", "--tags", "build,deploy"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("board1 ")),
        "{}",
        run.stdout
    );
    assert!(deployed(&homes[1]));

    // The role imported from a playbook of one's own, its variables given there; both
    // boards deployed already with this dist, so every deploy step is ok, not changed.
    let own = d.join("own.yml");
    std::fs::write(
        &own,
        format!(
            "- name: My boards\n  hosts: boards\n  gather_facts: false\n  tasks:\n\
             \x20   - name: Benchmark them\n      ansible.builtin.import_role:\n        name: boardbench\n\
             \x20     vars:\n        boardbench_profile: quick\n        boardbench_only: [zstd]\n\
             \x20       boardbench_flags: \"{SHORT_TIMING}\"\n        boardbench_results_dir: {r}\n\
             \x20       boardbench_poll_interval: 1\n",
            r = results.display()
        ),
    )
    .unwrap();
    let roles = format!("{REPO}/ansible/roles");
    let before = runs_in(&results);
    let run = run_ansible_with(
        &boards,
        cwd.path(),
        "ansible-playbook",
        &["-i", inv.to_str().unwrap(), own.to_str().unwrap()],
        &[("ANSIBLE_ROLES_PATH", &roles)],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for task in [
        "Build and pack each target once, on the controller",
        "Create remote_dir on the board",
        "Copy the dist to the board",
        "Look for the unpacked dist on the board",
        "Remove the older dist of the same name",
        "Unpack the dist on the board",
    ] {
        let lines = task_output(&run.stdout, task);
        assert!(!lines.is_empty(), "{task}: not run\n{}", run.stdout);
        assert!(
            !lines.iter().any(|l| l.starts_with("changed:")),
            "{task}: changed on the second deploy: {lines:#?}"
        );
    }
    for board in ["board1", "board2"] {
        assert!(recap(&run, board).contains(" failed=0 "), "{}", run.stdout);
    }
    let fleet = new_run_dir(&results, &before);
    check_compare(&fleet);
    check_printed_comparison(&run.stdout);

    // The compare tag alone: the last results compared again, no new folder.
    let before = runs_in(&results);
    std::fs::remove_file(fleet.join("compare.txt")).unwrap();
    let run = play(&["--tags", "compare"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(runs_in(&results), before);
    check_compare(&fleet);
    check_printed_comparison(&run.stdout);
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
        &["--offline", "--profile", "production", "ansible/"],
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

#[test]
fn make_fleet_hands_against_to_ansible_as_one_untemplated_string() {
    use std::os::unix::fs::PermissionsExt;
    // An ansible-playbook first on PATH that prints its arguments, one a line.
    let dir = TempDir::new("fleet-against");
    let fake = dir.join("ansible-playbook");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap()
    );
    // A quote ends a hand-made JSON string, a backslash changes the path, and the rest
    // would add a variable or be templated.
    let crafted = r#"/tmp/a"b\c", "remote_dir": "/etc {{ lookup('pipe', 'id') }}"#;
    let run = crate::support::run_bounded(
        "make",
        &[
            "-s",
            "-C",
            REPO,
            "fleet",
            "INVENTORY=/nonexistent inv",
            &format!("AGAINST={crafted}"),
        ],
        &[("PATH", &path)],
        std::time::Duration::from_secs(60),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let args: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        args[..3],
        ["-i", "/nonexistent inv", "ansible/boardbench.yml"],
        "{args:?}"
    );
    let extra = args.iter().skip_while(|a| **a != "-e").nth(1).expect("-e");
    // Tagged !unsafe (never templated), and otherwise JSON: exactly the one variable.
    let json = extra.replacen(": !unsafe ", ": ", 1);
    assert_ne!(&json, extra, "{extra}");
    let vars: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(vars, serde_json::json!({ "against": crafted }), "{extra}");
}
