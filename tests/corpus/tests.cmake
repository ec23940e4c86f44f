# The corpus: every tests/corpus/NN_name.py run by `tinyscope run --json` on CPU, CPU:LLVM and INTERP and compared
# with the oracle tinygrad produced (NN_name.expected.json). known_failures.txt lists the expected failures.
ts_add_cli_test(test_corpus SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_corpus.cpp LIBS Qt6::Core TIMEOUT 1500)
# Traced and untraced runs of every corpus program execute the same code: the same kernels, names, order and values.
ts_add_cli_test(test_traced SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_traced.cpp LIBS Qt6::Core TIMEOUT 900)
