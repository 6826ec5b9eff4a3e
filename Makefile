# The whole set-up on a fresh Debian bookworm machine:
#   make demo   install missing packages, build (release), run the example scenario
#   make test   install missing packages, build, run every test through ctest
#   make build-pgo   build, then rebalance-sim optimised with a profile of a training run (g++), in build-pgo/
#   make install [PREFIX=/usr/local] [DESTDIR=]   build, then install (binary, man page, schema, docs)
#   make deb     build, then the .deb (CPack) in $(BUILD_DIR)/
#   make image   the container image (ci/Containerfile) with podman, else buildah (chroot)
#   make image-test   the image, then its binary run from its root file system (buildah mount)
#   make site    the playground: the simulator in WebAssembly and its page, in site/ (docs/playground.md)
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
DEB_PACKAGES := cmake make g++ git ccache libboost-graph-dev nlohmann-json3-dev libcli11-dev libfmt-dev doctest-dev libssl-dev libmimalloc-dev
# ccache (the builds' compiler launcher) keys its cache on paths relative to the checkout, so two
# checkouts of the project (a worktree, a CI copy) share cached objects.
export CCACHE_BASEDIR := $(CURDIR)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The browser the report's tests render report.html in, xmllint for the JUnit schema test, GNU
# parallel for the sharded sweep example, python3 for the function-length gate, clang-format-14
# for the format gate (installed by `make test`).
TEST_PACKAGES := chromium libxml2-utils parallel python3 clang-format-14
DEMO_SCENARIO := scenarios/examples/two-consumers.json
DEMO_OUT := out/two-consumers

FUZZ_DEB_PACKAGES := clang libclang-rt-14-dev
# What `make image` builds with: buildah (or podman where it can start a container) and, where no
# image registry is reachable, mmdebstrap for the base (ci/image_base.sh, docs/ci.md).
IMAGE_PACKAGES := buildah podman mmdebstrap
FUZZ_SECONDS ?= 60

.PHONY: format deps test-deps image-deps sanitize-deps build build-pgo demo test install deb image image-test sanitize sanitize-build tsan fuzz clean oracle-assignors oracle oracle-smoke oracle-share-smoke site

deps test-deps image-deps:
	@missing=""; for p in $(if $(filter test-deps,$@),$(TEST_PACKAGES),$(if $(filter image-deps,$@),$(IMAGE_PACKAGES),$(DEB_PACKAGES))); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

# Reformat every C++ file as .clang-format says (the ctest "lint: the C++ tree is formatted ..."
# checks it).
format: test-deps
	sh tools/dev/format.sh

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
	cmake --build $(BUILD_DIR) -j $(JOBS)

# The PGO build (tools/pgo/build.sh, docs/performance.md "The compiler"): g++ builds rebalance-sim
# instrumented in $(PGO_DIR), tools/pgo/train.sh runs it on a fixed workload the repository owns
# (the shape of `bench scale` under the three protocols of the classic and the consumer group, the
# scenario library), g++ compiles it again with that profile, and ctest checks that it writes the
# Release binary's outputs byte for byte. The benchmark figures of docs/performance.md come from it.
PGO_DIR ?= build-pgo
build-pgo: build
	sh tools/pgo/build.sh $(PGO_DIR) $(abspath $(BUILD_DIR))/rebalance-sim $(JOBS)

demo: build
	./$(BUILD_DIR)/rebalance-sim run $(DEMO_SCENARIO) --out $(DEMO_OUT) --format perfetto --format mermaid --format csv
	@echo
	@echo "Outputs (one directory per protocol variant):"
	@find $(DEMO_OUT) -type f | sort | sed 's/^/  /'
	@echo
	@echo "The report (open it in a browser): $(abspath $(DEMO_OUT))/report.html"

test: build test-deps
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

PREFIX ?= /usr/local
install: build
	DESTDIR=$(DESTDIR) cmake --install $(BUILD_DIR) --prefix $(PREFIX)

deb: build
	cd $(BUILD_DIR) && cpack -G DEB

