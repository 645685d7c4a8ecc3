// SHA-256 (FIPS 180-4), for cache keys and entry checksums. A cryptographic
// hash rather than FNV or a 64-bit mix: the key names a file that is loaded
// and executed without comparing the inputs again, so an accidental collision
// must be out of the question, and `sha256sum` can check it by hand.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace spindle::rt {

using Digest = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t bufLen_ = 0;
  uint64_t total_ = 0;
};

Digest sha256(const void* data, size_t size);
std::string toHex(const Digest& d);

}  // namespace spindle::rt
