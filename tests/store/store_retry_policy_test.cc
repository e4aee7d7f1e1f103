// The retry decision (store/http/retry_policy.h): which failures another try
// may cure, and how long the wait before it is -- without a server or a clock.
#include "store/http/retry_policy.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

namespace libshard::store {
namespace {

RetryOptions Options() {
  RetryOptions r;
  r.max_attempts = 4;
  r.base_delay_s = 0.2;
  r.max_delay_s = 1.0;
  return r;
}

TryOutcome Http(long status, std::string code = "") {
  TryOutcome o;
  o.http_status = status;
  o.error_code = code.empty() ? ReasonPhrase(status) : code;
  return o;
}

TryOutcome Transport(bool permanent) {
  TryOutcome o;
  o.transport_failed = true;
  o.permanent = permanent;
  return o;
}

TEST(StoreRetryPolicyTest, ServerErrorsAndThrottlingAreRetried) {
  for (long status : {429L, 500L, 502L, 503L, 504L}) {
    EXPECT_TRUE(DecideRetry(Options(), Http(status), 1, 0.5).retry) << status;
  }
  // S3 codes that name a passing condition, whatever the status says.
  for (const char* code : {"SlowDown", "RequestTimeout", "InternalError"}) {
    EXPECT_TRUE(DecideRetry(Options(), Http(400, code), 1, 0.5).retry) << code;
  }
}

TEST(StoreRetryPolicyTest, ClientErrorsAreFinal) {
  for (long status : {301L, 400L, 401L, 403L, 404L, 412L, 416L}) {
    EXPECT_FALSE(DecideRetry(Options(), Http(status), 1, 0.5).retry) << status;
  }
  EXPECT_FALSE(DecideRetry(Options(), Http(403, "SignatureDoesNotMatch"), 1, 0.5).retry);
}

TEST(StoreRetryPolicyTest, TransportFailuresAreRetriedUnlessPermanent) {
  EXPECT_TRUE(DecideRetry(Options(), Transport(false), 1, 0.5).retry);
  EXPECT_FALSE(DecideRetry(Options(), Transport(true), 1, 0.5).retry);
}

TEST(StoreRetryPolicyTest, AttemptsAreBounded) {
  EXPECT_TRUE(DecideRetry(Options(), Http(503), 3, 0.5).retry);
  EXPECT_FALSE(DecideRetry(Options(), Http(503), 4, 0.5).retry);
  EXPECT_FALSE(DecideRetry(Options(), Http(503), 100, 0.5).retry);
  RetryOptions once = Options();
  once.max_attempts = 1;
  EXPECT_FALSE(DecideRetry(once, Transport(false), 1, 0.5).retry);
}

TEST(StoreRetryPolicyTest, EqualJitterDoublingUpToTheCap) {
  const RetryOptions r = Options();
  // Attempt 1: cap 0.2, wait in [0.1, 0.2].
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 1, 0.0), 0.1);
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 1, 1.0), 0.2);
  // Attempt 2: cap 0.4; attempt 3: cap 0.8; attempt 4 and later: max_delay_s.
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 2, 0.5), 0.3);
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 3, 0.0), 0.4);
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 4, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 60, 1.0), 1.0);
  // A draw outside [0, 1] never leaves the bounds.
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 60, 7.0), 1.0);
  EXPECT_DOUBLE_EQ(BackoffDelay(r, 1, -3.0), 0.1);
  const RetryDecision d = DecideRetry(r, Http(503), 2, 0.5);
  EXPECT_DOUBLE_EQ(d.delay_s, 0.3);
  EXPECT_DOUBLE_EQ(DecideRetry(r, Http(404), 1, 0.5).delay_s, 0.0);
}

TEST(StoreRetryPolicyTest, CurlCodes) {
  EXPECT_FALSE(CurlErrorPermanent(CURLE_COULDNT_CONNECT, ""));
  EXPECT_FALSE(CurlErrorPermanent(CURLE_OPERATION_TIMEDOUT, ""));
  EXPECT_FALSE(CurlErrorPermanent(CURLE_PARTIAL_FILE, ""));
  EXPECT_FALSE(CurlErrorPermanent(CURLE_RECV_ERROR, ""));
  EXPECT_TRUE(CurlErrorPermanent(CURLE_PEER_FAILED_VERIFICATION, ""));
  EXPECT_TRUE(CurlErrorPermanent(CURLE_URL_MALFORMAT, ""));
  EXPECT_TRUE(CurlErrorPermanent(CURLE_UNSUPPORTED_PROTOCOL, ""));
  // A reused connection holding an earlier answer's bytes: a fresh one cures it.
  EXPECT_FALSE(CurlErrorPermanent(CURLE_UNSUPPORTED_PROTOCOL, "Received HTTP/0.9 when not allowed"));
}

TEST(StoreRetryPolicyTest, StatusCodesOfFinalAnswers) {
  EXPECT_EQ(StatusCodeForHttp(404), StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeForHttp(401), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeForHttp(403), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusCodeForHttp(416), StatusCode::kOutOfRange);
  EXPECT_EQ(StatusCodeForHttp(400), StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForHttp(503), StatusCode::kIOError);
  EXPECT_EQ(StatusCodeForHttp(301), StatusCode::kIOError);
  EXPECT_STREQ(ReasonPhrase(404), "NotFound");
  EXPECT_STREQ(ReasonPhrase(299), "");
}

}  // namespace
}  // namespace libshard::store
