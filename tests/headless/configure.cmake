# The headless build (`make headless`) configures without Qt, LLVM or Python: run its configure step in a scratch
# folder and check that none of the three was looked up, and that it makes the tinyscope and vulkan_bench targets.
# Run as: cmake -DSRC=<source dir> -DBIN=<scratch dir> -P configure.cmake
file(REMOVE_RECURSE ${BIN})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -G Ninja -DCMAKE_BUILD_TYPE=Release
                        -DTINYSCOPE_WINDOW=OFF -DTINYSCOPE_CPU_JIT=OFF -DTINYSCOPE_PYTHON=OFF
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "headless configure failed (${rc}):\n${out}\n${err}")
endif()
file(STRINGS ${BIN}/CMakeCache.txt cache)
foreach(line IN LISTS cache)
  if(line MATCHES "^(Qt6_DIR|LLVM_DIR|Clang_DIR|pybind11_DIR|Python_EXECUTABLE|Python_LIBRARY)[:=]")
    message(FATAL_ERROR "the headless configure looked up a left-out dependency: ${line}")
  endif()
endforeach()
file(READ ${BIN}/build.ninja ninja)
foreach(target tinyscope vulkan_bench)
  if(NOT ninja MATCHES "build ${target}:")
    message(FATAL_ERROR "the headless build has no ${target} target")
  endif()
endforeach()
if(ninja MATCHES "Qt6|libLLVM|libclang|python3")
  message(FATAL_ERROR "the headless build links Qt, LLVM, clang or Python")
endif()
file(REMOVE_RECURSE ${BIN})
message(STATUS "headless configure ok")
