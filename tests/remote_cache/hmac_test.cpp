// HMAC-SHA256 against the RFC 4231 test vectors, and the constant-time
// comparison.
#include <gtest/gtest.h>

#include <string>

#include "hmac_sha256.h"

namespace spindle::rt {
namespace {

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += char(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

std::string mac(const std::string& key, const std::string& data) {
  return toHex(hmacSha256(key, data.data(), data.size()));
}

TEST(HmacSha256, Rfc4231Vectors) {
  // Test case 1
  EXPECT_EQ(mac(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  // Test case 2: a key shorter than the output
  EXPECT_EQ(mac("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 3: 50 bytes of 0xdd under 20 bytes of 0xaa
  EXPECT_EQ(mac(std::string(20, '\xaa'), std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  // Test case 4
  EXPECT_EQ(mac(unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"), std::string(50, '\xcd')),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
  // Test case 5: the output truncated to 128 bits
  EXPECT_EQ(mac(std::string(20, '\x0c'), "Test With Truncation").substr(0, 32), "a3b6167473100ee06e0c796c2955552b");
  // Test case 6: a key longer than the block is hashed first
  EXPECT_EQ(mac(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // Test case 7
  EXPECT_EQ(mac(std::string(131, '\xaa'),
                "This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                "to be hashed before being used by the HMAC algorithm."),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

TEST(HmacSha256, IncrementalEqualsOneShot) {
  std::string data(300, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 7);
  HmacSha256 h("a key of some length");
  h.update(data.substr(0, 100));
  h.update(data.substr(100));
  EXPECT_EQ(toHex(h.finish()), mac("a key of some length", data));
}

TEST(HmacSha256, ConstantTimeEquality) {
  Digest a = sha256("a", 1), b = a;
  EXPECT_TRUE(equalConstantTime(a, b));
  for (size_t i : {size_t(0), size_t(17), size_t(31)}) {
    Digest c = a;
    c[i] ^= 0x01;
    EXPECT_FALSE(equalConstantTime(a, c)) << "a difference in byte " << i;
  }
}

}  // namespace
}  // namespace spindle::rt
