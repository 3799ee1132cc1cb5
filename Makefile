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
# What a board needs besides the binaries.
BOARD_FILES := README.md BENCHMARKS.md $(wildcard scripts/run-all.sh)

.PHONY: all build cross cross-armv7 cross-aarch64 cross-x86 dist run test test-cargo test-cross sizes bench clean

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

dist: cross
	@rm -rf dist && mkdir -p dist
	@for t in $(TARGETS); do \
		d=dist/boardbench-$(VERSION)-$$t; \
		mkdir -p $$d/bin && \
		for b in $(BINS); do cp target/$$t/release/$$b $$d/bin/; done && \
		for f in $(BOARD_FILES); do mkdir -p $$d/$$(dirname $$f) && cp $$f $$d/$$f; done && \
		tar -C dist -czf $$d.tar.gz $$(basename $$d) && rm -rf $$d && \
		echo "dist/boardbench-$(VERSION)-$$t.tar.gz"; \
	done

run: build
	./target/release/bb-zstd --quick

test: test-cargo test-cross

test-cargo:
	@scripts/setup.sh native
	$(CARGO) test

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

clean:
	$(CARGO) clean
	rm -rf dist
