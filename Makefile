# The front door: every target sets up what it needs on a fresh Debian 12 machine.
BUILD ?= build
JOBS ?= 2
PREFIX ?= /usr/local

.PHONY: all deps configure build test demo install bench clean asan

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD)/build.ninja ]; then cmake --preset release -B $(BUILD); fi

build: configure
	cmake --build $(BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

demo: build
	@bash examples/demo.sh $(BUILD)

asan: deps
	cmake --preset asan -B build-asan
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -j$(JOBS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

bench: build
	@bash bench/run-all.sh $(BUILD)

clean:
	rm -rf $(BUILD) build-asan
