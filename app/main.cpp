// tinyscope: the window (later), the command line and the embedded Python host. See app/cli/cli.cpp.
#include <cstdio>

#include "app/cli/cli.h"

int main(int argc, char** argv) {
  // line buffered even in a pipe, so the engine's DEBUG lines and the script's prints stay in order
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return tscli::main(argc, argv);
}
