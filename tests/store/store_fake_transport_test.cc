// What s3rver does not check, on a fake transport: the payload hash sent
// with each request, the abort of a failed multipart upload, the canonical
// query, which answers are retried and which are not, and that credentials
// stay out of messages.
#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>

#include "libshard/crc32c.h"
#include "libshard/store/s3_store.h"
#include "libshard/store/shard_cache.h"
#include "libshard/store/web_server_store.h"
#include "testutil.h"

namespace libshard::store {
namespace {

struct Answer {
  long status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  std::string transport_error;
};

// Records every request; answers from a script (by default 200, empty body).
class FakeTransport : public HttpTransport {
 public:
  struct Seen {
    HttpRequest request;
    std::string body;
  };
  Status Perform(const HttpRequest& q, HttpResponse* r) override {
    std::lock_guard<std::mutex> lock(mu_);
    Seen s{q, std::string(q.body)};
    if (q.body_fd >= 0) {
      s.body.resize(q.body_length);
      (void)::pread(q.body_fd, s.body.data(), q.body_length, static_cast<off_t>(q.body_offset));
    }
    seen.push_back(s);
    Answer a;
    if (script) a = script(q);
    *r = HttpResponse();
    r->status = a.transport_error.empty() ? a.status : 0;
    r->headers = a.headers;
    r->transport_error = a.transport_error;
    if (!a.transport_error.empty()) return Status::OK();
    if (a.status >= 200 && a.status < 300 && q.on_body) return q.on_body(a.body);
    r->body = a.body;
    return Status::OK();
  }
  std::function<Answer(const HttpRequest&)> script;
  std::vector<Seen> seen;
  std::mutex mu_;
};

StoreConfig TestConfig() {
  StoreConfig c;
  c.endpoint = "http://127.0.0.1:9";
  c.access_key_id = "AKIDEXAMPLE";
  c.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  c.retry.base_delay_s = 0.001;
  c.retry.max_delay_s = 0.002;
  c.retry.max_attempts = 4;
  return c;
}

std::string HeaderValue(const HttpRequest& q, const std::string& name) {
  for (const std::string& h : q.headers) {
    if (h.rfind(name + ": ", 0) == 0) return h.substr(name.size() + 2);
  }
  return "<absent>";
}

TEST(StoreFakeTransportTest, PayloadHashIsTheBodysSha256AndRequestsAreSigned) {
  auto t = std::make_shared<FakeTransport>();
  auto s = NewS3Store(TestConfig(), "bkt", t);
  ASSERT_TRUE(s->Put("dir/hello.txt", "hello").ok());
  ASSERT_TRUE(s->GetSmall("dir/hello.txt", 100).ok());
  ASSERT_EQ(t->seen.size(), 2u);
  const HttpRequest& put = t->seen[0].request;
  EXPECT_EQ(put.method, "PUT");
  EXPECT_EQ(put.url, "http://127.0.0.1:9/bkt/dir/hello.txt");
  // sha256("hello"), computed elsewhere (sha256sum).
  EXPECT_EQ(HeaderValue(put, "x-amz-content-sha256"),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  EXPECT_EQ(put.aws_sigv4, "aws:amz:us-east-1:s3");
  EXPECT_EQ(t->seen[0].body, "hello");
  // A request without a body carries the empty string's hash.
  EXPECT_EQ(HeaderValue(t->seen[1].request, "x-amz-content-sha256"),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HeaderValue(put, "x-amz-security-token"), "<absent>");
}

// A file's bytes are signed over plain http (nothing else protects them on
// the way); over https they go up as UNSIGNED-PAYLOAD (TLS does), single PUT
// and multipart parts alike.
TEST(StoreFakeTransportTest, FileUploadsAreUnsignedPayloadOverHttpsOnly) {
  const std::string dir = testing::MakeTempDir();
  testing::WriteFileOrDie(dir + "/f", "hello");
  auto answer = [](const HttpRequest& q) {
    Answer a;
    if (q.url.find("?uploads=") != std::string::npos) {
      a.body = "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>";
    } else if (q.method == "PUT") {
      a.headers["etag"] = "\"e\"";
    }
    return a;
  };
  auto t = std::make_shared<FakeTransport>();
  ASSERT_TRUE(NewS3Store(TestConfig(), "bkt", t)->PutFile("k", dir + "/f").ok());
  ASSERT_EQ(t->seen.size(), 1u);
  EXPECT_EQ(HeaderValue(t->seen[0].request, "x-amz-content-sha256"),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");  // sha256("hello")

  StoreConfig https = TestConfig();
  https.endpoint = "https://127.0.0.1:9";
  auto t2 = std::make_shared<FakeTransport>();
  t2->script = answer;
  ASSERT_TRUE(NewS3Store(https, "bkt", t2)->PutFile("k", dir + "/f").ok());
  PutOptions o;
  o.multipart_threshold = 1;
  o.part_size = 2;
  o.parallel_parts = 1;
  ASSERT_TRUE(NewS3Store(https, "bkt", t2)->PutFile("k", dir + "/f", o).ok());
  int puts = 0;
  for (const auto& seen : t2->seen) {
    if (seen.request.method != "PUT") continue;
    ++puts;
    EXPECT_EQ(HeaderValue(seen.request, "x-amz-content-sha256"), "UNSIGNED-PAYLOAD") << seen.request.url;
    EXPECT_EQ(seen.request.aws_sigv4, "aws:amz:us-east-1:s3");  // still signed, headers and all
  }
  EXPECT_EQ(puts, 1 + 3);  // the single PUT, then 3 parts of 2, 2 and 1 bytes
}

TEST(StoreFakeTransportTest, SessionTokenIsAHeaderAndAnonymousIsUnsigned) {
  StoreConfig c = TestConfig();
  c.session_token = "TOKEN123";
  c.region = "eu-west-3";
  auto t = std::make_shared<FakeTransport>();
  (void)NewS3Store(c, "b", t)->Head("k");
  ASSERT_EQ(t->seen.size(), 1u);
  EXPECT_EQ(HeaderValue(t->seen[0].request, "x-amz-security-token"), "TOKEN123");
  EXPECT_EQ(t->seen[0].request.aws_sigv4, "aws:amz:eu-west-3:s3");

  StoreConfig anon = TestConfig();
  anon.access_key_id.clear();
  anon.secret_access_key.clear();
  auto t2 = std::make_shared<FakeTransport>();
  (void)NewS3Store(anon, "b", t2)->GetSmall("k", 10);
  ASSERT_EQ(t2->seen.size(), 1u);
  EXPECT_TRUE(t2->seen[0].request.aws_sigv4.empty());
  EXPECT_TRUE(t2->seen[0].request.credentials.empty());
}

TEST(StoreFakeTransportTest, KeysAndQueriesAreEncodedAndSorted) {
  auto t = std::make_shared<FakeTransport>();
  t->script = [](const HttpRequest&) {
    Answer a;
    a.body = "<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>";
    return a;
  };
  auto s = NewS3Store(TestConfig(), "b", t);
  (void)s->GetSmall("a dir/x+y=z~.tfrecord", 10);
  ASSERT_TRUE(s->List("p/q r").ok());
  EXPECT_EQ(t->seen[0].request.url, "http://127.0.0.1:9/b/a%20dir/x%2By%3Dz~.tfrecord");
  EXPECT_EQ(t->seen[1].request.url, "http://127.0.0.1:9/b?list-type=2&prefix=p%2Fq%20r");
  // Without an endpoint: AWS, virtual-hosted style.
  StoreConfig aws = TestConfig();
  aws.endpoint.clear();
  aws.region = "us-west-2";
  (void)NewS3Store(aws, "bk", t)->GetSmall("k/x", 10);
  EXPECT_EQ(t->seen[2].request.url, "https://bk.s3.us-west-2.amazonaws.com/k/x");
}

TEST(StoreFakeTransportTest, ListFollowsContinuationTokens) {
  auto t = std::make_shared<FakeTransport>();
  t->script = [](const HttpRequest& q) {
    Answer a;
    if (q.url.find("continuation-token") == std::string::npos) {
      a.body =
          "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t/1=</NextContinuationToken>"
          "<Contents><Key>p/b</Key><Size>7</Size><ETag>&quot;e1&quot;</ETag></Contents></ListBucketResult>";
    } else {
      a.body =
          "<ListBucketResult><IsTruncated>false</IsTruncated>"
          "<Contents><Key>p/a</Key><Size>3</Size></Contents></ListBucketResult>";
    }
    return a;
  };
  StatusOr<std::vector<ObjectInfo>> l = NewS3Store(TestConfig(), "b", t)->List("p/");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[0].key, "p/a");
  EXPECT_EQ((*l)[1].key, "p/b");
  EXPECT_EQ((*l)[1].size, 7u);
  EXPECT_EQ((*l)[1].etag, "e1");
  EXPECT_EQ(t->seen[1].request.url, "http://127.0.0.1:9/b?continuation-token=t%2F1%3D&list-type=2&prefix=p%2F");
}

// A file of `size` bytes in a test folder.
std::string MakeFile(const std::string& dir, size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 131 + i / 7);
  const std::string path = dir + "/big.bin";
  testing::WriteFileOrDie(path, bytes);
  return path;
}

TEST(StoreFakeTransportTest, FailedMultipartUploadIsAbortedAndNotCompleted) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = MakeFile(dir, 10 << 10);
  auto t = std::make_shared<FakeTransport>();
  t->script = [](const HttpRequest& q) {
    Answer a;
    if (q.method == "POST" && q.url.find("?uploads=") != std::string::npos) {
      a.body = "<InitiateMultipartUploadResult><UploadId>UP1</UploadId></InitiateMultipartUploadResult>";
    } else if (q.method == "PUT" && q.url.find("partNumber=2&") != std::string::npos) {
      a.status = 403;
      a.body = "<Error><Code>AccessDenied</Code><Message>no</Message></Error>";
    } else if (q.method == "PUT") {
      a.headers["etag"] = "\"etag\"";
    }
    return a;
  };
  PutOptions o;
  o.multipart_threshold = 1024;
  o.part_size = 4096;
  o.parallel_parts = 1;
  Status s = NewS3Store(TestConfig(), "b", t)->PutFile("k/big.bin", path, o);
  ASSERT_EQ(s.code(), StatusCode::kPermissionDenied) << s;
  EXPECT_NE(s.message().find("PUT s3://b/k/big.bin"), std::string::npos) << s;
  EXPECT_NE(s.message().find("HTTP 403 AccessDenied"), std::string::npos) << s;
  bool aborted = false, completed = false;
  for (const auto& seen : t->seen) {
    if (seen.request.method == "DELETE") {
      aborted = true;
      EXPECT_EQ(seen.request.url, "http://127.0.0.1:9/b/k/big.bin?uploadId=UP1");
    }
    if (seen.request.method == "POST" && seen.request.url.find("uploadId=UP1") != std::string::npos) {
      completed = true;
    }
  }
  EXPECT_TRUE(aborted);
  EXPECT_FALSE(completed);
  EXPECT_EQ(t->seen[0].request.url, "http://127.0.0.1:9/b/k/big.bin?uploads=");
}

TEST(StoreFakeTransportTest, MultipartPartsCarryTheirOwnHashAndTheCompletionListsEtags) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = MakeFile(dir, 10 << 10);
  const std::string bytes = testing::ReadFileOrDie(path);
  auto t = std::make_shared<FakeTransport>();
  t->script = [](const HttpRequest& q) {
    Answer a;
    if (q.url.find("?uploads=") != std::string::npos) {
      a.body = "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>";
    } else if (q.method == "PUT") {
      const size_t at = q.url.find("partNumber=");
      a.headers["etag"] = "\"e" + q.url.substr(at + 11, 1) + "\"";
    }
    return a;
  };
  PutOptions o;
  o.multipart_threshold = 1024;
  o.part_size = 4096;
  o.parallel_parts = 3;
  Status s = NewS3Store(TestConfig(), "b", t)->PutFile("k", path, o);
  ASSERT_TRUE(s.ok()) << s;
  std::map<std::string, std::string> parts;
  std::string completion;
  for (const auto& seen : t->seen) {
    if (seen.request.method == "PUT") {
      parts[seen.request.url] = seen.body;
      EXPECT_NE(HeaderValue(seen.request, "x-amz-content-sha256"),
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
    if (seen.request.method == "POST" && seen.request.url.find("uploadId=U") != std::string::npos) {
      completion = seen.body;
    }
  }
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts["http://127.0.0.1:9/b/k?partNumber=1&uploadId=U"], bytes.substr(0, 4096));
  EXPECT_EQ(parts["http://127.0.0.1:9/b/k?partNumber=3&uploadId=U"], bytes.substr(8192));
  EXPECT_EQ(completion,
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag></Part>"
            "<Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            "<Part><PartNumber>3</PartNumber><ETag>&quot;e3&quot;</ETag></Part></CompleteMultipartUpload>");
}

TEST(StoreFakeTransportTest, WhatIsRetriedAndWhatIsNot) {
  struct Case {
    long status;
    std::string code;
    bool retried;
  };
  for (const Case& c : {Case{400, "InvalidRequest", false}, Case{403, "AccessDenied", false},
                        Case{404, "NoSuchKey", false}, Case{429, "TooManyRequests", true},
                        Case{500, "InternalError", true}, Case{503, "SlowDown", true}, Case{502, "BadGateway", true}}) {
    auto t = std::make_shared<FakeTransport>();
    t->script = [&](const HttpRequest&) {
      Answer a;
      a.status = c.status;
      a.body = "<Error><Code>" + c.code + "</Code><Message>m</Message></Error>";
      return a;
    };
    Status s = NewS3Store(TestConfig(), "b", t)->GetSmall("x", 10).status();
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(t->seen.size(), c.retried ? 4u : 1u) << c.status;
    EXPECT_NE(s.message().find("HTTP " + std::to_string(c.status) + " " + c.code), std::string::npos) << s;
    if (c.retried) {
      EXPECT_NE(s.message().find("after 4 attempts"), std::string::npos) << s;
    }
  }
  // A connection error is retried too; a certificate error is not.
  for (bool permanent : {false, true}) {
    auto t = std::make_shared<FakeTransport>();
    t->script = [](const HttpRequest&) {
      Answer a;
      a.transport_error = "Couldn't connect to server";
      return a;
    };
    if (permanent) {
      t->script = [](const HttpRequest&) {
        Answer a;
        a.transport_error = "SSL peer certificate or SSH remote key was not OK";
        return a;
      };
    }
    struct Wrap : HttpTransport {
      std::shared_ptr<FakeTransport> inner;
      bool permanent;
      Status Perform(const HttpRequest& q, HttpResponse* r) override {
        Status s = inner->Perform(q, r);
        r->permanent = permanent;
        return s;
      }
    };
    auto w = std::make_shared<Wrap>();
    w->inner = t;
    w->permanent = permanent;
    Status s = NewS3Store(TestConfig(), "b", w)->Head("x").status();
    EXPECT_EQ(s.code(), StatusCode::kIOError) << s;
    EXPECT_EQ(t->seen.size(), permanent ? 1u : 4u);
  }
}

TEST(StoreFakeTransportTest, CompletionAnsweredWith200AndAnErrorIsRetried) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = MakeFile(dir, 5000);
  auto t = std::make_shared<FakeTransport>();
  int completions = 0;
  t->script = [&](const HttpRequest& q) {
    Answer a;
    if (q.url.find("?uploads=") != std::string::npos) {
      a.body = "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>";
    } else if (q.method == "PUT") {
      a.headers["etag"] = "\"e\"";
    } else if (q.method == "POST" && ++completions == 1) {
      a.body = "<Error><Code>InternalError</Code><Message>try again</Message></Error>";
    }
    return a;
  };
  PutOptions o;
  o.multipart_threshold = 1024;
  o.part_size = 4096;
  ASSERT_TRUE(NewS3Store(TestConfig(), "b", t)->PutFile("k", path, o).ok());
  EXPECT_EQ(completions, 2);
}

TEST(StoreFakeTransportTest, CredentialsNeverAppearInMessages) {
  StoreConfig c = TestConfig();
  c.session_token = "SESSIONTOKENSECRET";
  auto t = std::make_shared<FakeTransport>();
  t->script = [](const HttpRequest& q) {
    Answer a;
    a.status = 403;
    // What s3rver and S3 send back: the key id and the string to sign.
    a.body =
        "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not "
        "match</Message><AWSAccessKeyId>AKIDEXAMPLE</AWSAccessKeyId><StringToSign>x</StringToSign></Error>";
    return a;
  };
  Status s = NewS3Store(c, "b", t)->GetSmall("k", 10).status();
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("HTTP 403 SignatureDoesNotMatch"), std::string::npos) << s;
  EXPECT_EQ(s.message().find(c.secret_access_key), std::string::npos) << s;
  EXPECT_EQ(s.message().find("SESSIONTOKENSECRET"), std::string::npos) << s;
  EXPECT_EQ(s.message().find("AKIDEXAMPLE"), std::string::npos) << s;
  EXPECT_EQ(c.Describe().find(c.secret_access_key), std::string::npos);
  EXPECT_EQ(c.Describe().find("SESSIONTOKENSECRET"), std::string::npos);
}

