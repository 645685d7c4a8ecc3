// The format of a remote cache entry, and its authentication. A binary read
// from Redis is code that every machine loading it runs, and anyone who can
// write to the server could plant one; so each entry carries an HMAC-SHA256
// under a secret shared by the machines (remote_secret.h), checked before the
// payload is handed out.
//
// Entry (little-endian):
//   magic "SPNDLRMT" | u32 format version | u32 key name length | u64 payload size |
//   key name ("spindle:v1:bin:<64 hex>") | SHA-256 of payload (32) | MAC (32) | payload
// MAC = HMAC-SHA256(secret, every byte before it): magic, version, key name,
// size and the payload's SHA-256 (hash-then-MAC: the payload is hashed once,
// for both the checksum and the MAC). The key name inside the MAC means an
// entry copied to another key, namespace or format version does not verify.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spindle::rt {

enum class EntryCheck {
  Ok,
  Malformed,    // too short, wrong magic, another version, sizes that do not add up
  OtherKey,     // a well-formed entry naming another key
  BadMac,       // under none of the secrets: forged, or another secret's
  BadChecksum,  // MAC verifies but the payload does not match its SHA-256: damaged
};
const char* entryCheckName(EntryCheck c);

inline constexpr char kRemoteMagic[8] = {'S', 'P', 'N', 'D', 'L', 'R', 'M', 'T'};
inline constexpr uint32_t kRemoteFormatVersion = 1;

std::vector<char> encodeRemoteEntry(const std::string& keyName, const std::vector<char>& payload,
                                    std::string_view secret);

// Checks `entry` for `keyName` against each secret (the current one, and the
// previous one during a rotation), in constant time per comparison; the
// payload is copied out only when everything holds.
EntryCheck decodeRemoteEntry(const std::string& keyName, std::string_view entry,
                             const std::vector<std::string>& secrets, std::vector<char>& payload);

}  // namespace spindle::rt