IMAGE ?= rebalance-sim
IMAGE_BASE ?= docker.io/library/debian:bookworm-slim
# podman when it can start a container from the base; else (no CAP_SYS_RESOURCE: crun's
# setrlimit fails; hybrid cgroups) buildah without one, chroot isolation (docs/ci.md).
# The base: IMAGE_BASE when local or pullable, else one made with mmdebstrap (ci/image_base.sh).
# The build stage compiles through ccache with the host's cache mounted (ci/Containerfile).
IMAGE_BUILDER ?=
image: image-deps
	@base=$$(sh ci/image_base.sh $(IMAGE_BASE)) && cache=$$(ccache -k cache_dir) && mkdir -p "$$cache" && \
	builder='$(IMAGE_BUILDER)' && if [ -z "$$builder" ]; then \
	  if podman run --rm --pull=never "$$base" true >/dev/null 2>&1; then builder='podman build'; \
	  else builder='buildah bud --isolation=chroot --ulimit nofile=1024:1024'; fi; fi && \
	commit=$$(git rev-parse --short=12 HEAD 2>/dev/null || true) && \
	echo "$$builder --build-arg BASE=$$base --build-arg REBALANCE_SIM_COMMIT=$$commit -v $$cache:/ccache -f ci/Containerfile -t $(IMAGE) ." && \
	$$builder --build-arg BASE=$$base --build-arg REBALANCE_SIM_COMMIT=$$commit -v "$$cache":/ccache \
	  -f ci/Containerfile -t $(IMAGE) .

# The image checked without a container runtime: buildah mounts its root file system and chroot
# runs the installed binary (--version, then `run` on a library scenario). Needs root.
image-test: image
	sh ci/image_test.sh $(IMAGE) $$(git rev-parse --short=12 HEAD 2>/dev/null || true)

# One clang build, everything instrumented with AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer's coverage, at -O1, warnings as errors: the unit tests run in it (`make sanitize`) and
# the libFuzzer targets of tests/fuzz/ come from it (`make fuzz`, each run for FUZZ_SECONDS).
# See README "Development".
SANITIZE_DIR := build-sanitize
SANITIZE_CMAKE_ARGS := -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DREBALANCE_SIM_FUZZ=ON -DREBALANCE_SIM_WERROR=ON
SANITIZE_TARGETS ?=

sanitize-deps:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES) $(FUZZ_DEB_PACKAGES)"

sanitize-build: sanitize-deps
	cmake -S . -B $(SANITIZE_DIR) $(SANITIZE_CMAKE_ARGS) > /dev/null
	cmake --build $(SANITIZE_DIR) -j $(JOBS) $(if $(SANITIZE_TARGETS),--target $(SANITIZE_TARGETS))

