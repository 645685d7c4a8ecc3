// HMAC-SHA256 (RFC 2104 over FIPS 180-4 SHA-256), for authenticating remote
// cache entries (remote_cache/entry_mac.h), and a comparison of digests whose
// time does not depend on where they differ.
#pragma once

#include <cstddef>
#include <string_view>

#include "sha256.h"

namespace spindle::rt {

class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  void update(const void* data, size_t size) { inner_.update(data, size); }
  void update(std::string_view s) { inner_.update(s); }
  Digest finish();

 private:
  Sha256 inner_;
  uint8_t outerPad_[64];
};

Digest hmacSha256(std::string_view key, const void* data, size_t size);

// True when the two digests are equal; reads every byte whatever the first
// difference, so a forger cannot learn a MAC byte by byte from timing.
bool equalConstantTime(const Digest& a, const Digest& b);

}  // namespace spindle::rt