TEST(StoreFakeTransportTest, HttpsStoreIsReadOnly) {
  auto t = std::make_shared<FakeTransport>();
  auto s = NewWebServerStore("https://h:8443", RetryOptions(), t);
  EXPECT_EQ(s->Put("a", "x").code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s->List("a").status().code(), StatusCode::kUnimplemented);
  (void)s->GetSmall("d/a b", 10);
  ASSERT_EQ(t->seen.size(), 1u);
  EXPECT_EQ(t->seen[0].request.url, "https://h:8443/d/a%20b");
  EXPECT_TRUE(t->seen[0].request.aws_sigv4.empty());
}

// An object served in ranges ("Range: bytes=A-B" -> 206 with Content-Range),
// with faults chosen by the range's first byte.
struct RangedObject {
  std::string bytes;
  std::mutex mu;
  std::map<uint64_t, int> short_bodies;   // start -> answers cut to half, left
  std::map<uint64_t, int> slowdowns;      // start -> 503 SlowDown answers, left
  uint64_t corrupt_at = ~uint64_t{0};     // a byte flipped in every answer holding it
  uint64_t new_etag_from = ~uint64_t{0};  // answers from this byte on carry ETag "v2" (a rewritten object)
  std::vector<std::pair<uint64_t, uint64_t>> asked;

