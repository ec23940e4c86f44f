# The Vulkan runtime on lavapipe (the CPU Vulkan driver), under the Khronos validation layer with synchronization
# validation (a missing barrier is an error): every test function ends with zero validation warnings and errors.
ts_add_test(test_vulkan_runtime SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_vulkan_runtime.cpp LIBS ts_vulkan TIMEOUT 180)
set(TS_VK_XDG ${CMAKE_CURRENT_BINARY_DIR}/vulkan-xdg-runtime)
file(MAKE_DIRECTORY ${TS_VK_XDG})
set_property(TEST test_vulkan_runtime APPEND PROPERTY ENVIRONMENT
  "VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation"
  "VK_LAYER_ENABLES=VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT"
  "VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
  "XDG_RUNTIME_DIR=${TS_VK_XDG}")

# vulkan_bench: the runtime's costs on one device, run by hand (not a ctest test). No Qt and a static libstdc++, so
# the binary also runs on machines that only have a Vulkan driver.
add_executable(vulkan_bench ${CMAKE_CURRENT_LIST_DIR}/vulkan_bench.cpp)
target_link_libraries(vulkan_bench PRIVATE ts_vulkan)
target_link_options(vulkan_bench PRIVATE -static-libstdc++ -static-libgcc)
target_compile_options(vulkan_bench PRIVATE ${TS_WARNINGS})

# BEAM search: the action space by hand, SWAP, and searches on lavapipe (with the validation layer) checked against the
# default program's results, the disk cache, and BEAM=2 through the command line
ts_add_cli_test(test_beam SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_beam.cpp LIBS tinyscope_engine ts_vulkan TIMEOUT 300)
set_property(TEST test_beam APPEND PROPERTY ENVIRONMENT "VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")

# The TC opt on a target with the H200's tensor cores: which kernels take it, the heuristic's opts after it, and the
# cooperative-matrix shaders compiled by glslang (lavapipe cannot run them)
# (with the bench's hand-written tensor-core shaders, app/cli/bench_coopmat.cpp, compiled in: their binaries checked)
ts_add_test(test_tensor_core SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tensor_core.cpp ${CMAKE_SOURCE_DIR}/app/cli/bench_coopmat.cpp
            LIBS tinyscope_engine ts_vulkan TIMEOUT 120)
target_include_directories(test_tensor_core PRIVATE ${CMAKE_SOURCE_DIR})

# Math where lavapipe's builtins or optimizer differ from C (sin of large arguments, exp2, pow, int64 widening, inf
# products), compared with the interpreter or hand values
ts_add_test(test_vulkan_math SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_vulkan_math.cpp LIBS tinyscope_cpu ts_vulkan TIMEOUT 120)
set_property(TEST test_vulkan_math APPEND PROPERTY ENVIRONMENT "VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json")
