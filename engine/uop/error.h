#pragma once
#include <stdexcept>
#include <string>

namespace ts {
// The one engine error type: a message the user can read, naming the op and the shapes. Its kind picks the Python
// exception the reference raises for the same mistake.
struct Error : std::runtime_error {
  enum class Kind { Invalid, ZeroDivision, Overflow, Index, Assertion, Jit };
  explicit Error(const std::string& msg, Kind k = Kind::Invalid) : std::runtime_error(msg), kind(k) {}
  Kind kind;
};
}  // namespace ts
