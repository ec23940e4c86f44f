ts_add_test(test_codegen SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codegen.cpp LIBS tinyscope_engine TIMEOUT 120)
ts_add_test(test_codegen_jit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codegen_jit.cpp LIBS tinyscope_cpu TIMEOUT 120)
# regressions as tinygrad scripts (regressions/*.py against the reference's output) through the tinyscope executable
ts_add_test(test_regressions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_regressions.cpp LIBS Qt6::Core TIMEOUT 300)
add_dependencies(test_regressions tinyscope)
target_compile_definitions(test_regressions PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
