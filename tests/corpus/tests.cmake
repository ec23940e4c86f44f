# The corpus: every tests/corpus/NN_name.py run by `tinyscope run --json` on CPU, CPU:LLVM and INTERP and compared
# with the oracle tinygrad produced (NN_name.expected.json). known_failures.txt lists the expected failures.
ts_add_test(test_corpus SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_corpus.cpp LIBS Qt6::Core TIMEOUT 1500)
add_dependencies(test_corpus tinyscope)
# defaults when the test runs outside ctest (ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR)
target_compile_definitions(test_corpus PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
# Traced and untraced runs of every corpus program execute the same code: the same kernels, names, order and values.
ts_add_test(test_traced SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_traced.cpp LIBS Qt6::Core TIMEOUT 900)
add_dependencies(test_traced tinyscope)
target_compile_definitions(test_traced PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
