# Build-time step: wraps app/python/prelude.py into a C++ raw string literal (no @VAR@ substitution, so the
# Python source is embedded byte for byte). Called as: cmake -DIN=prelude.py -DOUT=prelude_source.h -P this
file(READ "${IN}" src)
string(FIND "${src}" ")__tsprelude__\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw string delimiter")
endif()
file(WRITE "${OUT}" "// generated from app/python/prelude.py: do not edit\n#pragma once\nnamespace tsp {\ninline constexpr const char* kPreludeSource = R\"__tsprelude__(${src})__tsprelude__\";\n}\n")