  Answer Serve(const HttpRequest& q) {
    Answer a;
    const std::string range = HeaderValue(q, "Range");
    uint64_t begin = 0, end = bytes.size() - 1;
    if (range != "<absent>") {
      unsigned long long b = 0, e = 0;
      if (std::sscanf(range.c_str(), "bytes=%llu-%llu", &b, &e) == 2) {
        begin = b;
        end = std::min<uint64_t>(e, bytes.size() - 1);
      } else if (std::sscanf(range.c_str(), "bytes=%llu-", &b) == 1) {
        begin = b;
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    asked.emplace_back(begin, end);
    if (begin >= bytes.size()) {
      a.status = 416;
      a.body = "<Error><Code>InvalidRange</Code></Error>";
      return a;
    }
    if (slowdowns[begin] > 0) {
      --slowdowns[begin];
      a.status = 503;
      a.body = "<Error><Code>SlowDown</Code></Error>";
      return a;
    }
    a.status = range == "<absent>" ? 200 : 206;
    a.body = bytes.substr(begin, end - begin + 1);
    if (corrupt_at >= begin && corrupt_at <= end) a.body[corrupt_at - begin] ^= 0x20;
    if (short_bodies[begin] > 0) {
      --short_bodies[begin];
      a.body.resize(a.body.size() / 2);
    }
    if (a.status == 206) {
      a.headers["content-range"] =
          "bytes " + std::to_string(begin) + "-" + std::to_string(end) + "/" + std::to_string(bytes.size());
    }
    a.headers["etag"] = begin >= new_etag_from ? "\"v2\"" : "\"v1\"";
    return a;
  }
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 2654435761u) >> 13);
  return s;
}

