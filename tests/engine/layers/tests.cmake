# the engine's layering: each stage of engine/ includes only its own headers and those of the stages before it
ts_add_test(test_engine_layers SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_engine_layers.cpp TIMEOUT 30)
target_compile_definitions(test_engine_layers PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
