// The local file system behind the ObjectStore interface: keys are paths
// (below a root). Reads use pread; writes go to a temporary name and are
// renamed, so a reader never sees half an object.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "libshard/crc32c.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/store/local_store.h"
#include "libshard/util/strings.h"

namespace libshard::store {
namespace {

namespace fs = std::filesystem;

class LocalStore : public ObjectStore {
 public:
  explicit LocalStore(std::string root) : root_(std::move(root)) {}

  std::string UrlOf(const std::string& key) const override { return root_.empty() ? key : JoinKey(root_, key); }
  std::string CacheName() const override { return "local"; }

  StatusOr<ObjectInfo> Head(const std::string& key) override {
    io::FileIdentity id;
    LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(UrlOf(key), &id));
    ObjectInfo info;
    info.key = key;
    info.size = id.size;
    return info;
  }

  StatusOr<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    const std::string path = UrlOf(key);
    io::FileIdentity id;
    LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(path, &id));
    if (length == 0) return std::string();
    if (offset >= id.size) {
      return OutOfRangeError(path + ": offset " + std::to_string(offset) + " is past the end (" +
                             std::to_string(id.size) + " bytes)");
    }
    std::string out(static_cast<size_t>(std::min<uint64_t>(length, id.size - offset)), '\0');
    const int64_t got = io::PreadFull(fd.get(), out.data(), out.size(), offset);
    if (got < 0) return ErrnoError(path, static_cast<int>(-got));
    out.resize(static_cast<size_t>(got));
    return out;
  }

  StatusOr<std::string> GetSmall(const std::string& key, uint64_t max_bytes) override {
    const std::string path = UrlOf(key);
    io::FileIdentity id;
    LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(path, &id));
    if (id.size > max_bytes) {
      return ResourceExhaustedError(path + ": " + std::to_string(id.size) + " bytes, more than the " +
                                    std::to_string(max_bytes) + " allowed");
    }
    std::string out(static_cast<size_t>(id.size), '\0');
    const int64_t got = io::PreadFull(fd.get(), out.data(), out.size(), 0);
    if (got < 0) return ErrnoError(path, static_cast<int>(-got));
    out.resize(static_cast<size_t>(got));
    return out;
  }

  Status GetVerified(const std::string& key, const Expected& expected, const ByteSink& sink) override {
    const std::string path = UrlOf(key);
    LIBSHARD_ASSIGN_OR_RETURN(io::ScopedFd fd, io::OpenForRead(path));
    std::string buf(1 << 20, '\0');
    uint64_t done = 0;
    uint32_t crc = 0;
    for (;;) {
      const int64_t got = io::PreadFull(fd.get(), buf.data(), buf.size(), done);
      if (got < 0) return ErrnoError(path, static_cast<int>(-got));
      if (got == 0) break;
      if (done + static_cast<uint64_t>(got) > expected.size) {
        return DataLossError(path + ": the file is larger than the " + std::to_string(expected.size) +
                             " bytes the manifest gives it");
      }
      crc = crc32c::Extend(crc, buf.data(), static_cast<size_t>(got));
      done += static_cast<uint64_t>(got);
      LIBSHARD_RETURN_IF_ERROR(sink(std::string_view(buf.data(), static_cast<size_t>(got))));
    }
    if (done != expected.size) {
      return DataLossError(path + ": the file has " + std::to_string(done) + " bytes, the manifest " +
                           std::to_string(expected.size));
    }
    if (crc != expected.crc32c) {
      char text[80];
      std::snprintf(text, sizeof(text), "crc32c:%08x, the manifest crc32c:%08x", crc, expected.crc32c);
      return DataLossError(path + ": checksum mismatch: the file has " + text);
    }
    return Status::OK();
  }

  Status Put(const std::string& key, std::string_view bytes) override {
    const std::string path = UrlOf(key), tmp = path + ".tmp-put";
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    LIBSHARD_ASSIGN_OR_RETURN(auto file, io::NewPosixWritableFile(tmp));
    Status s = file->Append(bytes);
    if (s.ok()) s = file->Close();
    if (s.ok()) s = io::RenameFile(tmp, path);
    if (!s.ok()) fs::remove(tmp, ec);
    return s;
  }

  Status PutFile(const std::string& key, const std::string& source, const PutOptions&) override {
    const std::string path = UrlOf(key), tmp = path + ".tmp-put";
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    fs::copy_file(source, tmp, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      fs::remove(tmp, ec);
      return IOError("copying " + source + " to " + tmp + ": " + ec.message());
    }
    Status s = io::RenameFile(tmp, path);
    if (!s.ok()) fs::remove(tmp, ec);
    return s;
  }

  StatusOr<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    // The folder the prefix is in, then the entries that start with it.
    const std::string full = UrlOf(prefix);
    const fs::path dir = full.empty() || full.back() == '/' ? fs::path(full) : fs::path(full).parent_path();
    std::vector<ObjectInfo> out;
    std::error_code ec;
    if (!fs::is_directory(dir.empty() ? "." : dir, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(dir.empty() ? "." : dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string p = it->path().string();
      if (dir.empty() && util::StartsWith(p, "./")) p = p.substr(2);
      if (!util::StartsWith(p, full)) continue;
      ObjectInfo info;
      info.key = root_.empty() ? p : p.substr(std::min(p.size(), root_.size() + 1));
      info.size = it->file_size(ec);
      out.push_back(std::move(info));
    }
    if (ec) return IOError("listing " + dir.string() + ": " + ec.message());
    std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

 private:
  const std::string root_;
};

}  // namespace

std::unique_ptr<ObjectStore> NewLocalStore(const std::string& root) { return std::make_unique<LocalStore>(root); }

}  // namespace libshard::store