sanitize: sanitize-build
	cd $(SANITIZE_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -L unit

# One clang build of rebalance-sim with ThreadSanitizer: `check --jobs 2` over the examples and the
# KIP-848 scenarios, `explore --jobs 2` over 40 seeds of the CI scenario (with the injected bug,
# whose switch was once a global) and `sweep --jobs 2` (its worst-seed reports render on the job
# slots, into one staged output folder), the commands whose worker threads run worlds side by side. A
# data race (shared mutable state between worlds) fails the step. At -O0: half the compile time of
# -O1 (measured on reports/summary.cpp and models/scenario/scenario.cpp), for runs of seconds.
TSAN_DIR := build-tsan
TSAN_CMAKE_ARGS := -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS=-O0 -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DREBALANCE_SIM_TSAN=ON -DREBALANCE_SIM_WERROR=ON

tsan: sanitize-deps
	cmake -S . -B $(TSAN_DIR) $(TSAN_CMAKE_ARGS) > /dev/null
	cmake --build $(TSAN_DIR) -j $(JOBS) --target rebalance-sim
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./$(TSAN_DIR)/rebalance-sim check scenarios/examples scenarios/consumer --jobs 2 > $(TSAN_DIR)/check.log
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./$(TSAN_DIR)/rebalance-sim explore scenarios/explore/two-groups-short.json \
	  --seeds 1..40 --jobs 2 --quiet --out $(TSAN_DIR)/explore --inject-bug skip-revocation > $(TSAN_DIR)/explore.log || \
	  [ $$? -eq 1 ]
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" ./$(TSAN_DIR)/rebalance-sim sweep scenarios/sweeps/poll-interval-storm.json \
	  --vary '/consumers/*/processing/per_record_ms/median=50,110' --seeds 1..2 --jobs 2 --quiet --out $(TSAN_DIR)/sweep > $(TSAN_DIR)/sweep.log
	@echo "tsan: check --jobs 2, explore --jobs 2 and sweep --jobs 2 ran with no data race"

fuzz:
	@$(MAKE) --no-print-directory sanitize-build SANITIZE_TARGETS="fuzz_scenario_loader fuzz_cli_args fuzz_trace_reader fuzz_run_folder fuzz_recording_reader"
	FUZZ_SECONDS=$(FUZZ_SECONDS) BUILD=$(SANITIZE_DIR) tools/fuzz.sh

clean:
	rm -rf $(BUILD_DIR) $(PGO_DIR) $(SANITIZE_DIR) $(TSAN_DIR) $(WASM_DIR) $(SITE_DIR) build-asan build-fuzz out

# The playground (docs/playground.md): the kernel, the models, the summary and the report compiled
# to WebAssembly with Debian's emscripten (3.1.6) in $(WASM_DIR), and the static site in
# $(SITE_DIR) (serve it with any static host, e.g. `python3 -m http.server -d site`). emscripten
# runs its JavaScript tools with Node, which finds Debian's acorn only on NODE_PATH.
WASM_DIR ?= build-wasm
SITE_DIR ?= site
WASM_DEB_PACKAGES := emscripten node-acorn
EMSCRIPTEN_ENV := NODE_PATH=/usr/share/nodejs
site:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(WASM_DEB_PACKAGES)"
	$(EMSCRIPTEN_ENV) emcmake cmake -S tools/wasm -B $(WASM_DIR) -DCMAKE_CXX_COMPILER_LAUNCHER=ccache > /dev/null
	$(EMSCRIPTEN_ENV) cmake --build $(WASM_DIR) -j $(JOBS)
	tools/wasm/make_site.sh $(WASM_DIR) $(SITE_DIR)

# Differential assignor testing: run Kafka 4.4.0's own assignors (through Maven) on seeded random
# groups and rewrite the vectors in fidelity/assignors/ (checked by ctest without Java).
SEED ?= 1
CASES ?= 8000
BIG ?= 2
ORACLE_ASSIGNORS := tools/kafka-oracle/assignors
oracle-assignors:
	mvn -q -B -f $(ORACLE_ASSIGNORS)/pom.xml package
	java -cp "$(ORACLE_ASSIGNORS)/target/classes:$(ORACLE_ASSIGNORS)/target/lib/*" \
	  org.rebalancesim.oracle.Main --out fidelity/assignors --seed $(SEED) --cases $(CASES) --big $(BIG)

# Real Kafka 4.4.0 as the oracle (tools/kafka-oracle/, Java 17 and Maven; Maven fetches Kafka
# from Maven Central on first use):
#   make oracle SCENARIO=scenarios/classic/crash-session-timeout.json [VARIANTS="classic-eager consumer"] [ORACLE_OUT=out/oracle]
#   make oracle-smoke   one short scenario on a real broker, then `compare` on it (under 2 minutes)
#   make oracle-share-smoke   the same for a share group (KafkaShareConsumer, explicit RELEASE up to the
#                             delivery count limit)
ORACLE_OUT ?= out/oracle
ORACLE_SMOKE := scenarios/examples/oracle-smoke.json
ORACLE_SHARE_SMOKE := scenarios/examples/oracle-share-smoke.json

oracle:
	@if [ -z "$(SCENARIO)" ]; then echo "usage: make oracle SCENARIO=path [VARIANTS='classic-eager consumer'] [ORACLE_OUT=dir]" >&2; exit 2; fi
	tools/kafka-oracle/oracle $(SCENARIO) $(ORACLE_OUT)/$$(basename $(SCENARIO) .json) $(VARIANTS)

oracle-smoke: build
	rm -rf out/oracle-smoke
	timeout -s KILL 300 tools/kafka-oracle/oracle $(ORACLE_SMOKE) out/oracle-smoke classic-eager
	./$(BUILD_DIR)/rebalance-sim compare $(ORACLE_SMOKE) --real out/oracle-smoke --tolerance-classic-ms 10000

oracle-share-smoke: build
	rm -rf out/oracle-share-smoke
	timeout -s KILL 420 tools/kafka-oracle/oracle $(ORACLE_SHARE_SMOKE) out/oracle-share-smoke share
	./$(BUILD_DIR)/rebalance-sim compare $(ORACLE_SHARE_SMOKE) --real out/oracle-share-smoke --tolerance-classic-ms 10000 --tolerance-share-ms 10000 --tolerance-share-count-pct 50
