// ShardCache: see shard_cache.h for the guarantees. Locks are flock(2) on a
// lock file beside each cached object: exclusive while downloading or
// evicting it, shared while a CachedFile pins it.
#include "libshard/store/shard_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "libshard/io/contained_path.h"
#include "libshard/io/file_lock.h"
#include "libshard/io/writable_file.h"
#include "libshard/util/strings.h"

namespace libshard::store {
namespace {

namespace fs = std::filesystem;

constexpr char kLockSuffix[] = ".libshard-lock";
constexpr char kPartialMark[] = ".libshard-partial-";

using util::EndsWith;

// Removes NAME.libshard-partial-* beside `path`: what a killed download left.
void RemovePartials(const std::string& path) {
  const fs::path p(path);
  const std::string prefix = p.filename().string() + kPartialMark;
  std::error_code ec;
  for (auto it = fs::directory_iterator(p.parent_path(), ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (util::StartsWith(it->path().filename().string(), prefix)) fs::remove(it->path(), ec);
  }
}

// A partial file `path` (OBJECT.libshard-partial-PID-N) whose writer is gone:
// nobody holds OBJECT's lock (a download holds it exclusively throughout),
// or the writing process has exited (checked only when the lock is held by
// someone, as a pid may be reused).
bool StalePartial(const std::string& path, size_t mark) {
  StatusOr<std::optional<io::FileLock>> lock = io::FileLock::TryAcquire(
      path.substr(0, mark) + kLockSuffix, io::LockKind::kExclusive, io::FileLock::Create::kNo);
  if (!lock.ok() || lock->has_value()) return true;  // no lock file, or nobody holds it: no download under it
  const long pid = std::strtol(path.c_str() + mark + std::strlen(kPartialMark), nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::string Hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

}  // namespace

std::string DefaultCacheDir() {
  if (const char* d = std::getenv("LIBSHARD_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/libshard";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && *home != '\0' ? home : ".") + "/.cache/libshard";
}

CachedFile::~CachedFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // drops the shared lock
}

StatusOr<std::unique_ptr<ShardCache>> ShardCache::Open(const CacheOptions& options) {
  const std::string dir = options.dir.empty() ? DefaultCacheDir() : options.dir;
  // Each pinned file holds a descriptor (its lock): a dataset of thousands of
  // shards needs more than the usual soft limit of 1024. Raised once to the
  // hard limit, as Go's runtime and many servers do.
  static std::once_flag raise_once;
  std::call_once(raise_once, [] {
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      (void)::setrlimit(RLIMIT_NOFILE, &rl);
    }
  });
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || ::access(dir.c_str(), W_OK) != 0) {
    return InvalidArgumentError("cache folder " + dir + ": cannot create or write it" +
                                (ec ? ": " + ec.message() : std::string()));
  }
  return std::unique_ptr<ShardCache>(new ShardCache(dir, options.limit, options.parts));
}

StatusOr<std::string> ShardCache::PathFor(const ObjectStore& store, const std::string& key, uint32_t crc32c) const {
  // The one check of a remote name (io/contained_path.h), shared with the
  // staging of remote datasets.
  LIBSHARD_RETURN_IF_ERROR(io::CheckRelativeName(key, store.UrlOf(key)));
  const fs::path k(key);
  return (fs::path(dir_) / store.CacheName() / k.parent_path() / Hex8(crc32c) / k.filename()).string();
}

Status ShardCache::CheckFits(uint64_t bytes, const std::string& what) const {
  if (limit_ == 0 || bytes <= limit_) return Status::OK();
  return ResourceExhaustedError("cache " + dir_ + ": cache_limit " + std::to_string(limit_) + " bytes cannot hold " +
                                what + " (" + std::to_string(bytes) + " bytes), which must be resident at once");
}

StatusOr<std::unique_ptr<CachedFile>> ShardCache::Fetch(ObjectStore& store, const std::string& key,
                                                        const Expected& expected) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string path, PathFor(store, key, expected.crc32c));
  return Get(store, key, path, &expected, expected.size);
}

StatusOr<std::unique_ptr<CachedFile>> ShardCache::FetchUnverified(ObjectStore& store, const std::string& key,
                                                                  const std::string& local_path, uint64_t max_bytes) {
  const std::string root = fs::path(dir_).lexically_normal().string();
  const std::string p = fs::path(local_path).lexically_normal().string();
  if (!util::StartsWith(p, root + "/")) return InvalidArgumentError(local_path + ": not inside the cache folder " + dir_);
  return Get(store, key, p, nullptr, max_bytes);
}

