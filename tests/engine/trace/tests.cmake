ts_add_test(test_trace SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_trace.cpp LIBS tinyscope_cpu TIMEOUT 60)
