// StoreConfig: how every remote store is reached -- an S3-compatible
// bucket's credentials, region and endpoint, and for s3:// and https:// alike
// the CA bundle and the transport's retries, stall limits and deadlines
// (RetryOptions). Configured the way every S3 tool is:
//
//   AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN   credentials
//   AWS_REGION, AWS_DEFAULT_REGION                                 region (default us-east-1)
//   AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL                          endpoint; path-style addressing
//                                                                  (MinIO, Ceph, R2, GCS XML API)
//   AWS_PROFILE (AWS_DEFAULT_PROFILE)                              profile in the files below
//   AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials)               [NAME] aws_access_key_id, ...
//   AWS_CONFIG_FILE (~/.aws/config)                                [profile NAME] region, endpoint_url,
//                                                                  ca_bundle (and "s3 =" sub-settings)
//   AWS_CA_BUNDLE                                                  CA certificates for https
//   AWS_MAX_ATTEMPTS                                               tries per request (default 6)
//   LIBSHARD_DEADLINE_BASE_S, LIBSHARD_DEADLINE_MIN_RATE           a try's deadline: BASE_S seconds
//                                                                  + its bytes at MIN_RATE B/s
//                                                                  (default 60 s + 65536 B/s; rate 0: none)
//
// Environment variables win over the files. Without an access key the
// requests are anonymous (unsigned): public buckets. Without an endpoint the
// bucket is addressed virtual-hosted style on AWS
// (https://BUCKET.s3.REGION.amazonaws.com/KEY).
//
// The secret and the session token are never printed: Describe() and every
// error message leave them out.
#ifndef LIBSHARD_STORE_STORE_CONFIG_H_
#define LIBSHARD_STORE_STORE_CONFIG_H_

#include <string>

#include "libshard/status.h"

namespace libshard::store {

// How a request is retried: exponential backoff with jitter on connection
// errors, timeouts, stalled transfers, short bodies, 5xx, 429 and SlowDown;
// never on 400/403/404.
struct RetryOptions {
  // Tries per request, the first included (1 = no retry). Default: 6.
  int max_attempts = 6;
  // The first retry waits between half of this and this; each next one
  // doubles it, up to max_delay_s. Default: 0.2 s.
  double base_delay_s = 0.2;
  // The longest wait between two tries. Default: 10 s.
  double max_delay_s = 10;
  // Connecting (TCP + TLS) gives up after this. Default: 10 s.
  double connect_timeout_s = 10;
  // A transfer slower than low_speed_bytes per second for low_speed_time_s
  // seconds is a stall: cut and retried. Default: 1024 B/s for 20 s.
  long low_speed_bytes = 1024;
  long low_speed_time_s = 20;
  // The overall deadline of one try: deadline_base_s plus its bytes (the
  // Content-Length, or the bytes so far when the server gives none) at
  // deadline_min_rate bytes per second. A try past it is cut and not
  // retried: IOError naming the URL and the deadline. 0 rate: no deadline.
  // A server that sends just above the stall limit ends there, not days
  // later. Environment: LIBSHARD_DEADLINE_BASE_S, LIBSHARD_DEADLINE_MIN_RATE.
  // Default: 60 s + 64 KiB/s.
  double deadline_base_s = 60;
  double deadline_min_rate = 64 << 10;
};

// S3's settings (region, endpoint, credentials, LIST bounds) and the
// transport's (ca_bundle, retry), for s3:// and https:// stores.
struct StoreConfig {
  // Signing region. Default: us-east-1.
  std::string region = "us-east-1";
  // "http://127.0.0.1:9000" or "https://host": path-style requests to it.
  // Empty: AWS, virtual-hosted style. Default: "".
  std::string endpoint;
  // Empty access key: anonymous requests. Default: "".
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  // A CA bundle file for https (empty: the system's). Default: "".
  std::string ca_bundle;
  RetryOptions retry;
  // One List() keeps at most this many keys and reads at most this many
  // pages (ResourceExhausted naming the bound beyond: a server that never
  // ends its listing). A continuation token that comes back is DataLoss.
  // Default: 10,000,000 keys, 100,000 pages.
  uint64_t list_max_keys = 10'000'000;
  uint64_t list_max_pages = 100'000;

  // The configuration from the environment and the profile files (see the
  // file comment). InvalidArgument naming the variable or file for a named
  // profile that does not exist, an unreadable file, a bad endpoint, an
  // access key without a secret, or a bad AWS_MAX_ATTEMPTS.
  static StatusOr<StoreConfig> FromEnvironment();

  // "endpoint http://127.0.0.1:9000, region us-east-1, access key S3R...
  // (profile default)" style text without the secret or token.
  std::string Describe() const;
};

// OK for "http://HOST[:PORT]" or "https://HOST[:PORT]" (the form of
// StoreConfig::endpoint); InvalidArgument naming `source` (the variable or file
// it came from) otherwise. User-info ("http://user:secret@host") is refused
// and the message leaves it out: credentials go in the credential settings,
// never in a URL that messages and cache folder names carry.
Status CheckEndpoint(const std::string& endpoint, const std::string& source);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_STORE_CONFIG_H_
