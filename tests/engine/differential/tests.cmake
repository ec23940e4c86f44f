# the differential test: seeded random programs (fuzz.cpp) on CPU, CPU:LLVM, INTERP and INTERP:GPU, compared
ts_add_test(test_differential SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_differential.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz.cpp
            LIBS tinyscope_cpu TIMEOUT 240)
# ts_fuzz: the long fuzz run (`make fuzz`), not a ctest
add_executable(ts_fuzz ${CMAKE_CURRENT_LIST_DIR}/fuzz_main.cpp ${CMAKE_CURRENT_LIST_DIR}/fuzz.cpp)
target_link_libraries(ts_fuzz PRIVATE Qt6::Core tinyscope_cpu)
target_include_directories(ts_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/tests)
