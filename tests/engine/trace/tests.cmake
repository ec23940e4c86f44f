ts_add_test(test_trace SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace.cpp LIBS tinyscope_cpu TIMEOUT 60)
# engine/trace is a leaf of the engine: its sources include only engine/trace and engine/uop (read from the source
# tree), and every object of tinyscope_trace links with tinyscope_uop alone (no other engine symbol resolves here)
ts_add_test(test_trace_leaf SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace_leaf.cpp
  LIBS "$<LINK_LIBRARY:WHOLE_ARCHIVE,tinyscope_trace>" TIMEOUT 30)
target_compile_definitions(test_trace_leaf PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