StatusOr<std::unique_ptr<CachedFile>> ShardCache::Get(ObjectStore& store, const std::string& key,
                                                      const std::string& path, const Expected* expected,
                                                      uint64_t max_bytes) {
  const std::string url = store.UrlOf(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return IOError("cache " + path + ": " + ec.message());
  // Shared: waits for a download in progress elsewhere.
  LIBSHARD_ASSIGN_OR_RETURN(io::FileLock lock, io::FileLock::Acquire(path + kLockSuffix, io::LockKind::kShared));
  auto complete = [&] {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           (expected == nullptr || static_cast<uint64_t>(st.st_size) == expected->size);
  };
  auto pinned = [&]() -> std::unique_ptr<CachedFile> {
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // least recently used: by mtime
    return std::make_unique<CachedFile>(path, lock.ReleaseDescriptor());
  };
  // Exclusive for the download, never waited for: another reader that wins
  // the race downloads the file and keeps it pinned (its shared lock) for as
  // long as it reads it, so a wait for exclusive could last for ever. Tried
  // holding nothing (so that of two readers racing, one gets it), then after
  // a pause of random length shared again (which waits only for a download
  // in progress) and the file looked at: complete, it is pinned.
  std::minstd_rand jitter(static_cast<uint32_t>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  for (int attempt = 0;; ++attempt) {
    if (complete()) {
      ++reused_;
      return pinned();
    }
    LIBSHARD_ASSIGN_OR_RETURN(bool exclusive, lock.TryChange(io::LockKind::kExclusive));
    if (exclusive) break;
    const int most = 1 << std::min(attempt, 5);  // up to 32 ms
    std::this_thread::sleep_for(std::chrono::microseconds(500 + jitter() % (1000 * most)));
    LIBSHARD_RETURN_IF_ERROR(lock.Change(io::LockKind::kShared));
  }
  if (complete()) {  // someone else finished it meanwhile
    (void)lock.Change(io::LockKind::kShared);
    ++reused_;
    return pinned();
  }
  RemovePartials(path);
  auto fail = [&](Status s, const std::string& tmp) {
    std::error_code ignored;
    if (!tmp.empty()) fs::remove(tmp, ignored);
    return s;  // the lock goes with `lock`
  };
  // An object without a stated size (an .idx) is read into memory first, so
  // that room is made for its real size rather than for its bound.
  std::string small;
  uint64_t room = max_bytes;
  if (expected == nullptr) {
    StatusOr<std::string> bytes = store.GetSmall(key, max_bytes);
    if (!bytes.ok()) return fail(bytes.status(), "");
    small = std::move(*bytes);
    room = small.size();
  }
  if (Status s = MakeRoom(room, url); !s.ok()) return fail(s, "");
  // The room is reserved until the file is complete (and counted as a file)
  // or abandoned.
  struct Unreserve {
    ShardCache* cache;
    uint64_t bytes;
    ~Unreserve() {
      if (cache->limit_ == 0) return;
      std::lock_guard<std::mutex> lock(cache->room_mu_);
      cache->reserved_ -= bytes;
    }
  } unreserve{this, room};
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = path + kPartialMark + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  Status s;
  if (expected != nullptr) {
    // Parts may arrive in any order, from several threads: written where
    // they belong (pwrite).
    const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) return fail(ErrnoError(tmp, errno), "");
    s = store.GetVerifiedParts(key, *expected, parts_, [&](uint64_t offset, std::string_view bytes) -> Status {
      while (!bytes.empty()) {
        const ssize_t n = ::pwrite(out, bytes.data(), bytes.size(), static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return ErrnoError("write " + tmp, n < 0 ? errno : EIO);
        bytes.remove_prefix(static_cast<size_t>(n));
        offset += static_cast<uint64_t>(n);
      }
      return Status::OK();
    });
    if (::close(out) != 0 && s.ok()) s = ErrnoError("close " + tmp, errno);
  } else {
    StatusOr<std::unique_ptr<io::WritableFile>> out = io::NewPosixWritableFile(tmp);
    if (!out.ok()) return fail(out.status(), tmp);
    s = (*out)->Append(small);
    Status closed = (*out)->Close();
    if (s.ok()) s = closed;
  }
  if (s.ok()) s = io::RenameFile(tmp, path, /*sync=*/false);
  if (!s.ok()) return fail(s, tmp);
  ++downloads_;
  (void)lock.Change(io::LockKind::kShared);
  return pinned();
}

Status ShardCache::MakeRoom(uint64_t incoming, const std::string& url) {
  if (limit_ == 0) return Status::OK();
  // One thread at a time decides what fits, counting the downloads in
  // progress (reserved_), so that parallel downloads never overshoot the
  // limit together. (Other processes sharing the folder are not counted.)
  std::lock_guard<std::mutex> lock(room_mu_);
  struct Entry {
    std::string path;
    uint64_t size;
    fs::file_time_type mtime;
  };
  std::vector<Entry> entries;
  uint64_t used = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir_, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string p = it->path().string();
    if (!it->is_regular_file(ec) || EndsWith(p, kLockSuffix)) continue;
    if (const size_t mark = p.find(kPartialMark); mark != std::string::npos) {
      // A partial file: this process's own downloads are in reserved_; a
      // live writer's counts as used; a killed one's is removed.
      const std::string own = kPartialMark + std::to_string(::getpid()) + "-";
      if (p.compare(mark, own.size(), own) == 0) continue;
      const uint64_t size = it->file_size(ec);
      if (!StalePartial(p, mark)) {
        used += size;
      } else if (fs::remove(p, ec)) {
        ++evicted_;
      }
      continue;
    }
    Entry e{p, it->file_size(ec), it->last_write_time(ec)};
    used += e.size;
    entries.push_back(std::move(e));
  }
  used += reserved_;
  auto reserve = [&] {
    reserved_ += incoming;
    return Status::OK();
  };
  if (used + incoming <= limit_) return reserve();
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  uint64_t in_use = 0;
  for (const Entry& e : entries) {
    if (used + incoming <= limit_) break;
    StatusOr<std::optional<io::FileLock>> lock = io::FileLock::TryAcquire(e.path + kLockSuffix, io::LockKind::kExclusive);
    if (!lock.ok()) continue;
    if (lock->has_value()) {  // nobody pins it
      if (fs::remove(e.path, ec)) {
        used -= e.size;
        ++evicted_;
      }
    } else {
      in_use += e.size;
    }
  }
  if (used + incoming <= limit_) return reserve();
  return ResourceExhaustedError("cache " + dir_ + ": cache_limit " + std::to_string(limit_) + " bytes cannot hold " +
                                url + " (" + std::to_string(incoming) + " bytes) beside the " + std::to_string(in_use) +
                                " bytes of files in use");
}

}  // namespace libshard::store
