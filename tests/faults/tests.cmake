# Faults (README: Faults): `tinyscope run` stopped by a signal or killed while writing, a full disk under the trace, the
# Chrome trace and the SPIR-V cache, corrupt cache entries, two processes sharing one cache, a lost Vulkan device
# (lavapipe), and a killed script under `tinyscope report`. Each runs the executable in child processes.
ts_add_cli_test(test_faults SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_faults.cpp LIBS Qt6::Core TIMEOUT 120)

# The window when the child running its script is killed or terminated from outside: a message naming the signal, the
# panes keep what was recorded, the next run works (built with the window only).
if(TARGET tinyscope_gui)
  ts_add_cli_test(test_fault_window SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fault_window.cpp LIBS tinyscope_gui Qt6::Widgets TIMEOUT 120)
  target_include_directories(test_fault_window PRIVATE ${CMAKE_SOURCE_DIR})
endif()

# The disk cache of compiled kernels across processes: a second process links every CPU kernel from it (bit for bit the
# same results), damaged entries compiled again, CACHELEVEL=0 writes nothing, the size bound removes the least recently
# used, two processes at once, a folder that cannot be written
ts_add_cli_test(test_kernel_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kernel_cache.cpp LIBS Qt6::Core TIMEOUT 240)
