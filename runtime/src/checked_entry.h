// The file format and file handling both on-disk stores share: the binary
// cache (disk_cache.h) and the tuning store (tuning/tuning_store.h).
//
// Entry (little-endian):
//   magic (8 bytes) | u32 format version | u32 key length (64) |
//   u64 payload size | key (64 hex chars) | SHA-256 of payload (32 bytes) | payload
// Each store has its own magic; a reader checks every field, so a
// truncated, foreign or damaged file, or another key's, is refused.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace spindle::rt {

constexpr size_t kCheckedEntryHeaderBytes = 8 + 4 + 4 + 8 + 64 + 32;

std::vector<char> encodeCheckedEntry(const char (&magic)[8], uint32_t version, const std::string& keyHex,
                                     const std::vector<char>& payload);

// The payload of `file` as an entry of `keyHex`, or, in `invalid`, why it is
// not one ("truncated header", "checksum mismatch", ...; `foreign` names a
// file of another kind: "not a Spindle cache entry").
struct DecodedEntry {
  std::vector<char> payload;
  const char* invalid = nullptr;
};
DecodedEntry decodeCheckedEntry(const char (&magic)[8], uint32_t version, const std::string& keyHex,
                                const std::vector<char>& file, const char* foreign);

// mkdir -p; false with errno set on failure (ENOTDIR: a file is in the way).
bool makeDirs(const std::string& path);
// A regular file's bytes and its stat (to tell later whether another
// process replaced it); false when it cannot be opened or is not a file.
bool readWholeFile(const std::string& path, std::vector<char>& out, struct stat& st);
// Writes all `n` bytes (retrying short writes and EINTR); false with the
// error in `err` (EIO for a write that wrote nothing).
bool writeFully(int fd, const char* p, size_t n, int& err);
// "<pid>.<16 hex>": a temporary file's suffix no other writer picks.
std::string uniqueSuffix();

}  // namespace spindle::rt
