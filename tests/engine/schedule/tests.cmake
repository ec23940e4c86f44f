# the schedule's passes on small graphs (what each rule of callify, stage to store, split kernels and order calls made),
# and typed rule contexts
ts_add_test(test_schedule_passes SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_schedule_passes.cpp LIBS tinyscope_engine TIMEOUT 60)
