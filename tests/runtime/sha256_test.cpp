// The cache key hash against the FIPS 180-4 / NIST test vectors.
#include <gtest/gtest.h>

#include <string>

#include "../../runtime/src/sha256.h"

using spindle::rt::Sha256;
using spindle::rt::sha256;
using spindle::rt::toHex;

static std::string hexOf(const std::string& s) { return toHex(sha256(s.data(), s.size())); }

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(hexOf(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hexOf("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hexOf(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += char('a' + i % 26);
  for (size_t split : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 999u}) {
    Sha256 h;
    h.update(text.substr(0, split));
    h.update(text.substr(split));
    EXPECT_EQ(toHex(h.finish()), hexOf(text)) << "split at " << split;
  }
}
