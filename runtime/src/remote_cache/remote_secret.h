// The secret that authenticates remote cache entries (entry_mac.h), and the
// previous one while a rotation is under way: entries are written under the
// first and accepted under either.
//
// Where it comes from, first found wins:
//   RuntimeOptions::remoteCacheSecrets          (current, then previous)
//   RuntimeOptions::remoteCacheSecretFile       a file: line 1 current, line 2 previous
//   SPINDLE_CACHE_SECRET [+ SPINDLE_CACHE_SECRET_PREVIOUS]
//   SPINDLE_CACHE_SECRET_FILE
// A key file must be a regular file of this user that no one else may read
// or write (chmod 600): a secret others can read authenticates nothing.
// Each secret is at least 16 bytes.
#pragma once

#include <string>
#include <vector>

namespace spindle::rt {

inline constexpr size_t kMinSecretBytes = 16;

// The secrets (current first), or an empty list with `why` saying what is
// missing or wrong. `source` names where they came from, for messages.
std::vector<std::string> loadRemoteSecrets(const std::vector<std::string>& given, const std::string& file,
                                           std::string& why, std::string* source = nullptr);

// The secrets of a key file, checked as above.
std::vector<std::string> readSecretFile(const std::string& path, std::string& why);

}  // namespace spindle::rt