TEST(StoreFakeTransportTest, LargeObjectComesInParallelRangedPartsEachRetriedOnItsOwn) {
  auto obj = std::make_shared<RangedObject>();
  obj->bytes = Pattern(10000);
  obj->short_bodies[3000] = 1;  // the part at 3000 is cut, then resumed from 3500
  obj->slowdowns[6000] = 2;     // the part at 6000 is answered 503 twice
  auto t = std::make_shared<FakeTransport>();
  t->script = [obj](const HttpRequest& q) { return obj->Serve(q); };
  auto s = NewS3Store(TestConfig(), "bkt", t);
  std::string got(obj->bytes.size(), '\0');
  std::mutex mu;
  PartOptions parts;
  parts.part_size = 1000;
  parts.parallel = 3;
  Status st = s->GetVerifiedParts("ds/x.tfrecord", {obj->bytes.size(), crc32c::Value(obj->bytes.data(), 10000)}, parts,
                                  [&](uint64_t offset, std::string_view b) {
                                    std::lock_guard<std::mutex> lock(mu);
                                    got.replace(offset, b.size(), b);
                                    return Status::OK();
                                  });
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(got, obj->bytes);
  std::set<std::pair<uint64_t, uint64_t>> asked(obj->asked.begin(), obj->asked.end());
  for (uint64_t p = 0; p < 10; ++p) EXPECT_EQ(asked.count({p * 1000, p * 1000 + 999}), 1u) << p;
  EXPECT_EQ(asked.count({3500, 3999}), 1u);  // resumed where it was cut
  EXPECT_EQ(obj->asked.size(), 10u + 1 + 2);
  // Small objects and parallel = 1: one GET of the whole.
  obj->asked.clear();
  parts.parallel = 1;
  ASSERT_TRUE(s->GetVerifiedParts("ds/x.tfrecord", {10000, crc32c::Value(obj->bytes.data(), 10000)}, parts,
                                  [](uint64_t, std::string_view) { return Status::OK(); })
                  .ok());
  EXPECT_EQ(obj->asked.size(), 1u);
}

