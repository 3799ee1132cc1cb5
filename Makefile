# boardbench: build, cross-build, package, run and test. Nothing here needs Docker.
#   make run      build for this machine and run the quick suite
#   make test     every test: cargo tests, the three cross builds, and the cross-built
#                 binaries run under qemu-user

CARGO   ?= cargo
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
BINS    := $(patsubst src/bin/%.rs,%,$(wildcard src/bin/bb-*.rs))
ARMV7   := armv7-unknown-linux-gnueabihf
AARCH64 := aarch64-unknown-linux-musl
X86     := x86_64-unknown-linux-musl
TARGETS := $(ARMV7) $(AARCH64) $(X86)
# The nightly toolchain for what stable cannot do (cargo fuzz), pinned.
NIGHTLY ?= nightly-2026-05-20
# make fuzz: each target in fuzz/fuzz_targets for FUZZ_TIME seconds.
FUZZ_TARGETS := $(patsubst fuzz/fuzz_targets/%.rs,%,$(wildcard fuzz/fuzz_targets/*.rs))
FUZZ_TIME ?= 60
# deploy: the board (user@host, or a Host of ~/.ssh/config), its target (default: from
# the board's uname -m) and the profile (quick, standard or full; default standard).
HOST    ?=
TARGET  ?=
PROFILE ?=

.PHONY: all build cross cross-armv7 cross-aarch64 cross-x86 dist dist-armv7 dist-aarch64 dist-x86 deploy run test test-cargo test-cross sizes bench fuzz clean

all: build

build:
	@scripts/setup.sh native
	$(CARGO) build --release

cross: cross-armv7 cross-aarch64 cross-x86

cross-armv7:
	@scripts/setup.sh cross
	$(CARGO) build --release --target $(ARMV7)

cross-aarch64:
	@scripts/setup.sh cross
	$(CARGO) build --release --target $(AARCH64)

cross-x86:
	@scripts/setup.sh cross
	$(CARGO) build --release --target $(X86)

# dist/boardbench-<version>-<target>.tar.gz: the binaries in bin/, scripts/run-all.sh,
# README.md, docs/ and BENCHMARKS.md (scripts/pack.sh).
dist: dist-armv7 dist-aarch64 dist-x86

dist-armv7: cross-armv7
	@scripts/pack.sh $(ARMV7)

dist-aarch64: cross-aarch64
	@scripts/pack.sh $(AARCH64)

dist-x86: cross-x86
	@scripts/pack.sh $(X86)

# Build the board's dist, copy it over ssh, run the suite there, fetch the results.
deploy:
	@test -n "$(HOST)" || { echo "usage: make deploy HOST=user@host [TARGET=armv7|aarch64|x86] [PROFILE=quick|standard|full]" >&2; exit 2; }
	scripts/deploy.sh $(if $(PROFILE),--$(PROFILE)) $(if $(TARGET),--target $(TARGET)) $(HOST)

# Run the fleet playbook over an Ansible inventory (docs/ansible.md).
.PHONY: fleet
fleet:
	@test -n "$(INVENTORY)" || { echo "usage: make fleet INVENTORY=inventory.ini [PROFILE=quick|standard|full]" >&2; exit 2; }
	ansible-playbook -i $(INVENTORY) ansible/boardbench.yml $(if $(PROFILE),-e profile=$(PROFILE))

run: build
	scripts/run-all.sh --quick

test: test-cargo test-cross

# fault-injection: the test-only BB_IPC_FAULT hooks, compiled into the debug binaries
# the cargo tests run, never into release or cross builds.
test-cargo:
	@scripts/setup.sh test
	$(CARGO) test --features fault-injection

test-cross: cross
	@scripts/setup.sh test
	$(CARGO) test --release -- --ignored --test-threads 1

# Sizes of the stripped release binaries per target, for README.
sizes: cross
	@for t in $(TARGETS); do for b in $(BINS); do \
		printf '%-32s %-12s %8s bytes\n' $$t $$b $$(stat -c %s target/$$t/release/$$b); \
	done; done

bench: build
	@scripts/setup.sh bench
	scripts/bench-zstd.sh
	scripts/bench-ipc.sh
	scripts/bench-rpc.sh
	scripts/bench-seek.sh

# Coverage-guided fuzzing (nightly, libFuzzer): the seeds of fuzz/corpus/TARGET (kept in
# the repository, replayed by make test) and what it grows in fuzz/work/TARGET; a crash
# is saved in fuzz/artifacts/TARGET and stops the run.
fuzz:
	@NIGHTLY=$(NIGHTLY) scripts/setup.sh fuzz
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/work/$$t && \
		(cd fuzz && cargo +$(NIGHTLY) fuzz run -O $$t work/$$t corpus/$$t -- \
			-max_total_time=$(FUZZ_TIME) -print_final_stats=1) || exit 1; \
	done

clean:
	$(CARGO) clean
	rm -rf dist
