# The command line and the embedded Python (runs the tinyscope executable as a child process).
ts_add_test(test_cli SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.cpp LIBS Qt6::Core TIMEOUT 300)
add_dependencies(test_cli tinyscope)
# defaults when the test runs outside ctest (ctest sets TINYSCOPE_BIN and TINYSCOPE_SOURCE_DIR)
target_compile_definitions(test_cli PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")

# tinyscope report: the page it writes, rendered in headless Chromium (`make deps` installs it; without it the test fails)
ts_add_test(test_report SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_report.cpp LIBS Qt6::Core Qt6::Gui TIMEOUT 300)
add_dependencies(test_report tinyscope)
target_compile_definitions(test_report PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
