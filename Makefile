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

# random-program fuzzer: FUZZ_COUNT programs from seed FUZZ_SEED on CPU, CPU:LLVM, INTERP and INTERP:GPU (FUZZ_TIMEOUT s each)
FUZZ_SEED ?= 1
FUZZ_COUNT ?= 10000
fuzz: build
	FUZZ_SEED=$(FUZZ_SEED) FUZZ_COUNT=$(FUZZ_COUNT) ./$(BUILD)/tests/ts_fuzz

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
