# Regression programs: every tests/regress/*.py runs under `tinyscope run` on each device its header names; its
# stdout must equal NAME.out (recorded from tinygrad with make_expected.sh), or, with an `# error:` header, it must
# fail with that text on stderr (where the reference raises).
ts_add_cli_test(test_regress SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_regress.cpp LIBS Qt6::Core TIMEOUT 1500)
