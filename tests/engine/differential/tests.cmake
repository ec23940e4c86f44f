ts_add_test(test_differential SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_differential.cpp LIBS tinyscope_cpu TIMEOUT 240)
