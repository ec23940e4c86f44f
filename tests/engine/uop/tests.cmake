# the pattern language (engine/uop/pattern.h) and the rules written in it
ts_add_test(test_pattern SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_pattern.cpp LIBS tinyscope_engine TIMEOUT 60)
# the rewrite driver (engine/uop/rewrite.h)
ts_add_test(test_rewrite SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rewrite.cpp LIBS tinyscope_engine TIMEOUT 60)
# the rewrite rules of symbolic, the collapses, codegen's lowering and rangeify: one rewrite a rule, none dead
ts_add_test(test_rules SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_rules.cpp LIBS tinyscope_engine TIMEOUT 60)
