# The viewer: models (with QAbstractItemModelTester), selection links, panes, graph layout, and the window's
# run controller driving `$TINYSCOPE_BIN run` as a child process.
ts_add_test(test_viewer
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_viewer.cpp
          ${CMAKE_SOURCE_DIR}/app/gui/run_controller.cpp ${CMAKE_SOURCE_DIR}/app/gui/run_controller.h
          ${CMAKE_SOURCE_DIR}/app/gui/main_window.cpp ${CMAKE_SOURCE_DIR}/app/gui/main_window.h
          ${CMAKE_SOURCE_DIR}/app/gui/stall_probe.h ${CMAKE_SOURCE_DIR}/resources/tinyscope.qrc
  LIBS tinyscope_viewer Qt6::Widgets TIMEOUT 180)
set_target_properties(test_viewer PROPERTIES AUTORCC ON)
add_dependencies(test_viewer tinyscope)
target_include_directories(test_viewer PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(test_viewer PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")

# The rewrite stepper: its model over real traces (replay, changed nodes) and the pane's keys.
ts_add_test(test_stepper
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_stepper.cpp
          ${CMAKE_SOURCE_DIR}/app/gui/run_controller.cpp ${CMAKE_SOURCE_DIR}/app/gui/run_controller.h
          ${CMAKE_SOURCE_DIR}/app/gui/main_window.cpp ${CMAKE_SOURCE_DIR}/app/gui/main_window.h
          ${CMAKE_SOURCE_DIR}/app/gui/stall_probe.h ${CMAKE_SOURCE_DIR}/resources/tinyscope.qrc
  LIBS tinyscope_viewer Qt6::Widgets TIMEOUT 180)
set_target_properties(test_stepper PROPERTIES AUTORCC ON)
add_dependencies(test_stepper tinyscope)
target_include_directories(test_stepper PRIVATE ${CMAKE_SOURCE_DIR})
target_compile_definitions(test_stepper PRIVATE TS_SOURCE_DIR="${CMAKE_SOURCE_DIR}" TS_BIN="$<TARGET_FILE:tinyscope>")
