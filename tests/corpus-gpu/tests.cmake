# The GPU corpus: every tests/corpus-gpu/NN_name.py (recorded with tinygrad on DEV=PYTHON) run by `tinyscope run
# --json` on INTERP:GPU and compared with its oracle: results, kernels, names with colours, launch dims, opts.
ts_add_cli_test(test_corpus_gpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_corpus_gpu.cpp LIBS Qt6::Core TIMEOUT 300)
