// The store against a server that lies (tests/servers/lying_s3.py, a real
// HTTP server on 127.0.0.1): every lie ends in a clear error naming the URL,
// in bounded time and memory, or is handled -- never a loop, a crash or a
// silent acceptance of wrong bytes.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "libshard/crc32c.h"
#include "libshard/store/s3_store.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard::store {
namespace {

using libshard::testing::LyingS3;

class HostileServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    std::string why;
    server_ = LyingS3::Start(dir_, &why);
    LIBSHARD_REQUIRE_SERVER(server_, why);
    config_ = server_->Config();
  }
  std::unique_ptr<ObjectStore> Store() { return NewS3Store(config_, "bkt", NewCurlTransport(config_)); }
  static double SecondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  std::string dir_;
  std::unique_ptr<LyingS3> server_;
  StoreConfig config_;
};

TEST_F(HostileServerTest, HonestListPagesAreFollowed) {
  server_->Fill("bkt/ds/k", 10000, 1203, "x");
  server_->Put("bkt/other/k", "x");
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1203u);
  EXPECT_EQ(server_->Count("GET"), 2);
}

TEST_F(HostileServerTest, ListRepeatingItsContinuationTokenStopsNamingTheToken) {
  server_->Lie("list-loop", "GET", "list-type", 1000, "\"keys\": 20000");
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kDataLoss) << list.status();
  EXPECT_NE(list.status().message().find("LIST s3://bkt/ds/"), std::string::npos) << list.status();
  EXPECT_NE(list.status().message().find("continuation token 'the-same-token' again"), std::string::npos)
      << list.status();
  EXPECT_LE(server_->Count("GET"), 2);
  EXPECT_LT(SecondsSince(t0), 20);
}

TEST_F(HostileServerTest, ListWithoutEndStopsAtTheBoundOnKeysNamingIt) {
  config_.list_max_keys = 5000;
  server_->Lie("list-loop", "GET", "list-type", 1000, "\"keys\": 2000, \"fresh\": true");
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kResourceExhausted) << list.status();
  EXPECT_NE(list.status().message().find("LIST s3://bkt/ds/"), std::string::npos) << list.status();
  EXPECT_NE(list.status().message().find("more than 5000 keys"), std::string::npos) << list.status();
  EXPECT_LE(server_->Count("GET"), 3);
}

TEST_F(HostileServerTest, ListWithoutEndStopsAtTheBoundOnPagesNamingIt) {
  config_.list_max_pages = 4;
  server_->Lie("list-loop", "GET", "list-type", 1000, "\"keys\": 1, \"fresh\": true");
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kResourceExhausted) << list.status();
  EXPECT_NE(list.status().message().find("more than 4 pages"), std::string::npos) << list.status();
  EXPECT_EQ(server_->Count("GET"), 4);
}

TEST_F(HostileServerTest, ListPageOverItsBoundNamesTheOperationAndUrl) {
  server_->Put("bkt/ds/a", "x");
  server_->Lie("list-huge", "GET", "list-type", 1, "\"bytes\": 17000000");
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kResourceExhausted) << list.status();
  EXPECT_NE(list.status().message().find("LIST s3://bkt/ds/"), std::string::npos) << list.status();
  EXPECT_NE(list.status().message().find("larger than 16777216 bytes"), std::string::npos) << list.status();
}

TEST_F(HostileServerTest, ListedKeyOutsideThePrefixIsAnErrorNamingIt) {
  server_->Put("bkt/ds/a", "x");
  server_->Lie("list-outside", "GET", "list-type", 1, "\"keys\": [\"elsewhere/x\"]");
  StatusOr<std::vector<ObjectInfo>> list = Store()->List("ds/");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kDataLoss) << list.status();
  EXPECT_NE(list.status().message().find("'elsewhere/x'"), std::string::npos) << list.status();
  EXPECT_NE(list.status().message().find("outside the prefix"), std::string::npos) << list.status();
}

