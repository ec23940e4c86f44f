ts_add_test(test_cpu_jit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cpu_jit.cpp LIBS tinyscope_cpu TIMEOUT 120)
set_target_properties(test_cpu_jit PROPERTIES AUTOMOC ON)
# The disk cache of compiled kernels (engine/runtime/disk_cache.h) and the CPU JIT's object cache, in one process
ts_add_test(test_disk_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_disk_cache.cpp LIBS tinyscope_cpu TIMEOUT 120)
# The interpreter's provenance recording: off by default, the same values when on, what each stored value came from
ts_add_test(test_interp_provenance SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_interp_provenance.cpp LIBS tinyscope_engine TIMEOUT 60)
