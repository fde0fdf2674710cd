# The front door: every target sets up what it needs on a fresh Debian 12 machine.
BUILD ?= build
JOBS ?= 2
PREFIX ?= /usr/local

.PHONY: all deps test-deps bench-deps configure build test demo install bench clean asan

all: build

# What building and running hotline needs; the test and bench sets add their toolchains and
# peers (scripts/install-deps.sh).
deps:
	@bash scripts/install-deps.sh build

test-deps:
	@bash scripts/install-deps.sh test

bench-deps:
	@bash scripts/install-deps.sh bench

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake --preset release -B $(BUILD); fi

build: configure
	cmake --build $(BUILD) -j$(JOBS)

# GoogleTest may have arrived since the first configure: configuring again finds it. The
# profiling pdfTeX the TeX tests need is built beside the rest (its configure scripts run on one
# core; the compiles fill the other); should it fail (no Debian archive), the rest is built all
# the same and the TeX tests say why.
test: test-deps configure
	cmake -B $(BUILD) -DHOTLINE_TESTS=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS) -- -k 0 all tex-engine || cmake --build $(BUILD) -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# Only what the demo runs: the tool and its runtime, not the tests (issue 28: minutes, not ten).
demo: configure
	cmake --build $(BUILD) -j$(JOBS) --target hotline hotline-rt
	@bash examples/demo.sh $(BUILD)

asan: test-deps
	cmake --preset asan -B build-asan
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -j$(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX) --strip

bench: bench-deps build
	@bash bench/run-all.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan
