#pragma once
// SHA-256 (FIPS 180-4): the disk caches' keys and entry checksums. The engine links no library that has it (LLVM's is
// only in the CPU JIT module, which a headless build leaves out).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ts {

class Sha256 {
 public:
  Sha256();
  Sha256& update(const void* data, size_t n);
  Sha256& update(std::string_view s) { return update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // once; the object is spent afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t used_ = 0;
  uint64_t bytes_ = 0;
};

std::array<uint8_t, 32> sha256(std::string_view data);
// the first `bytes` bytes of a digest as lower-case hex
std::string to_hex(const std::array<uint8_t, 32>& digest, size_t bytes = 32);

}  // namespace ts
