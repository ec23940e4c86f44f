# The lessons (resources/lessons): each played headless by `tinyscope lesson --json` on CPU, every answer checked against
# the run's trace read here, on its own (not through the viewer's Session).
ts_add_cli_test(test_lessons SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_lessons.cpp LIBS Qt6::Core tinyscope_viewer TIMEOUT 600)
