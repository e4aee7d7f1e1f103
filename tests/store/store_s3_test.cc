// The S3 store against a real S3-compatible server (s3rver, which checks
// SigV4 signatures), directly and through the fault-injecting proxy; boto3
// as an independent client for cross-checks.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "libshard/crc32c.h"
#include "libshard/store/object_store.h"
#include "libshard/store/s3_store.h"
#include "servers/servers.h"
#include "testutil.h"

#define ASSERT_OK(expr)              \
  do {                               \
    ::libshard::Status _st = (expr); \
    ASSERT_TRUE(_st.ok()) << _st;    \
  } while (0)

namespace libshard::store {
namespace {

namespace fs = std::filesystem;
using testing::FaultProxy;
using testing::LocalS3;

std::string Bytes(size_t n, uint32_t seed = 1) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s[i] = static_cast<char>(x >> 56);
  }
  return s;
}

Expected ExpectOf(const std::string& bytes) { return {bytes.size(), crc32c::Value(bytes.data(), bytes.size())}; }

class StoreS3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    std::string why;
    s3_ = LocalS3::Start(dir_ + "/s3", {"bkt"}, &why);
    LIBSHARD_REQUIRE_SERVER(s3_, why);
  }
  // The store, straight to s3rver or through a fault proxy.
  std::unique_ptr<ObjectStore> Store(const StoreConfig& c) { return NewS3Store(c, "bkt", NewCurlTransport(c)); }
  std::unique_ptr<ObjectStore> Store() { return Store(s3_->Config()); }
  FaultProxy* Proxy() {
    if (!proxy_) {
      std::string why;
      proxy_ = FaultProxy::Start(s3_->port(), dir_, &why);
      EXPECT_TRUE(proxy_) << why;
    }
    return proxy_.get();
  }
  StoreConfig ProxyConfig() {
    StoreConfig c = s3_->Config();
    c.endpoint = Proxy()->endpoint();
    return c;
  }

  std::string dir_;
  std::unique_ptr<LocalS3> s3_;
  std::unique_ptr<FaultProxy> proxy_;
};

TEST_F(StoreS3Test, PutHeadGetRangeListRoundTrip) {
  auto s = Store();
  const std::string a = Bytes(100000, 1), b = Bytes(10, 2);
  ASSERT_OK(s->Put("ds/a.tfrecord", a));
  ASSERT_OK(s->Put("ds/sub dir/b+c.idx", b));
  ASSERT_OK(s->Put("other/x", "x"));

  StatusOr<ObjectInfo> h = s->Head("ds/a.tfrecord");
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->size, a.size());
  EXPECT_FALSE(h->etag.empty());

  StatusOr<std::string> r = s->GetRange("ds/a.tfrecord", 1000, 2345);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, a.substr(1000, 2345));
  r = s->GetRange("ds/a.tfrecord", a.size() - 5, 100);  // cut at the end
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, a.substr(a.size() - 5));
  EXPECT_EQ(s->GetRange("ds/a.tfrecord", a.size() + 10, 5).status().code(), StatusCode::kOutOfRange);

  r = s->GetSmall("ds/sub dir/b+c.idx", 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, b);
  Status big = s->GetSmall("ds/a.tfrecord", 1000).status();
  EXPECT_EQ(big.code(), StatusCode::kResourceExhausted) << big;

  StatusOr<std::vector<ObjectInfo>> l = s->List("ds/");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].key, "ds/a.tfrecord");
  EXPECT_EQ((*l)[0].size, a.size());
  EXPECT_EQ((*l)[1].key, "ds/sub dir/b+c.idx");

  Status missing = s->Head("ds/nope").status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing;
  missing = s->GetSmall("ds/nope", 10).status();
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing;
  EXPECT_NE(missing.message().find("GET s3://bkt/ds/nope (" + s3_->endpoint() + "/bkt/ds/nope): HTTP 404 NoSuchKey"),
            std::string::npos)
      << missing;
}

TEST_F(StoreS3Test, GetVerifiedChecksSizeAndCrc) {
  auto s = Store();
  const std::string a = Bytes(3 << 20, 3);
  ASSERT_OK(s->Put("a", a));
  std::string got;
  auto sink = [&](std::string_view b) {
    got.append(b);
    return Status::OK();
  };
  ASSERT_TRUE(s->GetVerified("a", ExpectOf(a), sink).ok());
  EXPECT_EQ(got, a);

  Expected wrong_crc = ExpectOf(a);
  wrong_crc.crc32c ^= 1;
  got.clear();
  Status bad = s->GetVerified("a", wrong_crc, sink);
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss) << bad;
  EXPECT_NE(bad.message().find("s3://bkt/a"), std::string::npos) << bad;
  EXPECT_NE(bad.message().find("checksum mismatch"), std::string::npos) << bad;

  Expected shorter = ExpectOf(a.substr(0, 1000));
  got.clear();
  bad = s->GetVerified("a", shorter, sink);
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss) << bad;
  EXPECT_NE(bad.message().find("larger than the 1000 bytes"), std::string::npos) << bad;
  EXPECT_LE(got.size(), 1000u);  // stopped at once

  Expected longer{a.size() + 1, 0};
  bad = s->GetVerified("a", longer, sink);
  EXPECT_EQ(bad.code(), StatusCode::kDataLoss) << bad;
}

