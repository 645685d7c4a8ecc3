// The remote entry format: what verifies, and how each kind of damage or
// forgery is told apart (the layer warns differently for them).
#include <gtest/gtest.h>

#include "remote_cache/entry_mac.h"
#include "sha256.h"

namespace spindle::rt {
namespace {

const std::string kSecret = "0123456789abcdef-current";
const std::string kOld = "0123456789abcdef-previous";
const std::string kName = "spindle:v1:bin:" + std::string(64, 'a');

std::vector<char> payload() {
  std::vector<char> p(3000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = char(i * 13 + 1);
  return p;
}

EntryCheck check(const std::vector<char>& entry, const std::vector<std::string>& secrets,
                 const std::string& name = kName) {
  std::vector<char> out;
  EntryCheck c = decodeRemoteEntry(name, std::string_view(entry.data(), entry.size()), secrets, out);
  if (c == EntryCheck::Ok) EXPECT_EQ(out, payload());
  else EXPECT_TRUE(out.empty()) << "a refused entry must hand out nothing";
  return c;
}

TEST(EntryMac, RoundTrip) {
  EXPECT_EQ(check(encodeRemoteEntry(kName, payload(), kSecret), {kSecret}), EntryCheck::Ok);
  std::vector<char> empty, out;
  auto e = encodeRemoteEntry(kName, empty, kSecret);
  EXPECT_EQ(decodeRemoteEntry(kName, std::string_view(e.data(), e.size()), {kSecret}, out), EntryCheck::Ok);
}

TEST(EntryMac, RotationAcceptsThePreviousSecret) {
  auto old = encodeRemoteEntry(kName, payload(), kOld);
  EXPECT_EQ(check(old, {kSecret, kOld}), EntryCheck::Ok);
  EXPECT_EQ(check(old, {kSecret}), EntryCheck::BadMac) << "once the rotation ends the old secret is refused";
}

TEST(EntryMac, ForgeryWithAValidChecksumIsRefused) {
  // What a planted binary looks like: a self-consistent entry (its SHA-256
  // matches) authenticated under a secret the reader does not have.
  auto forged = encodeRemoteEntry(kName, payload(), "an attacker's own secret!");
  EXPECT_EQ(check(forged, {kSecret}), EntryCheck::BadMac);
  // Flipping a MAC bit of a genuine entry.
  auto e = encodeRemoteEntry(kName, payload(), kSecret);
  size_t macAt = 24 + kName.size() + 32;
  e[macAt + 5] ^= 0x40;
  EXPECT_EQ(check(e, {kSecret}), EntryCheck::BadMac);
}

TEST(EntryMac, TheMacCoversTheKeyName) {
  // An entry moved to another key (or namespace) names its own key: refused
  // before its MAC is checked; one rewritten to name the new key fails the MAC.
  const std::string other = "spindle:v1:tune:" + std::string(64, 'a');
  auto e = encodeRemoteEntry(kName, payload(), kSecret);
  EXPECT_EQ(check(e, {kSecret}, other), EntryCheck::OtherKey);
  std::vector<char> renamed = e;
  std::string sameLength = "spindle:v1:bin:" + std::string(63, 'a') + "b";
  std::copy(sameLength.begin(), sameLength.end(), renamed.begin() + 24);
  EXPECT_EQ(check(renamed, {kSecret}, sameLength), EntryCheck::BadMac);
}

TEST(EntryMac, DamageIsToldApartFromForgery) {
  auto e = encodeRemoteEntry(kName, payload(), kSecret);
  std::vector<char> flipped = e;
  flipped[flipped.size() - 10] ^= 0x01;  // a payload byte
  EXPECT_EQ(check(flipped, {kSecret}), EntryCheck::BadChecksum);
  std::vector<char> truncated(e.begin(), e.end() - 100);
  EXPECT_EQ(check(truncated, {kSecret}), EntryCheck::Malformed);
  std::vector<char> headerOnly(e.begin(), e.begin() + 20);
  EXPECT_EQ(check(headerOnly, {kSecret}), EntryCheck::Malformed);
  std::vector<char> version = e;
  version[8] = 2;
  EXPECT_EQ(check(version, {kSecret}), EntryCheck::Malformed);
  std::vector<char> magic = e;
  magic[0] = 'X';
  EXPECT_EQ(check(magic, {kSecret}), EntryCheck::Malformed);
  std::vector<char> hugeName = e;
  hugeName[15] = char(0x7f);  // key name length far past the end
  EXPECT_EQ(check(hugeName, {kSecret}), EntryCheck::Malformed);
}

}  // namespace
}  // namespace spindle::rt
