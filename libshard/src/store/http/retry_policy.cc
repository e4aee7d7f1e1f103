#include "store/http/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>

namespace libshard::store {

bool RetryableHttp(long status, std::string_view code) {
  return status == 429 || status >= 500 || code == "SlowDown" || code == "RequestTimeout" || code == "InternalError";
}

bool CurlErrorPermanent(int curl_code, std::string_view detail) {
  if (detail.find("HTTP/0.9") != std::string_view::npos) return false;
  switch (static_cast<CURLcode>(curl_code)) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_NOT_BUILT_IN:
      return true;
    default:
      return false;
  }
}

StatusCode StatusCodeForHttp(long status) {
  if (status == 404) return StatusCode::kNotFound;
  if (status == 401 || status == 403) return StatusCode::kPermissionDenied;
  if (status == 416) return StatusCode::kOutOfRange;
  if (status >= 400 && status < 500) return StatusCode::kInvalidArgument;
  return StatusCode::kIOError;
}

const char* ReasonPhrase(long status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 301:
      return "MovedPermanently";
    case 302:
      return "Found";
    case 307:
      return "TemporaryRedirect";
    case 308:
      return "PermanentRedirect";
    case 412:
      return "PreconditionFailed";
    case 416:
      return "InvalidRange";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "";
  }
}

double BackoffDelay(const RetryOptions& retry, int attempt, double jitter_u) {
  double cap = retry.base_delay_s;
  for (int i = 1; i < attempt && cap < retry.max_delay_s; ++i) cap *= 2;
  cap = std::min(cap, retry.max_delay_s);
  jitter_u = std::clamp(jitter_u, 0.0, 1.0);
  return cap / 2 + jitter_u * cap / 2;
}

RetryDecision DecideRetry(const RetryOptions& retry, const TryOutcome& outcome, int attempt, double jitter_u) {
  if (attempt >= retry.max_attempts) return {};
  if (outcome.transport_failed ? outcome.permanent : !RetryableHttp(outcome.http_status, outcome.error_code)) {
    return {};
  }
  return {true, BackoffDelay(retry, attempt, jitter_u)};
}

}  // namespace libshard::store
