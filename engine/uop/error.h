#pragma once
#include <stdexcept>
#include <string>

namespace ts {
// The one engine error type: a message the user can read, naming the op and the shapes.
struct Error : std::runtime_error {
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};
}  // namespace ts