// A server that sends above the stall limit (1 KiB/s) but far too slowly for
// the object's size ends at the try's deadline, naming it and the URL.
TEST_F(HostileServerTest, DripAboveTheStallLimitEndsAtTheDeadlineNamingIt) {
  const std::string bytes(32 << 10, 'd');
  server_->Put("bkt/ds/slow", bytes);
  config_.retry.deadline_base_s = 1;
  config_.retry.deadline_min_rate = 16 << 10;  // 32 KiB: 1 s + 2 s
  for (int call = 0; call < 2; ++call) {
    server_->Lie("drip", "GET", "ds/slow", 1, "\"rate\": 4096");  // 8 s for the whole body
    const auto t0 = std::chrono::steady_clock::now();
    Status s = call == 0 ? Store()->GetVerified("ds/slow", {bytes.size(), crc32c::Value(bytes.data(), bytes.size())},
                                                [](std::string_view) { return Status::OK(); })
                         : Store()->GetSmall("ds/slow", 1 << 20).status();
    const double took = SecondsSince(t0);
    ASSERT_FALSE(s.ok()) << call;
    EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
    EXPECT_NE(s.message().find("GET s3://bkt/ds/slow"), std::string::npos) << s;
    EXPECT_NE(s.message().find("the deadline of 3.0 s expired"), std::string::npos) << s;
    EXPECT_GE(took, 2.5) << s;
    EXPECT_LT(took, 6) << s;
  }
  EXPECT_EQ(server_->Count("GET"), 2);  // a deadline is not retried
}

TEST_F(HostileServerTest, DeadlineComesFromTheEnvironment) {
  ::setenv("LIBSHARD_DEADLINE_BASE_S", "7.5", 1);
  ::setenv("LIBSHARD_DEADLINE_MIN_RATE", "1000", 1);
  StatusOr<StoreConfig> c = StoreConfig::FromEnvironment();
  ::setenv("LIBSHARD_DEADLINE_MIN_RATE", "fast", 1);
  StatusOr<StoreConfig> bad = StoreConfig::FromEnvironment();
  ::unsetenv("LIBSHARD_DEADLINE_BASE_S");
  ::unsetenv("LIBSHARD_DEADLINE_MIN_RATE");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->retry.deadline_base_s, 7.5);
  EXPECT_EQ(c->retry.deadline_min_rate, 1000);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("LIBSHARD_DEADLINE_MIN_RATE=fast"), std::string::npos) << bad.status();
}

