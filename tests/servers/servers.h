// Real servers for the object-storage tests, started on 127.0.0.1 on ports
// the system picks and stopped when the object goes away:
//   LocalS3     s3rver (tools/s3rver, npm @20minutes/s3rver 4.0.4), key pair
//               S3RVER/S3RVER, SigV4 signatures checked
//   FaultProxy  tests/servers/fault_proxy.py in front of a server: cut bodies,
//               503 SlowDown, stalls, dropped uploads; counts requests
//   LocalNginx  nginx (Debian's nginx-light) over https with a self-signed
//               certificate, serving a folder (range reads)
//   LyingS3     tests/servers/lying_s3.py: an S3 look-alike (objects in memory,
//               no signatures) that lies when told to: endless or huge LIST
//               pages, keys outside the prefix, drips, wrong Content-Length,
//               redirects, a new ETag per answer, 403s
//
// Each Start() returns null and says why in *why when the program is not
// installed; ServersMissing() turns that into a skip, or into a failure when
// LOCAL_S3_REQUIRED=1 (CI sets it: there the servers must run).
#ifndef LIBSHARD_TESTS_STORE_SERVERS_H_
#define LIBSHARD_TESTS_STORE_SERVERS_H_

#include <sys/types.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "libshard/store/store_config.h"

namespace libshard::testing {

// A child process whose stdin is a pipe from us (closing it asks the child
// to exit) and whose first stdout line is "PORT <n>".
class ChildServer {
 public:
  // Starts argv; waits up to 30 s for the PORT line. Null with *why on failure.
  static std::unique_ptr<ChildServer> Start(const std::vector<std::string>& argv, const std::string& log,
                                            std::string* why, bool expect_port_line = true);
  ~ChildServer();
  int port() const { return port_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0;
};

class LocalS3 {
 public:
  // s3rver storing under `dir`, with `buckets` created.
  static std::unique_ptr<LocalS3> Start(const std::string& dir, const std::vector<std::string>& buckets,
                                        std::string* why);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  int port() const { return server_->port(); }
  // A configuration for this server: path-style, S3RVER/S3RVER, quick retries.
  store::StoreConfig Config() const;

 private:
  std::unique_ptr<ChildServer> server_;
};

class FaultProxy {
 public:
  static std::unique_ptr<FaultProxy> Start(int upstream_port, const std::string& log_dir, std::string* why);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  // Queues a fault: mode cut|slowdown|error500|stall|drop, for `count`
  // requests of `method` whose path contains `match`.
  void Fault(const std::string& mode, const std::string& method, const std::string& match = "", int count = 1,
             double seconds = 0);
  // Adds an object named `key` (5 bytes, it says) to the next `count` LIST
  // answers whose path contains `match`: a bucket that lies about its names.
  void AddListedKey(const std::string& key, const std::string& match = "list-type=2", int count = 1);
  // Requests of `method` forwarded (or faulted) since the start or Reset().
  int Count(const std::string& method);
  void Reset();

 private:
  std::string Control(const std::string& method, const std::string& path, const std::string& body);
  std::unique_ptr<ChildServer> server_;
};

class LyingS3 {
 public:
  static std::unique_ptr<LyingS3> Start(const std::string& log_dir, std::string* why);
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }
  // A configuration for this server: path-style, anonymous, quick retries.
  store::StoreConfig Config() const;
  // Stores `bytes` as BUCKET/KEY (`path`, no leading '/').
  void Put(const std::string& path, const std::string& bytes);
  // Puts `count` objects `prefix`+`first` .. `prefix`+(`first`+`count`-1),
  // each holding `bytes` (JSON-safe text), in one request.
  void Fill(const std::string& prefix, int first, int count, const std::string& bytes);
  // Queues a lie (see lying_s3.py) for `count` requests of `method` whose
  // path contains `match`; `params`: more JSON members ("\"rate\": 2048").
  void Lie(const std::string& lie, const std::string& method, const std::string& match = "", int count = 1,
           const std::string& params = "");
  // Requests of `method` answered since the start or Reset().
  int Count(const std::string& method);
  void Reset();

 private:
  std::string Control(const std::string& method, const std::string& path, const std::string& body);
  std::unique_ptr<ChildServer> server_;
};

class LocalNginx {
 public:
  // https on 127.0.0.1 serving `root`; the certificate's CA file is ca_file().
  static std::unique_ptr<LocalNginx> Start(const std::string& root, const std::string& work_dir, std::string* why);
  ~LocalNginx();
  std::string base() const { return "https://127.0.0.1:" + std::to_string(port_); }
  const std::string& ca_file() const { return ca_file_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string ca_file_;
};

// True when the servers must run (LOCAL_S3_REQUIRED=1).
bool ServersRequired();

// A fixture with s3rver (bucket "bkt", stored under dir_/s3) and the fault
// proxy in front of it, in a fresh dir_. A subclass's SetUp() calls this one
// first and returns when it skipped or failed
// (IsSkipped() || HasFatalFailure()).
class S3ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // Puts every file of folder `local` under `prefix` in "bkt" (straight to
  // s3rver, not through the proxy, so the proxy's counts start at 0).
  void UploadFolder(const std::string& local, const std::string& prefix);
  // Points the library's configuration (AWS_ENDPOINT_URL and the keys) at
  // the proxy and zeroes its counts.
  void ReadThroughProxy();

  std::string dir_;
  std::unique_ptr<LocalS3> s3_;
  std::unique_ptr<FaultProxy> proxy_;
};

}  // namespace libshard::testing

// In a test body: skip (or fail, under LOCAL_S3_REQUIRED=1) when `ptr` is null.
#define LIBSHARD_REQUIRE_SERVER(ptr, why)                                                   \
  do {                                                                                      \
    if (!(ptr)) {                                                                           \
      if (::libshard::testing::ServersRequired()) FAIL() << "LOCAL_S3_REQUIRED: " << (why); \
      GTEST_SKIP() << (why);                                                                \
    }                                                                                       \
  } while (0)

#endif  // LIBSHARD_TESTS_STORE_SERVERS_H_
