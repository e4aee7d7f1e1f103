#include "servers/servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "libshard/store/http_transport.h"
#include "libshard/store/s3_store.h"
#include "testutil.h"

extern char** environ;

namespace libshard::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadIfExists(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool OnPath(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

void WaitOrKill(pid_t pid, int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

int FreePort() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const int port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

bool Accepts(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  ::close(s);
  return ok;
}

// One request to a test server's control API (or a plain PUT); its body.
std::string ControlRequest(const std::string& endpoint, const std::string& method, const std::string& path,
                           const std::string& body) {
  static std::shared_ptr<store::HttpTransport> t = store::NewCurlTransport(store::StoreConfig());
  store::HttpRequest q;
  q.method = method;
  q.url = endpoint + path;
  q.body = body;
  store::HttpResponse r;
  Status s = t->Perform(q, &r);
  if (!s.ok() || r.status != 200) {
    ADD_FAILURE() << "test server " << path << ": " << s << " " << r.status << " " << r.transport_error;
  }
  return r.body;
}

// The count of `method` in a /__stats__ answer ({"GET": 3, ...}).
int CountIn(const std::string& stats, const std::string& method) {
  const std::string key = "\"" + method + "\": ";
  const size_t at = stats.find(key);
  return at == std::string::npos ? 0 : std::atoi(stats.c_str() + at + key.size());
}

}  // namespace

bool ServersRequired() {
  const char* v = std::getenv("LOCAL_S3_REQUIRED");
  return v != nullptr && std::string(v) == "1";
}

std::unique_ptr<ChildServer> ChildServer::Start(const std::vector<std::string>& argv, const std::string& log,
                                                std::string* why, bool expect_port_line) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    *why = "pipe failed";
    return nullptr;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto child = std::make_unique<ChildServer>();
  const int rc = ::posix_spawnp(&child->pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  child->stdin_fd_ = in[1];
  if (rc != 0) {
    ::close(out[0]);
    child->pid_ = -1;
    *why = argv[0] + ": cannot start: " + std::strerror(rc);
    return nullptr;
  }
  if (!expect_port_line) {
    ::close(out[0]);
    return child;
  }
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    const ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  if (line.rfind("PORT ", 0) != 0) {
    *why = argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " did not start (see " + log + "): " + ReadIfExists(log);
    return nullptr;  // the destructor stops it
  }
  child->port_ = std::atoi(line.c_str() + 5);
  return child;
}

ChildServer::~ChildServer() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (pid_ > 0) WaitOrKill(pid_, 10);
}

std::unique_ptr<LocalS3> LocalS3::Start(const std::string& dir, const std::vector<std::string>& buckets,
                                        std::string* why) {
  const std::string tool = SourceDir() + "/tools/s3rver";
  if (!OnPath("node") || !fs::exists(tool + "/node_modules/@20minutes/s3rver")) {
    *why = "s3rver is not installed (node and " + tool + "/node_modules; tools/setup.sh --s3 installs them)";
    return nullptr;
  }
  fs::create_directories(dir);
  std::vector<std::string> argv{"node", tool + "/serve.js", dir};
  argv.insert(argv.end(), buckets.begin(), buckets.end());
  auto s = std::make_unique<LocalS3>();
  s->server_ = ChildServer::Start(argv, dir + "/../s3rver.log", why);
  if (!s->server_) return nullptr;
  return s;
}

store::StoreConfig LocalS3::Config() const {
  store::StoreConfig c;
  c.endpoint = endpoint();
  c.access_key_id = "S3RVER";
  c.secret_access_key = "S3RVER";
  c.retry.base_delay_s = 0.01;
  c.retry.max_delay_s = 0.1;
  c.retry.connect_timeout_s = 2;
  c.retry.low_speed_time_s = 2;
  return c;
}

std::unique_ptr<FaultProxy> FaultProxy::Start(int upstream_port, const std::string& log_dir, std::string* why) {
  auto p = std::make_unique<FaultProxy>();
  p->server_ =
      ChildServer::Start({TestPython(), SourceDir() + "/tests/servers/fault_proxy.py", std::to_string(upstream_port)},
                         log_dir + "/fault_proxy.log", why);
  if (!p->server_) return nullptr;
  return p;
}

std::string FaultProxy::Control(const std::string& method, const std::string& path, const std::string& body) {
  return ControlRequest(endpoint(), method, path, body);
}

void FaultProxy::Fault(const std::string& mode, const std::string& method, const std::string& match, int count,
                       double seconds) {
  Control("POST", "/__fault__",
          "{\"mode\": \"" + mode + "\", \"method\": \"" + method + "\", \"match\": \"" + match +
              "\", \"count\": " + std::to_string(count) + ", \"seconds\": " + std::to_string(seconds) + "}");
}

void FaultProxy::AddListedKey(const std::string& key, const std::string& match, int count) {
  std::string quoted;
  for (char c : key) quoted += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  Control("POST", "/__fault__",
          "{\"mode\": \"addkey\", \"method\": \"GET\", \"match\": \"" + match +
              "\", \"count\": " + std::to_string(count) + ", \"key\": \"" + quoted + "\"}");
}

int FaultProxy::Count(const std::string& method) { return CountIn(Control("GET", "/__stats__", ""), method); }

void FaultProxy::Reset() { Control("POST", "/__reset__", ""); }

std::unique_ptr<LyingS3> LyingS3::Start(const std::string& log_dir, std::string* why) {
  auto p = std::make_unique<LyingS3>();
  p->server_ =
      ChildServer::Start({TestPython(), SourceDir() + "/tests/servers/lying_s3.py"}, log_dir + "/lying_s3.log", why);
  if (!p->server_) return nullptr;
  return p;
}

store::StoreConfig LyingS3::Config() const {
  store::StoreConfig c;
  c.endpoint = endpoint();
  c.retry.base_delay_s = 0.01;
  c.retry.max_delay_s = 0.05;
  c.retry.max_attempts = 3;
  c.retry.connect_timeout_s = 2;
  c.retry.low_speed_time_s = 2;
  return c;
}

std::string LyingS3::Control(const std::string& method, const std::string& path, const std::string& body) {
  return ControlRequest(endpoint(), method, path, body);
}

void LyingS3::Put(const std::string& path, const std::string& bytes) { Control("PUT", "/" + path, bytes); }

void LyingS3::Fill(const std::string& prefix, int first, int count, const std::string& bytes) {
  Control("POST", "/__fill__",
          "{\"prefix\": \"" + prefix + "\", \"first\": " + std::to_string(first) +
              ", \"count\": " + std::to_string(count) + ", \"body\": \"" + bytes + "\"}");
}

void LyingS3::Lie(const std::string& lie, const std::string& method, const std::string& match, int count,
                  const std::string& params) {
  Control("POST", "/__lie__",
          "{\"lie\": \"" + lie + "\", \"method\": \"" + method + "\", \"match\": \"" + match +
              "\", \"count\": " + std::to_string(count) + (params.empty() ? "" : ", " + params) + "}");
}

int LyingS3::Count(const std::string& method) { return CountIn(Control("GET", "/__stats__", ""), method); }

void LyingS3::Reset() { Control("POST", "/__reset__", ""); }

std::unique_ptr<LocalNginx> LocalNginx::Start(const std::string& root, const std::string& work_dir, std::string* why) {
  if (!fs::exists("/usr/sbin/nginx") && !OnPath("nginx")) {
    *why = "nginx is not installed (Debian's nginx-light; tools/setup.sh --s3 installs it)";
    return nullptr;
  }
  const std::string w = work_dir + "/nginx";
  fs::create_directories(w + "/tmp");
  auto n = std::make_unique<LocalNginx>();
  n->ca_file_ = w + "/cert.pem";
  const std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -keyout " + w + "/key.pem -out " + w +
                          "/cert.pem -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >" + w +
                          "/openssl.log 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    *why = "openssl could not make a certificate: " + ReadIfExists(w + "/openssl.log");
    return nullptr;
  }
  n->port_ = FreePort();
  std::ofstream conf(w + "/nginx.conf");
  conf << "daemon off;\nmaster_process off;\nworker_processes 1;\npid " << w << "/nginx.pid;\n"
       << "error_log " << w << "/error.log;\nevents { worker_connections 64; }\n"
       << "http {\n  access_log off;\n  client_body_temp_path " << w << "/tmp;\n"
       << "  server {\n    listen 127.0.0.1:" << n->port_ << " ssl;\n"
       << "    ssl_certificate " << w << "/cert.pem;\n    ssl_certificate_key " << w << "/key.pem;\n"
       << "    root " << root << ";\n  }\n}\n";
  conf.close();
  const char* nginx = fs::exists("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";
  std::vector<std::string> argv{nginx, "-p", w, "-e", w + "/error.log", "-c", w + "/nginx.conf"};
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, (w + "/stdout.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, (w + "/stderr.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int rc = ::posix_spawnp(&n->pid_, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    n->pid_ = -1;
    *why = std::string("nginx: cannot start: ") + std::strerror(rc);
    return nullptr;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!Accepts(n->port_)) {
    if (::waitpid(n->pid_, nullptr, WNOHANG) == n->pid_ || std::chrono::steady_clock::now() > deadline) {
      n->pid_ = -1;
      *why = "nginx did not start: " + ReadIfExists(w + "/stderr.log") + ReadIfExists(w + "/error.log");
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return n;
}

LocalNginx::~LocalNginx() {
  if (pid_ > 0) {
    ::kill(pid_, SIGQUIT);
    WaitOrKill(pid_, 10);
  }
}

void S3ProxyTest::SetUp() {
  dir_ = MakeTempDir();
  std::string why;
  s3_ = LocalS3::Start(dir_ + "/s3", {"bkt"}, &why);
  LIBSHARD_REQUIRE_SERVER(s3_, why);
  proxy_ = FaultProxy::Start(s3_->port(), dir_, &why);
  ASSERT_TRUE(proxy_) << why;
}

void S3ProxyTest::UploadFolder(const std::string& local, const std::string& prefix) {
  const store::StoreConfig c = s3_->Config();
  std::unique_ptr<store::ObjectStore> s = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
  for (const auto& e : fs::directory_iterator(local)) {
    if (!e.is_regular_file()) continue;
    Status st = s->PutFile(store::JoinKey(prefix, e.path().filename().string()), e.path().string());
    ASSERT_TRUE(st.ok()) << st;
  }
}

void S3ProxyTest::ReadThroughProxy() {
  ::setenv("AWS_ENDPOINT_URL", proxy_->endpoint().c_str(), 1);
  ::setenv("AWS_ACCESS_KEY_ID", "S3RVER", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "S3RVER", 1);
  proxy_->Reset();
}

}  // namespace libshard::testing
