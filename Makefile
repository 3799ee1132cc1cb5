# boardbench: build, cross-build, package, run and test. Nothing here needs Docker.
#   make run      build for this machine and run the quick suite
#   make test     every test: clippy, the docs' links, cargo tests, the four cross builds
#                 (and armv7 through zig), the cross-built binaries run under qemu-user
#                 and on emulated boards, and five minutes of fuzzing (docs/fuzzing.md)
#   make test-boards  the emulated Raspberry Pi boards alone (docs/boards.md; make test runs them too)

CARGO   ?= cargo
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
BINS    := $(patsubst src/bin/%.rs,%,$(wildcard src/bin/bb-*.rs))
ARMV7   := armv7-unknown-linux-gnueabihf
AARCH64 := aarch64-unknown-linux-musl
X86     := x86_64-unknown-linux-musl
ARMV6   := arm-unknown-linux-musleabihf
TARGETS := $(ARMV7) $(AARCH64) $(X86) $(ARMV6)
# The one nightly, for what stable cannot do: the zig builds of musl ARM targets (rustup
# ships no std for ARMv6 nor armv7 musl, so -Zbuild-std builds it from rust-src) and
# cargo fuzz. Pinned, so that a new nightly never breaks a build; scripts/setup.sh reads
# it from here and installs it.
NIGHTLY := nightly-2026-05-20
# CROSS=zig: armv7, aarch64 and x86 built by cargo-zigbuild into target/zig, for a laptop
# without Debian's cross compilers (another distribution, macOS). zig links glibc only
# dynamically, so its armv7 is static musl ($(ARMV7_ZIG)), built like armv6.
CROSS   ?= debian
export CROSS
ARMV7_ZIG := armv7-unknown-linux-musleabihf
# zig brings musl's start files, so Rust must not add its own (it has none for these).
# The nightly's own cargo first on PATH, as cargo-zigbuild runs the cargo PATH names; not
# $(CARGO), which under cargo (make deploy from a test) is stable's, from the environment.
# zig and cargo-zigbuild come from target/zig-venv (scripts/setup.sh), first on PATH.
ZIG_BIN  := $(CURDIR)/target/zig-venv/bin
ZIG_PATH := PATH="$(ZIG_BIN):$$PATH"
ZIG_STD := env -u CARGO -u RUSTC -u MAKEFLAGS RUSTFLAGS=-Clink-self-contained=no \
	PATH="$(ZIG_BIN):$$(dirname "$$(rustup which --toolchain $(NIGHTLY) cargo)"):$$PATH" \
	cargo zigbuild --release -Zbuild-std=std,panic_abort --target
