ts_add_test(test_codegen SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codegen.cpp LIBS tinyscope_engine TIMEOUT 120)
