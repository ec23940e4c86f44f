# the differential test: seeded random programs (fuzz.cpp) on CPU, CPU:LLVM, INTERP, INTERP:GPU and VULKAN (lavapipe),
# compared. The CPU JIT is loaded as the executable loads it (a module with local symbols), so lavapipe's LLVM is safe.
set(TS_FUZZ_JIT ${CMAKE_SOURCE_DIR}/app/cli/cpu_module.cpp ${CMAKE_SOURCE_DIR}/engine/runtime/cpu/install.cpp)
set(TS_VK_TEST_ENV "VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json" "XDG_RUNTIME_DIR=${CMAKE_BINARY_DIR}/xdg-runtime")
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/xdg-runtime)
ts_add_test(test_differential SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_differential.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz.cpp ${TS_FUZZ_JIT}
            LIBS ts_vulkan ${CMAKE_DL_LIBS} TIMEOUT 360)
add_dependencies(test_differential tinyscope_cpu_jit)
set_property(TEST test_differential APPEND PROPERTY ENVIRONMENT ${TS_VK_TEST_ENV})
# ts_fuzz: the long fuzz run (`make fuzz`), not a ctest
add_executable(ts_fuzz ${CMAKE_CURRENT_LIST_DIR}/fuzz_main.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz.cpp ${TS_FUZZ_JIT})
target_link_libraries(ts_fuzz PRIVATE Qt6::Core ts_vulkan ${CMAKE_DL_LIBS})
add_dependencies(ts_fuzz tinyscope_cpu_jit)
target_include_directories(ts_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/tests)
target_compile_options(ts_fuzz PRIVATE ${TS_WARNINGS})
target_compile_definitions(ts_fuzz PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
target_compile_definitions(test_differential PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
# the same programs through the Python API: TinyJit replays, programs across two devices, the reference's outcomes
ts_add_cli_test(test_fuzz_variants SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fuzz_variants.cpp LIBS Qt6::Core TIMEOUT 1200)
add_dependencies(test_fuzz_variants ts_fuzz)
target_compile_definitions(test_fuzz_variants PRIVATE TS_FUZZ_BIN="$<TARGET_FILE:ts_fuzz>")
