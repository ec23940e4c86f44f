# Entry points: make deps | build | run | test | bench | test-asan
BUILD ?= build
ASAN_BUILD ?= build-asan
JOBS ?= 2
PKGS = g++ make cmake ninja-build pkg-config qt6-base-dev qt6-svg-dev libgraphviz-dev graphviz \
       llvm-16-dev libclang-16-dev libclang-cpp16-dev libvulkan-dev mesa-vulkan-drivers vulkan-tools \
       glslang-dev glslang-tools spirv-tools xvfb xauth fonts-dejavu-core pybind11-dev python3-dev python3-numpy nlohmann-json3-dev \
       vulkan-validationlayers chromium python3-torch python3-hypothesis python3-pytest
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

HEADLESS_BUILD ?= build-headless

.PHONY: deps configure build run test bench fuzz test-asan headless clean

deps:
	@if dpkg -s $(PKGS) >/dev/null 2>&1; then echo "deps: all packages present"; else \
	  for i in 1 2 3; do \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(PKGS) && exit 0; \
	    echo "apt failed, retrying ($$i)"; sleep 5; \
	  done; exit 1; fi

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/tinyscope resources/examples/tutorial.py --run

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/tinyscope bench

# random-program fuzzer: FUZZ_COUNT programs from seed FUZZ_SEED on CPU, CPU:LLVM, INTERP, INTERP:GPU and VULKAN against
# INTERP (FUZZ_TIMEOUT s each; FUZZ_LOG=FILE keeps the failures);
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 10000
# then the same programs through the Python API (tests/engine/differential/fuzz_variants.py): TinyJit replays on CPU and
# VULKAN, and each program's second half moved to the other device
FUZZ_VK = VK_DRIVER_FILES=$${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
FUZZ_PY = ./$(BUILD)/tinyscope run tests/engine/differential/fuzz_variants.py -- $(BUILD)/fuzz_defs.py
fuzz: build
	FUZZ_SEED=$(FUZZ_SEED) FUZZ_COUNT=$(FUZZ_COUNT) $(FUZZ_VK) ./$(BUILD)/tests/ts_fuzz
	./$(BUILD)/tests/ts_fuzz --python-defs $(FUZZ_SEED) $(FUZZ_COUNT) > $(BUILD)/fuzz_defs.py
	DEV=CPU $(FUZZ_PY) jit && $(FUZZ_VK) DEV=VULKAN $(FUZZ_PY) jit && \
	  $(FUZZ_VK) DEV=CPU $(FUZZ_PY) mixed VULKAN && $(FUZZ_VK) DEV=VULKAN $(FUZZ_PY) mixed CPU

# The same suite with the project's code built under AddressSanitizer and UndefinedBehaviorSanitizer, in its own
# folder (RelWithDebInfo: optimised enough for the corpus, with line numbers in the reports). The sanitizer options
# and the longer TIMEOUTs are set on the tests by tests/CMakeLists.txt.
$(ASAN_BUILD)/build.ninja:
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTINYSCOPE_SANITIZE=address,undefined

test-asan: deps $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# The command line and the Vulkan devices alone (no Qt, no LLVM, no Python), for a machine with only a Vulkan driver:
# tinyscope devices, tinyscope bench --dev VULKAN. libstdc++ is linked statically, glslang and SPIRV-Tools too, and the
# Vulkan loader is opened at run time, so the one file runs on any x86-64 Linux with glibc 2.36 or newer.
$(HEADLESS_BUILD)/build.ninja:
	cmake -S . -B $(HEADLESS_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DTINYSCOPE_WINDOW=OFF -DTINYSCOPE_CPU_JIT=OFF -DTINYSCOPE_PYTHON=OFF

headless: $(HEADLESS_BUILD)/build.ninja
	cmake --build $(HEADLESS_BUILD) -j $(JOBS) --target tinyscope vulkan_bench

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(HEADLESS_BUILD)
