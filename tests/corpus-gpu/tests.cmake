# The GPU corpus: every tests/corpus-gpu/NN_name.py (recorded with tinygrad on DEV=PYTHON) run by `tinyscope run
# --json` on INTERP:GPU and compared with its oracle: results, kernels, names with colours, launch dims, opts.
ts_add_test(test_corpus_gpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_corpus_gpu.cpp LIBS Qt6::Core TIMEOUT 300)
add_dependencies(test_corpus_gpu tinyscope)
# defaults when the test runs outside ctest (ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR)
target_compile_definitions(test_corpus_gpu PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