# Every build for a board (so make dist) and make build have bb-seek's HTTPS: the cargo
# feature tls (rustls with ring), not a default one since it takes armv7's bb-seek past
# 2 MiB (docs/building.md, Dependencies); a bare cargo build is the small one, without.
FEATURES := --features tls
# make fuzz: each target in fuzz/fuzz_targets for FUZZ_TIME seconds. make test's fuzzing
# pass (test-fuzz): FUZZ_TEST_TIME seconds in all, shared by the targets.
FUZZ_TARGETS := $(patsubst fuzz/fuzz_targets/%.rs,%,$(wildcard fuzz/fuzz_targets/*.rs))
FUZZ_TIME ?= 60
FUZZ_TEST_TIME ?= 300
# deploy: the board (user@host, or a Host of ~/.ssh/config), its target (default: from
# the board's uname -m) and the profile (quick, standard or full; default standard).
# AGAINST (deploy and fleet): a directory of another build's bb-* binaries, run against
# this one's (docs/suite.md); read by the recipe's shell from the environment (make
# exports a command line's variables), so that any path reaches the script as it is.
HOST    ?=
TARGET  ?=
PROFILE ?=
AGAINST ?=

.PHONY: all build cross cross-armv7 cross-aarch64 cross-x86 cross-armv6 dist dist-armv7 dist-aarch64 dist-x86 dist-armv6 deploy run test test-clippy test-doc test-cargo test-cross test-boards test-fuzz sizes bench fuzz clean

all: build

build:
	@scripts/setup.sh native
	$(CARGO) build --release $(FEATURES)

cross: cross-armv7 cross-aarch64 cross-x86 cross-armv6

ifeq ($(CROSS),zig)
cross-armv7:
	@scripts/setup.sh zig-std
	CARGO_TARGET_DIR=target/zig $(ZIG_STD) $(ARMV7_ZIG) $(FEATURES)

cross-aarch64:
	@scripts/setup.sh zig
	$(ZIG_PATH) CARGO_TARGET_DIR=target/zig $(CARGO) zigbuild --release --target $(AARCH64) $(FEATURES)

cross-x86:
	@scripts/setup.sh zig
	$(ZIG_PATH) CARGO_TARGET_DIR=target/zig $(CARGO) zigbuild --release --target $(X86) $(FEATURES)
else ifeq ($(CROSS),debian)
cross-armv7:
	@scripts/setup.sh debian
	$(CARGO) build --release --target $(ARMV7) $(FEATURES)

cross-aarch64:
	@scripts/setup.sh debian
	$(CARGO) build --release --target $(AARCH64) $(FEATURES)

cross-x86:
	@scripts/setup.sh debian
	$(CARGO) build --release --target $(X86) $(FEATURES)
else
$(error CROSS=$(CROSS): expected debian (the default) or zig)
endif

# Pi Zero, Zero W and 1 (ARMv6 + VFPv2): zig whatever CROSS says.
cross-armv6:
	@scripts/setup.sh zig-std
	$(ZIG_STD) $(ARMV6) $(FEATURES)

# dist/boardbench-<version>-<target>.tar.gz: the binaries in bin/, scripts/run-all.sh,
# README.md, ARCHITECTURE.md, docs/ and BENCHMARKS.md (scripts/pack.sh, which follows CROSS too).
dist: dist-armv7 dist-aarch64 dist-x86 dist-armv6

dist-armv7: cross-armv7
	@scripts/pack.sh armv7

dist-aarch64: cross-aarch64
	@scripts/pack.sh aarch64

dist-x86: cross-x86
	@scripts/pack.sh x86

dist-armv6: cross-armv6
	@scripts/pack.sh armv6

# Build the board's dist, copy it over ssh, run the suite there, fetch the results.
deploy:
	@test -n "$(HOST)" || { echo "usage: make deploy HOST=user@host [TARGET=armv7|aarch64|x86|armv6] [PROFILE=quick|standard|full] [AGAINST=DIR]" >&2; exit 2; }
	scripts/deploy.sh $(if $(PROFILE),--$(PROFILE)) $(if $(TARGET),--target $(TARGET)) $${AGAINST:+--against "$$AGAINST"} $(HOST)

# Run the fleet playbook over an Ansible inventory (docs/ansible.md). AGAINST goes to
# Ansible as a JSON string (python3, which Ansible needs anyway, escapes it) tagged
# !unsafe: a quote, a backslash or a `", "remote_dir": "/etc` in the name cannot end
# the string or add a variable, nor `{{ }}` in it be templated.
.PHONY: fleet
fleet:
	@test -n "$(INVENTORY)" || { echo "usage: make fleet INVENTORY=inventory.ini [PROFILE=quick|standard|full] [AGAINST=DIR]" >&2; exit 2; }
	ANSIBLE_CALLBACK_RESULT_FORMAT=$${ANSIBLE_CALLBACK_RESULT_FORMAT:-yaml} ansible-playbook -i "$$INVENTORY" ansible/boardbench.yml $(if $(PROFILE),-e profile=$(PROFILE)) $${AGAINST:+-e "$$(python3 -c 'import json, os; print("{\"against\": !unsafe %s}" % json.dumps(os.environ["AGAINST"]))')"}

run: build
	scripts/run-all.sh --quick

# bb-seek against an S3 bucket: the bucket and the objects made where missing, then the
# run, results as run-all's (scripts/seek-s3.sh; the AWS settings from the environment).
.PHONY: seek-s3
# The usage comes before anything is built.
seek-s3:
	@test -n "$(BUCKET)" || { echo "usage: make seek-s3 BUCKET=name [PREFIX=path] [PROFILE=quick|standard|full]" >&2; exit 2; }
	$(MAKE) build
	scripts/seek-s3.sh $(if $(PROFILE),--$(PROFILE)) $(BUCKET) $(PREFIX)

test: test-clippy test-doc test-cargo test-cross test-fuzz

# make test's own release builds (the cross builds, the release pass, the boards): the
# release profile without its fat LTO, in 16 codegen units. The same code at the same
# opt-level, built in about half the time (BENCHMARKS.md, issue 23); the tests check what
# a build does, never its size or speed. Exported, so that a test's make deploy or make
# dist finds these builds as they are. make build, cross, dist and sizes: the real profile.
test-builds test-cross test-boards: export CARGO_PROFILE_RELEASE_LTO := off
test-builds test-cross test-boards: export CARGO_PROFILE_RELEASE_CODEGEN_UNITS := 16

# Clippy over every target (library, binaries, unit and integration tests) with the
# features the cargo tests build; a warning fails it. First, as it takes a minute where
# the tests take ten. setup.sh test adds rustup's clippy component where it is missing.
test-clippy:
	@scripts/setup.sh test
	$(CARGO) clippy --all-targets --features fault-injection,tls -- -D warnings

# The docs' links: every intra-doc link ([`item`]) in every item's doc, private ones
# included (the docs are for whoever changes the code), must lead somewhere, so that a
# doc naming a renamed or removed item fails here. A link from a public item's doc to a
# private one is no fault with the private items documented.
test-doc:
	RUSTDOCFLAGS="-D rustdoc::broken_intra_doc_links -A rustdoc::private_intra_doc_links" \
		$(CARGO) doc --no-deps --document-private-items --features fault-injection,tls

# fault-injection: the test-only BB_IPC_FAULT hooks, compiled into the debug binaries
# the cargo tests run, never into release or cross builds. With tls, as boards get it;
# then bb-seek's own unit tests again without, as a bare cargo build is (https refused):
# --lib alone, which builds the library's test harness and no binaries (bb-seek's
# bad_flags tests without tls run in test-cross, on the build it makes anyway).
# The integration tests are one crate, tests/it (modules per area, support/ shared).
test-cargo:
	@scripts/setup.sh test
	$(CARGO) test --features fault-injection,tls
	$(CARGO) test --lib -- seek:: bad_flags

# make cross's builds and the zig path's armv7 (into target/zig, so the Debian build
# stays as it is), the same commands in fewer cargo runs, two at once: the three Debian
# targets in one cargo, whose jobs fill one target's single-threaded links with
# another's compiles, then armv6; beside them, in target/zig, the zig armv7.
# Then the ignored tests, which need the cross builds (and qemu-user, qemu-system, nginx,
# moto, sshd, ansible, chromium): in the release profile, since run-all's and the fleet's
# default binaries are target/release. Only tests/it has ignored tests, so --test it: no
# release build of the library's and the binaries' empty unit-test harnesses. The same
# build, without features, then runs bb-seek's bad_flags tests as a bare cargo build is.
.PHONY: test-builds test-builds-debian test-builds-zig
test-builds:
	@scripts/setup.sh debian
	@scripts/setup.sh zig-std
	$(MAKE) -j2 test-builds-debian test-builds-zig

# (Without make's MAKEFLAGS: its jobserver's descriptors are not passed to a cargo
# that is not $(MAKE), which cargo would warn of; each cargo then runs its own jobs.)
test-builds-debian:
	env -u MAKEFLAGS $(CARGO) build --release --target $(ARMV7) --target $(AARCH64) --target $(X86) $(FEATURES)
	$(MAKE) cross-armv6

test-builds-zig:
	$(MAKE) cross-armv7 CROSS=zig

# The emulated boards (boards::, make test-boards' tests) among them. In two runs side by
# side, since many wait (for ssh, a board's boot, moto): the tests that write the
# repository's dist/ and results/ (make deploy, make fleet, fleet.sh, the playbook) one
# after another, the rest (qemu-user, the boards, nginx, moto, chromium) beside them;
# make -Otarget prints each run's output whole as it ends.
REPOSITORY_TESTS := ansible:: suite:: boards::make_deploy
.PHONY: test-ignored-repository test-ignored-rest
test-cross: test-builds
	@scripts/setup.sh test
	@scripts/setup.sh boards
	env -u MAKEFLAGS $(CARGO) test --release --test it --no-run
	$(MAKE) -j2 -Otarget test-ignored-repository test-ignored-rest
	$(CARGO) test --release --test it -- seek::bad_flags

test-ignored-repository:
	env -u MAKEFLAGS $(CARGO) test --release --test it -- --ignored --test-threads 1 $(REPOSITORY_TESTS)

test-ignored-rest:
	env -u MAKEFLAGS $(CARGO) test --release --test it -- --ignored --test-threads 1 $(addprefix --skip ,$(REPOSITORY_TESTS))

# The emulated Raspberry Pi boards (docs/boards.md): a Pi Zero, a Pi 2 (and a 512 MB one)
# and a Pi 3 under qemu-system, and a networked -M virt board that make deploy and
# scripts/fleet.sh reach over ssh, on Debian's own kernels (scripts/setup.sh boards fetches
# them into target/boards), each running its build (armv6, armv7, aarch64: the Debian
# two in one cargo, then armv6 through zig) and tests/boards/*.sh; tests/it/boards.rs
# checks their consoles.
test-boards:
	@scripts/setup.sh debian
	@scripts/setup.sh zig-std
	@scripts/setup.sh boards
	$(CARGO) build --release --target $(ARMV7) --target $(AARCH64) $(FEATURES)
	$(MAKE) cross-armv6
	$(CARGO) test --release --test it -- --ignored --test-threads 2 boards:: --nocapture

# Sizes of the stripped release binaries per target, for docs/building.md.
sizes: cross
	@for t in $(TARGETS); do for b in $(BINS); do \
		printf '%-32s %-12s %8s bytes\n' $$t $$b $$(stat -c %s target/$$t/release/$$b); \
	done; done

bench: build
	@scripts/setup.sh bench
	scripts/bench-zstd.sh
	scripts/bench-ipc.sh
	scripts/bench-rpc.sh
	scripts/bench-rpc-sweep.sh
	scripts/bench-seek.sh

# Coverage-guided fuzzing (nightly, libFuzzer): the seeds of fuzz/corpus/TARGET (kept in
# the repository, replayed by make test) and what it grows in fuzz/work/TARGET; a crash
# is saved in fuzz/artifacts/TARGET and stops the run (docs/fuzzing.md). Built as
# cargo-fuzz builds by default: optimised, with AddressSanitizer, debug assertions and
# overflow checks (as the replay on stable has them: an overflow the replay would catch
# is a crash here too), all targets in one cargo before the first runs; an input that
# takes over 10 s is a crash too (a hang), so a run ends within its time.
fuzz:
	@scripts/setup.sh fuzz
	cd fuzz && cargo +$(NIGHTLY) fuzz build
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/work/$$t && \
		(cd fuzz && cargo +$(NIGHTLY) fuzz run $$t work/$$t corpus/$$t -- \
			-max_total_time=$(FUZZ_TIME) -timeout=10 -print_final_stats=1) || exit 1; \
	done

# make test's fuzzing pass: every target, FUZZ_TEST_TIME (300) seconds shared among them
# (21 s each for 14), after their build (4 to 7 minutes from nothing on 2 busy cores).
test-fuzz:
	$(MAKE) fuzz FUZZ_TIME=$$(( $(FUZZ_TEST_TIME) / $(words $(FUZZ_TARGETS)) ))

clean:
	$(CARGO) clean
	rm -rf dist