TEST(StoreFakeTransportTest, PartsOfAnObjectRewrittenMeanwhileAreDataLossNamingTheObject) {
  auto obj = std::make_shared<RangedObject>();
  obj->bytes = Pattern(4000);
  auto t = std::make_shared<FakeTransport>();
  t->script = [obj](const HttpRequest& q) { return obj->Serve(q); };
  auto s = NewS3Store(TestConfig(), "bkt", t);
  PartOptions parts;
  parts.part_size = 1000;
  parts.parallel = 2;
  const Expected whole{obj->bytes.size(), crc32c::Value(obj->bytes.data(), obj->bytes.size())};
  auto ignore = [](uint64_t, std::string_view) { return Status::OK(); };
  // The same bytes under another ETag from the third part on (a load
  // balancer's servers): the manifest's bytes, accepted.
  obj->new_etag_from = 2000;
  Status same = s->GetVerifiedParts("ds/x.tfrecord", whole, parts, ignore);
  EXPECT_TRUE(same.ok()) << same;
  // Other bytes under another ETag: another version, named by both ETags.
  obj->corrupt_at = 2500;
  Status st = s->GetVerifiedParts("ds/x.tfrecord", whole, parts, ignore);
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st;
  EXPECT_TRUE(testing::HasSubstr(std::string(st.message()), "GET s3://bkt/ds/x.tfrecord"));
  EXPECT_TRUE(testing::HasSubstr(std::string(st.message()),
                                 "the object changed while it was being downloaded (ETag v1, then v2)"));
}

