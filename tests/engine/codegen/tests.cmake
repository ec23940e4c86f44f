ts_add_test(test_codegen SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codegen.cpp LIBS tinyscope_engine TIMEOUT 120)
ts_add_test(test_codegen_jit SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_codegen_jit.cpp LIBS tinyscope_cpu TIMEOUT 120)
# codegen regressions checked in-process (the reproducers' tinygrad scripts are tests/regress/codegen_*.py)
ts_add_test(test_codegen_regressions SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_regressions.cpp LIBS tinyscope_cpu TIMEOUT 120)
# the GPU path (a target with locals): opts, names, group reduces, launch dims, barriers, the interpreter's lanes
ts_add_test(test_gpu_codegen SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_gpu_codegen.cpp LIBS tinyscope_engine TIMEOUT 120)
# EXP2 / LOG2 on the CPU devices as polynomials: against the interpreter and libm over a dense sweep
ts_add_test(test_transcendental SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_transcendental.cpp LIBS tinyscope_cpu TIMEOUT 240)
