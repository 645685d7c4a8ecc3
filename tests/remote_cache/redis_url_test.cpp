// SPINDLE_CACHE_REDIS's URL forms, and the refusals that name what is wrong.
#include <gtest/gtest.h>

#include "remote_cache/redis_url.h"

namespace spindle::rt {
namespace {

RedisEndpoint parse(const std::string& url) {
  std::string why;
  auto ep = parseRedisUrl(url, why);
  EXPECT_TRUE(ep.has_value()) << url << ": " << why;
  return ep.value_or(RedisEndpoint{});
}

std::string refusal(const std::string& url) {
  std::string why;
  auto ep = parseRedisUrl(url, why);
  EXPECT_FALSE(ep.has_value()) << url << " was accepted";
  return why;
}

TEST(RedisUrl, TcpForms) {
  RedisEndpoint a = parse("redis://cache.internal:6380/2");
  EXPECT_EQ(a.host, "cache.internal");
  EXPECT_EQ(a.port, 6380);
  EXPECT_EQ(a.db, 2);
  EXPECT_TRUE(a.user.empty());
  EXPECT_TRUE(a.password.empty());

  RedisEndpoint b = parse("redis://localhost");
  EXPECT_EQ(b.port, 6379);
  EXPECT_EQ(b.db, 0);

  RedisEndpoint c = parse("redis://alice:p%40ss%3Aword@10.0.0.5:7000/0");
  EXPECT_EQ(c.user, "alice");
  EXPECT_EQ(c.password, "p@ss:word");
  EXPECT_EQ(c.host, "10.0.0.5");
  EXPECT_EQ(c.port, 7000);

  RedisEndpoint d = parse("redis://:secretpw@host:1/");
  EXPECT_TRUE(d.user.empty());
  EXPECT_EQ(d.password, "secretpw");

  RedisEndpoint e = parse("redis://[::1]:6379/3");
  EXPECT_EQ(e.host, "::1");
  EXPECT_EQ(e.db, 3);
}

TEST(RedisUrl, UnixSocket) {
  RedisEndpoint u = parse("unix:///run/redis/redis.sock?db=4");
  EXPECT_EQ(u.unixPath, "/run/redis/redis.sock");
  EXPECT_TRUE(u.host.empty());
  EXPECT_EQ(u.db, 4);
  RedisEndpoint v = parse("unix://bob:pw@/tmp/r.sock");
  EXPECT_EQ(v.unixPath, "/tmp/r.sock");
  EXPECT_EQ(v.user, "bob");
  EXPECT_EQ(v.password, "pw");
}

TEST(RedisUrl, Refusals) {
  EXPECT_NE(refusal("rediss://host:6379").find("TLS"), std::string::npos);
  EXPECT_NE(refusal("http://host").find("unknown scheme"), std::string::npos);
  EXPECT_NE(refusal("host:6379").find("expected redis://"), std::string::npos);
  EXPECT_NE(refusal("redis://host:99999").find("port"), std::string::npos);
  EXPECT_NE(refusal("redis://host:x").find("port"), std::string::npos);
  EXPECT_NE(refusal("redis://host/abc").find("database"), std::string::npos);
  EXPECT_NE(refusal("redis://:6379").find("no host"), std::string::npos);
  EXPECT_NE(refusal("redis://user:%zz@host").find("%-escape"), std::string::npos);
  EXPECT_NE(refusal("unix://relative.sock").find("absolute"), std::string::npos);
  EXPECT_NE(refusal("redis://[::1:6379").find("']'"), std::string::npos);
}

TEST(RedisUrl, DisplayHidesThePassword) {
  std::string shown = parse("redis://alice:hunter2hunter2@h:1/5").display();
  EXPECT_EQ(shown, "redis://alice:***@h:1/5");
  EXPECT_EQ(shown.find("hunter2"), std::string::npos);
  EXPECT_EQ(parse("unix:///s.sock").display(), "unix:///s.sock?db=0");
}

}  // namespace
}  // namespace spindle::rt