TEST(StoreFakeTransportTest, ACorruptPartIsDataLossAndNothingIsCachedUnderTheName) {
  auto obj = std::make_shared<RangedObject>();
  obj->bytes = Pattern(10000);
  const uint32_t crc = crc32c::Value(obj->bytes.data(), obj->bytes.size());
  obj->corrupt_at = 7777;
  auto t = std::make_shared<FakeTransport>();
  t->script = [obj](const HttpRequest& q) { return obj->Serve(q); };
  auto s = NewS3Store(TestConfig(), "bkt", t);
  const std::string dir = testing::MakeTempDir();
  CacheOptions copt;
  copt.dir = dir + "/cache";
  copt.parts.part_size = 1000;
  copt.parts.parallel = 4;
  auto cache = ShardCache::Open(copt);
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto f = (*cache)->Fetch(*s, "ds/x.tfrecord", {10000, crc});
  ASSERT_EQ(f.status().code(), StatusCode::kDataLoss) << f.status();
  EXPECT_NE(f.status().message().find("s3://bkt/ds/x.tfrecord"), std::string::npos) << f.status();
  EXPECT_NE(f.status().message().find("checksum mismatch"), std::string::npos) << f.status();
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir + "/cache")) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file()) {
      EXPECT_TRUE(n.find(".libshard-lock") != std::string::npos) << e.path();  // only the lock
    }
  }
  // A server that says the object has another size: DataLoss too.
  obj->corrupt_at = ~uint64_t{0};
  auto g = (*cache)->Fetch(*s, "ds/x.tfrecord", {12000, crc});
  ASSERT_EQ(g.status().code(), StatusCode::kDataLoss) << g.status();
  EXPECT_NE(g.status().message().find("the object has 10000 bytes, the manifest 12000"), std::string::npos)
      << g.status();
  // Served right, it is cached whole.
  auto h = (*cache)->Fetch(*s, "ds/x.tfrecord", {10000, crc});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(testing::ReadFileOrDie((*h)->path()), obj->bytes);
}
}  // namespace
}  // namespace libshard::store
