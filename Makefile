# The whole set-up on a fresh Debian bookworm machine:
#   make demo   install missing packages, build (release), run the example scenario
#   make test   install missing packages, build, run every test through ctest
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
DEB_PACKAGES := cmake make g++ git ccache libboost-graph-dev nlohmann-json3-dev libcli11-dev libfmt-dev doctest-dev libssl-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_SCENARIO := scenarios/examples/two-consumers.json
DEMO_OUT := out/two-consumers

FUZZ_DEB_PACKAGES := clang libclang-rt-14-dev
FUZZ_SECONDS ?= 120

.PHONY: deps build demo test fuzz clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

build: deps
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: build
	./$(BUILD_DIR)/rebalance-sim run $(DEMO_SCENARIO) --out $(DEMO_OUT)
	@echo
	@echo "Outputs (one directory per protocol variant):"
	@find $(DEMO_OUT) -type f | sort | sed 's/^/  /'

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (tests/fuzz/), each run for FUZZ_SECONDS; see README "Development".
fuzz:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES) $(FUZZ_DEB_PACKAGES)"
	FUZZ_SECONDS=$(FUZZ_SECONDS) tools/fuzz.sh

clean:
	rm -rf $(BUILD_DIR) build-asan build-fuzz out
