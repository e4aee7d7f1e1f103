// The read-only https store against nginx with a self-signed certificate
// (AWS_CA_BUNDLE), and the local store.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "libshard/crc32c.h"
#include "libshard/store/local_store.h"
#include "libshard/store/object_store.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard::store {
namespace {

void WriteTree(const std::string& root, const std::string& rel, const std::string& contents) {
  std::filesystem::create_directories(std::filesystem::path(root + "/" + rel).parent_path());
  testing::WriteFileOrDie(root + "/" + rel, contents);
}

std::string Bytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7919) >> 3);
  return s;
}

TEST(StoreHttpsTest, RangeReadsAndVerifiedGetsOverHttpsWithTheCaBundle) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = Bytes(2 << 20);
  WriteTree(dir + "/www", "ds/a b.tfrecord", a);
  std::string why;
  auto nginx = testing::LocalNginx::Start(dir + "/www", dir, &why);
  LIBSHARD_REQUIRE_SERVER(nginx, why);

  ::setenv("AWS_CA_BUNDLE", nginx->ca_file().c_str(), 1);
  StatusOr<Location> loc = ParseLocation(nginx->base() + "/ds/a b.tfrecord");
  ASSERT_TRUE(loc.ok()) << loc.status();
  EXPECT_EQ(loc->scheme, Location::Scheme::kHttps);
  StatusOr<std::unique_ptr<ObjectStore>> s = OpenStore(*loc);
  ASSERT_TRUE(s.ok()) << s.status();
  StatusOr<ObjectInfo> h = (*s)->Head(loc->key);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->size, a.size());
  StatusOr<std::string> r = (*s)->GetRange(loc->key, 12345, 1000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, a.substr(12345, 1000));
  std::string got;
  Status g = (*s)->GetVerified(loc->key, {a.size(), crc32c::Value(a.data(), a.size())}, [&](std::string_view b) {
    got.append(b);
    return Status::OK();
  });
  ASSERT_TRUE(g.ok()) << g;
  EXPECT_TRUE(got == a);
  Status missing = (*s)->GetSmall("ds/nope", 100).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing;
  EXPECT_NE(missing.message().find("HTTP 404"), std::string::npos) << missing;
  EXPECT_EQ((*s)->Put("x", "y").code(), StatusCode::kUnimplemented);

  // Without the bundle the self-signed certificate is refused at once, not retried.
  ::unsetenv("AWS_CA_BUNDLE");
  StatusOr<std::unique_ptr<ObjectStore>> untrusted = OpenStore(*loc);
  ASSERT_TRUE(untrusted.ok());
  Status t = (*untrusted)->Head(loc->key).status();
  EXPECT_EQ(t.code(), StatusCode::kIOError) << t;
  EXPECT_NE(t.message().find("HEAD " + nginx->base()), std::string::npos) << t;
  EXPECT_EQ(t.message().find("attempts"), std::string::npos) << t;
}

TEST(StoreLocalTest, LocalFolderBehindTheSameInterface) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = Bytes(300000);
  auto s = NewLocalStore(dir);
  ASSERT_TRUE(s->Put("ds/a.bin", a).ok());
  ASSERT_TRUE(s->Put("ds/b.bin", "bb").ok());
  EXPECT_EQ(s->Head("ds/a.bin")->size, a.size());
  EXPECT_EQ(*s->GetRange("ds/a.bin", 10, 20), a.substr(10, 20));
  EXPECT_EQ(s->GetRange("ds/a.bin", a.size(), 1).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s->GetSmall("ds/a.bin", 10).status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s->Head("ds/none").status().code(), StatusCode::kNotFound);
  StatusOr<std::vector<ObjectInfo>> l = s->List("ds/");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].key, "ds/a.bin");
  EXPECT_EQ((*l)[1].size, 2u);
  const Expected good{a.size(), crc32c::Value(a.data(), a.size())};
  EXPECT_TRUE(s->GetVerified("ds/a.bin", good, [](std::string_view) { return Status::OK(); }).ok());
  Status bad = s->GetVerified("ds/a.bin", {a.size(), good.crc32c + 1}, [](std::string_view) { return Status::OK(); });
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss) << bad;
  EXPECT_NE(bad.message().find(dir + "/ds/a.bin"), std::string::npos) << bad;
}

TEST(StoreLocationTest, UrlsAndPaths) {
  StatusOr<Location> l = ParseLocation("s3://my-bucket/a/b/manifest.json");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->scheme, Location::Scheme::kS3);
  EXPECT_EQ(l->root, "my-bucket");
  EXPECT_EQ(l->key, "a/b/manifest.json");
  l = ParseLocation("s3://b");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->key, "");
  l = ParseLocation("https://host:8443/x/y");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->root, "https://host:8443");
  EXPECT_EQ(l->key, "x/y");
  l = ParseLocation("/data/ds");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->scheme, Location::Scheme::kLocal);
  EXPECT_EQ(ParseLocation("gs://b/p").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLocation("s3:///p").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseLocation("s3://bad bucket/p").status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsObjectUrl("s3://b/p"));
  EXPECT_FALSE(IsObjectUrl("./s3/p"));
  EXPECT_EQ(JoinKey("a/", "/b"), "a/b");
  EXPECT_EQ(JoinKey("", "b"), "b");
}

}  // namespace
}  // namespace libshard::store