// Cancel() ends a transfer in flight (a drip of 20 KB/s) within a second or
// two, and every later call at once.
TEST_F(HostileServerTest, CancelEndsADownloadInFlight) {
  const std::string bytes(1 << 20, 'c');
  server_->Put("bkt/ds/big", bytes);
  server_->Lie("drip", "GET", "ds/big", 10, "\"rate\": 20000, \"chunk\": 1000");
  std::unique_ptr<ObjectStore> store = Store();
  uint64_t got = 0;
  Status s;
  std::thread t([&] {
    s = store->GetVerified("ds/big", {bytes.size(), crc32c::Value(bytes.data(), bytes.size())},
                           [&](std::string_view b) {
                             got += b.size();
                             return Status::OK();
                           });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const auto t0 = std::chrono::steady_clock::now();
  store->Cancel();
  t.join();
  EXPECT_LT(SecondsSince(t0), 2.0);
  EXPECT_GT(got, 0u);
  EXPECT_LT(got, bytes.size());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
  EXPECT_NE(s.message().find("GET s3://bkt/ds/big"), std::string::npos) << s;
  EXPECT_NE(s.message().find("cancelled"), std::string::npos) << s;
  StatusOr<ObjectInfo> later = store->Head("ds/big");
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.status().message().find("cancelled"), std::string::npos) << later.status();
}

// A Content-Length larger than the body, all of whose bytes came with the
// right CRC: the object is complete (no resume past its end, no HTTP 416).
TEST_F(HostileServerTest, ContentLengthPastACompleteBodyIsAccepted) {
  const std::string bytes(5000, 'L');
  server_->Put("bkt/ds/long", bytes);
  server_->Lie("long-length", "GET", "ds/long", 1, "\"extra\": 100");
  std::string got;
  Status s = Store()->GetVerified("ds/long", {bytes.size(), crc32c::Value(bytes.data(), bytes.size())},
                                  [&](std::string_view b) {
                                    got += b;
                                    return Status::OK();
                                  });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(got, bytes);
  EXPECT_EQ(server_->Count("GET"), 1);
}

// A body longer than its Content-Length leaves bytes on the kept-alive
// connection: they are never taken as data (a verified download that came
// short is DataLoss naming the sizes), and the next request, which meets
// them, is retried on a fresh connection.
TEST_F(HostileServerTest, BodyLongerThanItsContentLengthDoesNotBreakTheNextRequest) {
  const std::string a(3000, 'a'), b(4000, 'b');
  server_->Put("bkt/ds/a", a);
  server_->Put("bkt/ds/b", b);
  std::unique_ptr<ObjectStore> store = Store();
  server_->Lie("short-length", "GET", "ds/a", 1, "\"extra\": 10");
  Status s = store->GetVerified("ds/a", {a.size(), crc32c::Value(a.data(), a.size())},
                                [&](std::string_view) { return Status::OK(); });
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("GET s3://bkt/ds/a: the object has 2990 bytes, the manifest 3000"), std::string::npos)
      << s;
  StatusOr<std::string> next = store->GetSmall("ds/b", 1 << 20);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, b);
  // Without a size to check against, the short answer is all there is; the
  // request after it is unharmed all the same.
  server_->Lie("short-length", "GET", "ds/a", 1, "\"extra\": 10");
  StatusOr<std::string> cut = store->GetSmall("ds/a", 1 << 20);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_EQ(cut->size(), a.size() - 10);
  next = store->GetSmall("ds/b", 1 << 20);
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(*next, b);
}

TEST_F(HostileServerTest, RedirectErrorNamesItsLocation) {
  server_->Put("bkt/ds/a", "x");
  server_->Lie("redirect", "GET", "ds/a", 1, "\"location\": \"http://elsewhere.example/bkt/ds/a\"");
  StatusOr<std::string> got = Store()->GetSmall("ds/a", 100);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("HTTP 302"), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("redirect to http://elsewhere.example/bkt/ds/a (not followed)"),
            std::string::npos)
      << got.status();
}

// Over 16 MiB an object comes in ranged parts; a server whose ETag differs
// per answer (a load balancer) still gives the manifest's bytes: accepted.
TEST_F(HostileServerTest, EtagDifferingPerAnswerIsAcceptedWhenSizeAndCrcMatch) {
  std::string bytes(3 << 20, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 11);
  server_->Put("bkt/ds/big", bytes);
  server_->Lie("etag-changes", "GET", "ds/big", 100);
  PartOptions parts;
  parts.part_size = 1 << 20;
  parts.parallel = 3;
  std::string got(bytes.size(), '\0');
  std::mutex mu;
  Status s = Store()->GetVerifiedParts("ds/big", {bytes.size(), crc32c::Value(bytes.data(), bytes.size())}, parts,
                                       [&](uint64_t at, std::string_view b) {
                                         std::lock_guard<std::mutex> lock(mu);
                                         got.replace(at, b.size(), b);
                                         return Status::OK();
                                       });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(got == bytes);
  EXPECT_EQ(server_->Count("GET"), 3);
}

TEST_F(HostileServerTest, ForbiddenIsPermissionDeniedNamingTheUrlAndCode) {
  server_->Put("bkt/ds/a", "x");
  server_->Lie("status", "GET", "ds/a", 1, "\"status\": 403, \"code\": \"AccessDenied\"");
  StatusOr<std::string> got = Store()->GetSmall("ds/a", 100);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied) << got.status();
  EXPECT_NE(got.status().message().find("GET s3://bkt/ds/a"), std::string::npos) << got.status();
  EXPECT_NE(got.status().message().find("HTTP 403 AccessDenied"), std::string::npos) << got.status();
  EXPECT_EQ(server_->Count("GET"), 1);  // not retried
}

}  // namespace
}  // namespace libshard::store
