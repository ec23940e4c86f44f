# The headless configuration (make headless) still configures: no Qt, LLVM or Python looked up
ts_add_test(test_headless SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_headless.cpp TIMEOUT 120)
target_compile_definitions(test_headless PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_CMAKE="${CMAKE_COMMAND}")
