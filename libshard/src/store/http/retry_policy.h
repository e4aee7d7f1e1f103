// The retry DECISION, apart from the wait: whether another try may cure a
// failed one and how long to wait before it. Pure functions of the answer,
// the attempt number and a jitter draw, so that every rule is unit-tested
// without a server or a clock (store_retry_policy_test). The wait itself is
// RetryWaiter (retry_wait.h); the loops that ask and wait are
// HttpObjectStore::Call and GetResumable, each bounded by
// RetryOptions::max_attempts.
//
// Thread-safety: pure.
#ifndef LIBSHARD_SRC_STORE_HTTP_RETRY_POLICY_H_
#define LIBSHARD_SRC_STORE_HTTP_RETRY_POLICY_H_

#include <string>
#include <string_view>

#include "libshard/status.h"
#include "libshard/store/store_config.h"

namespace libshard::store {

// One failed try, as the decision sees it.
struct TryOutcome {
  // The HTTP status (0 when no answer came).
  long http_status = 0;
  // The server's error code (S3: "SlowDown", "NoSuchKey"; else the reason
  // phrase of the status, ReasonPhrase()).
  std::string error_code;
  // The exchange failed below HTTP (HttpResponse::transport_error).
  bool transport_failed = false;
  // With transport_failed: no retry can cure it (HttpResponse::permanent).
  bool permanent = false;
};

struct RetryDecision {
  bool retry = false;
  // Seconds to wait before the next try (0 when !retry).
  double delay_s = 0;
};

// 429, any 5xx, and the S3 codes SlowDown, RequestTimeout, InternalError:
// another try may cure them. Never 400/403/404.
bool RetryableHttp(long status, std::string_view error_code);

// A libcurl failure (CURLcode) that no retry cures: an unsupported protocol,
// a malformed URL, a certificate that does not verify or cannot be read, a
// feature not built in. `detail` is libcurl's error buffer: "Received HTTP/0.9
// when not allowed" (bytes of an earlier answer on a reused connection) is
// cured by a fresh connection, so it is never permanent.
bool CurlErrorPermanent(int curl_code, std::string_view detail);

// The Status code of a final HTTP error: NotFound (404), PermissionDenied
// (401, 403), OutOfRange (416), InvalidArgument (other 4xx), IOError (the rest).
StatusCode StatusCodeForHttp(long status);

// "NotFound", "SlowDown"-style words for the statuses a store meets ("" for
// others): the error code when the server gives none.
const char* ReasonPhrase(long status);

// The wait before the try after `attempt` (1 = after the first try):
// "equal jitter" -- half the cap plus `jitter_u` (a draw in [0, 1)) times the
// other half, the cap being base_delay_s doubled per attempt, at most
// max_delay_s.
double BackoffDelay(const RetryOptions& retry, int attempt, double jitter_u);

// Whether to try again after try number `attempt` failed as `outcome`, and
// how long to wait first: no retry once max_attempts tries are spent, for a
// permanent transport failure, or for an HTTP answer RetryableHttp() refuses.
RetryDecision DecideRetry(const RetryOptions& retry, const TryOutcome& outcome, int attempt, double jitter_u);

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_HTTP_RETRY_POLICY_H_