TEST_F(StoreS3Test, MultipartUploadInParallelMatchesTheFileAndBoto3ReadsIt) {
  const std::string a = Bytes((12 << 20) + 12345, 4);
  const std::string path = dir_ + "/big.bin";
  testing::WriteFileOrDie(path, a);
  PutOptions o;
  o.multipart_threshold = 5 << 20;
  o.part_size = 5 << 20;
  o.parallel_parts = 3;
  auto s = Store();
  Status put = s->PutFile("ds/big.bin", path, o);
  ASSERT_TRUE(put.ok()) << put;
  std::string got;
  ASSERT_TRUE(s->GetVerified("ds/big.bin", ExpectOf(a), [&](std::string_view b) {
                 got.append(b);
                 return Status::OK();
               }).ok());
  EXPECT_EQ(got == a, true);
  // An independent client: boto3 reads the object back.
  const std::string out = dir_ + "/boto3.bin";
  const std::string py = "import boto3,sys; c=boto3.client('s3',endpoint_url='" + s3_->endpoint() +
                         "',aws_access_key_id='S3RVER',aws_secret_access_key='S3RVER',region_name='us-east-1'); "
                         "open('" +
                         out + "','wb').write(c.get_object(Bucket='bkt',Key='ds/big.bin')['Body'].read())";
  testing::CommandResult r = testing::RunCommand(testing::TestPython() + " -c \"" + py + "\"");
  if (r.exit_code != 0 && r.err.find("No module named 'boto3'") != std::string::npos && !testing::ServersRequired()) {
    GTEST_SKIP() << "python3-boto3 is not installed";
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(testing::ReadFileOrDie(out) == a);
}

TEST_F(StoreS3Test, ReadsWhatBoto3Wrote) {
  const std::string a = Bytes(7 << 20, 5);
  const std::string path = dir_ + "/in.bin";
  testing::WriteFileOrDie(path, a);
  // upload_file goes multipart above 8 MiB by default; force it at 5 MiB.
  const std::string py =
      "import boto3; from boto3.s3.transfer import TransferConfig; c=boto3.client('s3',endpoint_url='" +
      s3_->endpoint() +
      "',aws_access_key_id='S3RVER',aws_secret_access_key='S3RVER',region_name='us-east-1'); "
      "c.upload_file('" +
      path +
      "','bkt','from/boto3.bin',Config=TransferConfig(multipart_threshold=5<<20,"
      "multipart_chunksize=5<<20))";
  testing::CommandResult r = testing::RunCommand(testing::TestPython() + " -c \"" + py + "\"");
  if (r.exit_code != 0 && r.err.find("No module named 'boto3'") != std::string::npos && !testing::ServersRequired()) {
    GTEST_SKIP() << "python3-boto3 is not installed";
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = Store();
  std::string got;
  Status g = s->GetVerified("from/boto3.bin", ExpectOf(a), [&](std::string_view b) {
    got.append(b);
    return Status::OK();
  });
  ASSERT_TRUE(g.ok()) << g;
  EXPECT_TRUE(got == a);
}

TEST_F(StoreS3Test, WrongSecretIsAClear403WithoutRetriesOrSecrets) {
  ASSERT_OK(Store()->Put("k", "v"));
  StoreConfig c = ProxyConfig();
  c.secret_access_key = "NOT-THE-SECRET";
  Status s = Store(c)->GetSmall("k", 10).status();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("GET s3://bkt/k (" + c.endpoint + "/bkt/k): HTTP 403 SignatureDoesNotMatch"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.message().find("NOT-THE-SECRET"), std::string::npos) << s;
  EXPECT_EQ(Proxy()->Count("GET"), 1);  // not retried
}

TEST_F(StoreS3Test, DeadEndpointIsAClearErrorAfterTheRetryBudget) {
  // A port nobody listens on: the proxy's, once it is stopped.
  StoreConfig c = ProxyConfig();
  proxy_.reset();
  c.retry.max_attempts = 3;
  Status s = Store(c)->GetSmall("k", 10).status();
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
  EXPECT_NE(s.message().find("GET s3://bkt/k (" + c.endpoint + "/bkt/k): "), std::string::npos) << s;
  EXPECT_NE(s.message().find("onnect"), std::string::npos) << s;
  EXPECT_NE(s.message().find("after 3 attempts"), std::string::npos) << s;
}

TEST_F(StoreS3Test, CutBodiesAreResumedAndTheBytesStayExact) {
  const std::string a = Bytes(4 << 20, 6);
  ASSERT_OK(Store()->Put("a", a));
  auto s = Store(ProxyConfig());
  Proxy()->Fault("cut", "GET", "/bkt/a", 2);
  std::string got;
  Status g = s->GetVerified("a", ExpectOf(a), [&](std::string_view b) {
    got.append(b);
    return Status::OK();
  });
  ASSERT_TRUE(g.ok()) << g;
  EXPECT_TRUE(got == a);
  EXPECT_EQ(Proxy()->Count("GET"), 3);
  // A ranged read cut midway is retried whole.
  Proxy()->Fault("cut", "GET", "/bkt/a", 1);
  StatusOr<std::string> r = s->GetRange("a", 100, 1 << 20);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r == a.substr(100, 1 << 20));
}

TEST_F(StoreS3Test, SlowDownAndServerErrorsAreRetried) {
  auto s = Store(ProxyConfig());
  Proxy()->Fault("slowdown", "PUT", "", 2);
  ASSERT_OK(s->Put("k", "value"));
  Proxy()->Fault("error500", "GET", "", 1);
  Proxy()->Fault("slowdown", "GET", "", 1);
  StatusOr<std::string> v = s->GetSmall("k", 100);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "value");
  EXPECT_EQ(Proxy()->Count("PUT"), 3);
  EXPECT_EQ(Proxy()->Count("GET"), 3);
  // A server that keeps saying SlowDown: the error says so, after the budget.
  StoreConfig c = ProxyConfig();
  c.retry.max_attempts = 3;
  Proxy()->Fault("slowdown", "GET", "", 10);
  Status e = Store(c)->GetSmall("k", 100).status();
  EXPECT_EQ(e.code(), StatusCode::kIOError) << e;
  EXPECT_NE(e.message().find("HTTP 503 SlowDown"), std::string::npos) << e;
  EXPECT_NE(e.message().find("after 3 attempts"), std::string::npos) << e;
}

