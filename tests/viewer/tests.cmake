# Window-level tests: they link the window (tinyscope_gui: main window, run controller, resources) with the viewer
# and drive `$TINYSCOPE_BIN` as a child process.
function(ts_add_window_test name)
  ts_add_cli_test(${name} SOURCES ${ARGN} LIBS tinyscope_gui Qt6::Widgets TIMEOUT 180)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR})
endfunction()

# The viewer, one test per part (tests/viewer/viewer_test_util.h: what they share): the models (with
# QAbstractItemModelTester) and selection links; the graph panes and the layout engine; the panes that follow the
# selection, the rewrite stepper's among them; the window and its run controller driving `$TINYSCOPE_BIN run`.
foreach(part models graphs panes window)
  ts_add_window_test(test_viewer_${part} ${CMAKE_CURRENT_LIST_DIR}/test_viewer_${part}.cpp ${CMAKE_CURRENT_LIST_DIR}/viewer_test_util.h)
endforeach()
# The rewrite stepper: its model over real traces (replay, changed nodes), the gradient pass, and the pane's keys.
ts_add_window_test(test_stepper ${CMAKE_CURRENT_LIST_DIR}/test_stepper.cpp)
# The window's runs: the trace streamed as it is recorded (Stop and crashes keep it, labelled partial), progress while a
# script runs, unknown devices as errors, what the timings measured.
ts_add_window_test(test_runs ${CMAKE_CURRENT_LIST_DIR}/test_runs.cpp)
target_link_libraries(test_runs PRIVATE ts_vulkan)  # a BEAM run on VULKAN (lavapipe)
# Timing 5× in the window prints what `tinyscope run` prints (seeded RNG, init, dropout, optimizer steps), and that
# is tinygrad's output.
ts_add_window_test(test_repeat_outputs ${CMAKE_CURRENT_LIST_DIR}/test_repeat_outputs.cpp)
# The trace-file fuzzer: seeded mutants of real traces load (and every model and pane over them works) or are
# refused with one clear error; a few go through the command line.
ts_add_cli_test(test_trace_fuzz SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_fuzz.cpp LIBS tinyscope_viewer Qt6::Widgets TIMEOUT 150)
# Traces as untrusted input: the reproducers (a uop that is its own source, a 70 MB source line, wrong types,
# "version": 1.0, a trace's script field, the stepper and contexts overflows), each refused clearly or shown safely.
ts_add_window_test(test_trace_check ${CMAKE_CURRENT_LIST_DIR}/test_trace_check.cpp)
# The Roofline pane over real runs (with the limits `tinyscope bench --limits` measured, and without): each dot where
# the trace's estimates and warm medians put it, clicks and selection, the roof min(peak, bandwidth x intensity), and the
# window's Measure limits (cancellable) and Run again.
ts_add_window_test(test_roofline ${CMAKE_CURRENT_LIST_DIR}/test_roofline.cpp)
# Two runs compared by what they computed: the examples on CPU and VULKAN (lavapipe) paired call by call whatever the
# kernels are named there, their buffers agreeing; an inserted kernel; the first divergence; sources lined up by uop.
ts_add_window_test(test_compare ${CMAKE_CURRENT_LIST_DIR}/test_compare.cpp)
target_link_libraries(test_compare PRIVATE ts_vulkan)  # the window compares with VULKAN (lavapipe)
# The Timeline pane over real runs: spans equal to the trace's calls and contexts at their recorded times, graph spans
# holding their kernels, the memory lane's peak, clicks and the shared selection, zoom and pan, older traces, its speed.
ts_add_window_test(test_timeline ${CMAKE_CURRENT_LIST_DIR}/test_timeline.cpp)
# The Access pane's model: what each kernel reads for an output element, read off its optimized AST, against the
# elements a hand calculation names (matmul, a padded conv2d, softmax's three kernels) under NOOPT, default opts and
# BEAM=2 on CPU.
ts_add_cli_test(test_access SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_access.cpp LIBS tinyscope_viewer TIMEOUT 600)
target_include_directories(test_access PRIVATE ${CMAKE_SOURCE_DIR})
# The access model against the interpreter: what each output element reads, read off the optimized AST, equals what the
# interpreter's stored value was computed from (its provenance), for the examples' matmul, conv2d with and without
# padding and softmax on INTERP under NOOPT, default opts and BEAM=2 and on INTERP:GPU, in one process with the engine.
ts_add_test(test_access_interp SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_access_interp.cpp LIBS tinyscope_viewer tinyscope_engine TIMEOUT 120)
target_include_directories(test_access_interp PRIVATE ${CMAKE_SOURCE_DIR})
