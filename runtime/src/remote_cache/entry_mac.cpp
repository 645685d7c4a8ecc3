#include "entry_mac.h"

#include <cstring>

#include "../hmac_sha256.h"
#include "../sha256.h"

namespace spindle::rt {
namespace {

constexpr size_t kFixedHeader = 8 + 4 + 4 + 8;

// Appends at `p`, which the caller has sized (GCC 12 misreads vector::insert
// of small ranges as overflows, so the entry is laid out by hand as disk_cache does).
char* put(char* p, const void* src, size_t n) {
  std::memcpy(p, src, n);
  return p + n;
}

char* putLE(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) *p++ = char(v >> (8 * i));
  return p;
}

uint64_t getLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(p[i])) << (8 * i);
  return v;
}

}  // namespace

const char* entryCheckName(EntryCheck c) {
  switch (c) {
    case EntryCheck::Ok: return "ok";
    case EntryCheck::Malformed: return "malformed or truncated";
    case EntryCheck::OtherKey: return "an entry of another key";
    case EntryCheck::BadMac: return "authentication failed";
    case EntryCheck::BadChecksum: return "checksum mismatch";
  }
  return "?";
}

std::vector<char> encodeRemoteEntry(const std::string& keyName, const std::vector<char>& payload,
                                    std::string_view secret) {
  const size_t macAt = kFixedHeader + keyName.size() + 32;
  std::vector<char> out(macAt + 32 + payload.size());
  char* p = put(out.data(), kRemoteMagic, 8);
  p = putLE(p, kRemoteFormatVersion, 4);
  p = putLE(p, keyName.size(), 4);
  p = putLE(p, payload.size(), 8);
  p = put(p, keyName.data(), keyName.size());
  Digest sum = sha256(payload.data(), payload.size());
  p = put(p, sum.data(), sum.size());
  Digest mac = hmacSha256(secret, out.data(), macAt);
  p = put(p, mac.data(), mac.size());
  if (!payload.empty()) put(p, payload.data(), payload.size());
  return out;
}

EntryCheck decodeRemoteEntry(const std::string& keyName, std::string_view entry,
                             const std::vector<std::string>& secrets, std::vector<char>& payload) {
  const char* p = entry.data();
  if (entry.size() < kFixedHeader || std::memcmp(p, kRemoteMagic, 8) != 0) return EntryCheck::Malformed;
  if (getLE(p + 8, 4) != kRemoteFormatVersion) return EntryCheck::Malformed;
  uint64_t nameLen = getLE(p + 12, 4);
  uint64_t size = getLE(p + 16, 8);
  if (nameLen > entry.size() || entry.size() - kFixedHeader - nameLen < 64) return EntryCheck::Malformed;
  const size_t macAt = kFixedHeader + size_t(nameLen) + 32;
  if (size != entry.size() - macAt - 32) return EntryCheck::Malformed;
  if (std::string_view(p + kFixedHeader, nameLen) != keyName) return EntryCheck::OtherKey;
  Digest stored;
  std::memcpy(stored.data(), p + macAt, stored.size());
  bool authentic = false;
  for (const auto& s : secrets)  // every secret is tried: no early exit on a match either
    authentic = equalConstantTime(hmacSha256(s, p, macAt), stored) || authentic;
  if (!authentic) return EntryCheck::BadMac;
  Digest sum = sha256(p + macAt + 32, size_t(size));
  if (std::memcmp(sum.data(), p + kFixedHeader + nameLen, 32) != 0) return EntryCheck::BadChecksum;
  payload.assign(p + macAt + 32, p + macAt + 32 + size);
  return EntryCheck::Ok;
}

}  // namespace spindle::rt