TEST_F(StoreS3Test, StalledTransferIsCutAndRetried) {
  const std::string a = Bytes(1 << 20, 7);
  ASSERT_OK(Store()->Put("a", a));
  StoreConfig c = ProxyConfig();
  c.retry.low_speed_time_s = 1;
  auto s = Store(c);
  Proxy()->Fault("stall", "GET", "", 1, 30);  // far longer than the stall limit
  std::string got;
  Status g = s->GetVerified("a", ExpectOf(a), [&](std::string_view b) {
    got.append(b);
    return Status::OK();
  });
  ASSERT_TRUE(g.ok()) << g;
  EXPECT_TRUE(got == a);
  EXPECT_EQ(Proxy()->Count("GET"), 2);
}

TEST_F(StoreS3Test, DroppedUploadsAreRetriedSingleAndMultipart) {
  const std::string a = Bytes((10 << 20) + 7, 8);
  const std::string path = dir_ + "/f.bin";
  testing::WriteFileOrDie(path, a);
  auto s = Store(ProxyConfig());
  Proxy()->Fault("drop", "PUT", "/bkt/single", 1);
  ASSERT_OK(s->PutFile("single", path));
  PutOptions o;
  o.multipart_threshold = o.part_size = 5 << 20;
  Proxy()->Fault("drop", "PUT", "partNumber=2", 1);
  Status m = s->PutFile("multi", path, o);
  ASSERT_TRUE(m.ok()) << m;
  auto direct = Store();
  for (const char* key : {"single", "multi"}) {
    std::string got;
    ASSERT_TRUE(direct
                    ->GetVerified(key, ExpectOf(a),
                                  [&](std::string_view b) {
                                    got.append(b);
                                    return Status::OK();
                                  })
                    .ok())
        << key;
    EXPECT_TRUE(got == a) << key;
  }
}

TEST_F(StoreS3Test, OpenStoreFromTheEnvironment) {
  ASSERT_OK(Store()->Put("ds/manifest.json", "{}"));
  ::setenv("AWS_ENDPOINT_URL", s3_->endpoint().c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  StatusOr<Location> loc = ParseLocation("s3://bkt/ds/manifest.json");
  ASSERT_TRUE(loc.ok());
  StatusOr<std::unique_ptr<ObjectStore>> s = OpenStore(*loc);
  ASSERT_TRUE(s.ok()) << s.status();
  StatusOr<std::string> m = (*s)->GetSmall(loc->key, 100);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(*m, "{}");
}

}  // namespace
}  // namespace libshard::store
