#include "hmac_sha256.h"

#include <cstring>

namespace spindle::rt {

HmacSha256::HmacSha256(std::string_view key) {
  // RFC 2104: a key longer than the block is hashed first; then it is
  // zero-padded to the block and XORed with ipad (0x36) and opad (0x5c).
  uint8_t block[64] = {};
  if (key.size() > sizeof block) {
    Digest d = sha256(key.data(), key.size());
    std::memcpy(block, d.data(), d.size());
  } else {
    if (!key.empty()) std::memcpy(block, key.data(), key.size());  // an empty view's data() may be null
  }
  uint8_t innerPad[64];
  for (size_t i = 0; i < sizeof block; ++i) {
    innerPad[i] = uint8_t(block[i] ^ 0x36);
    outerPad_[i] = uint8_t(block[i] ^ 0x5c);
  }
  inner_.update(innerPad, sizeof innerPad);
}

Digest HmacSha256::finish() {
  Digest innerDigest = inner_.finish();
  Sha256 outer;
  outer.update(outerPad_, sizeof outerPad_);
  outer.update(innerDigest.data(), innerDigest.size());
  return outer.finish();
}

Digest hmacSha256(std::string_view key, const void* data, size_t size) {
  HmacSha256 h(key);
  h.update(data, size);
  return h.finish();
}

bool equalConstantTime(const Digest& a, const Digest& b) {
  // volatile: the compiler may not turn the loop into an early-exit memcmp.
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = uint8_t(diff | (a[i] ^ b[i]));
  return diff == 0;
}

}  // namespace spindle::rt
