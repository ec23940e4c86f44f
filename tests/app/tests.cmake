# The command line and the embedded Python (runs the tinyscope executable as a child process).
ts_add_cli_test(test_cli SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli.cpp LIBS Qt6::Core TIMEOUT 300)

# tinyscope report: the page it writes, rendered in headless Chromium (`make deps` installs it; without it the test fails)
ts_add_cli_test(test_report SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_report.cpp LIBS Qt6::Core Qt6::Gui TIMEOUT 300)

# The limits cache (app/cli/limits_cache.cpp, compiled in): its round trip and keys; `tinyscope bench --limits` filling
# it (CPU and lavapipe); `tinyscope run --json` copying exactly its device's entry into the trace, and nothing without one
ts_add_cli_test(test_limits SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_limits.cpp ${CMAKE_SOURCE_DIR}/app/cli/limits_cache.cpp
            LIBS Qt6::Core nlohmann_json::nlohmann_json TIMEOUT 400)
target_include_directories(test_limits PRIVATE ${CMAKE_SOURCE_DIR})

# `tinyscope run --chrome-trace`: Chrome's Trace Event JSON checked event by event, its call events equal to the trace's
# calls (softmax, and a TinyJit loop's graph calls), the timestamps behind it, an unwritable path
ts_add_cli_test(test_chrome_trace SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_chrome_trace.cpp LIBS Qt6::Core TIMEOUT 60)

# `tinyscope trace TRACE.json`: a recorded run on the command line, each answer checked against the trace file (contexts
# and passes, rewrites, a kernel's linearized uops on CPU and VULKAN, the top calls, every call) and bad input refused
ts_add_cli_test(test_trace_cli SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_cli.cpp LIBS Qt6::Core TIMEOUT 60)
