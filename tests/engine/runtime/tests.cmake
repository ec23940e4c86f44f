ts_add_test(test_cpu_jit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cpu_jit.cpp LIBS tinyscope_cpu TIMEOUT 120)
set_target_properties(test_cpu_jit PROPERTIES AUTOMOC ON)
