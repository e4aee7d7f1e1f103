#include "libshard/io/contained_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "io/writable_fd.h"
#include "libshard/io/open_file.h"

namespace libshard::io {
namespace {

Status Refused(std::string_view what, std::string_view why) {
  return InvalidArgumentError(std::string(what) + ": " + std::string(why));
}

// Opens the folder that holds the last part of `name` (a checked name),
// walking from `root` without following a link; makes missing folders when
// `create`. `*leaf` is the last part.
StatusOr<ScopedFd> OpenParent(const std::string& root, std::string_view name, bool create, std::string* leaf) {
  ScopedFd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return ErrnoError("open " + root, errno);
  std::string walked = root;
  size_t start = 0;
  for (size_t slash; (slash = name.find('/', start)) != std::string_view::npos; start = slash + 1) {
    const std::string part(name.substr(start, slash - start));
    walked += "/" + part;
    if (create && ::mkdirat(dir.get(), part.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("mkdir " + walked, errno);
    }
    ScopedFd next(::openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      const int err = errno;
      if (err == ELOOP || err == ENOTDIR) return IOError(walked + ": a symbolic link or not a folder, not followed");
      return ErrnoError("open " + walked, err);
    }
    dir = std::move(next);
  }
  *leaf = std::string(name.substr(start));
  return dir;
}

}  // namespace

Status CheckRelativeName(std::string_view name, std::string_view what) {
  if (name.empty()) return Refused(what, "an empty name");
  if (name.front() == '/') return Refused(what, "an absolute name");
  for (const char c : name) {
    if (c == '\\') return Refused(what, "a backslash in the name");
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return Refused(what, "a control byte in the name");
  }
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string_view part =
        name.substr(start, slash == std::string_view::npos ? name.size() - start : slash - start);
    if (part.empty()) return Refused(what, "an empty part in the name");
    if (part == "." || part == "..") return Refused(what, "'.' or '..' in the name");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return Status::OK();
}

StatusOr<std::string> NameUnderPrefix(std::string_view key, std::string_view prefix, std::string_view what) {
  if (key.substr(0, prefix.size()) != prefix) {
    return Refused(what, "not under " + std::string(prefix.empty() ? "the bucket" : prefix));
  }
  const std::string_view rel = key.substr(prefix.size());
  LIBSHARD_RETURN_IF_ERROR(CheckRelativeName(rel, what));
  return std::string(rel);
}

StatusOr<std::string> PathUnder(const std::string& root, std::string_view name, std::string_view what) {
  LIBSHARD_RETURN_IF_ERROR(CheckRelativeName(name, what));
  return root + "/" + std::string(name);
}

StatusOr<int> OpenBeneath(const std::string& root, std::string_view name, int flags) {
  LIBSHARD_RETURN_IF_ERROR(CheckRelativeName(name, root + "/" + std::string(name)));
  std::string leaf;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd dir, OpenParent(root, name, /*create=*/false, &leaf));
  const int fd = ::openat(dir.get(), leaf.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string path = root + "/" + std::string(name);
    if (err == ELOOP) return IOError(path + ": a symbolic link, not followed");
    return ErrnoError("open " + path, err);
  }
  return fd;
}

StatusOr<std::unique_ptr<FileBeneath>> FileBeneath::Create(const std::string& root, std::string_view name) {
  const std::string path = root + "/" + std::string(name);
  LIBSHARD_RETURN_IF_ERROR(CheckRelativeName(name, path));
  auto f = std::unique_ptr<FileBeneath>(new FileBeneath());
  f->path_ = path;
  LIBSHARD_ASSIGN_OR_RETURN(ScopedFd dir, OpenParent(root, name, /*create=*/true, &f->leaf_));
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string temp =
        "." + f->leaf_ + ".libshard-partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    const int fd = ::openat(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return ErrnoError("create " + path, errno);
    f->temp_ = temp;
    f->file_ = WrapWritableFd(fd, path);
    f->dir_fd_ = dir.release();
    return f;
  }
  return IOError("create " + path + ": no free temporary name beside it");
}

FileBeneath::~FileBeneath() {
  if (file_ != nullptr && !committed_) {
    (void)file_->Close();
    ::unlinkat(dir_fd_, temp_.c_str(), 0);
  }
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

Status FileBeneath::Commit() {
  if (committed_) return FailedPreconditionError(path_ + ": already committed");
  LIBSHARD_RETURN_IF_ERROR(file_->Close());
  if (::renameat(dir_fd_, temp_.c_str(), dir_fd_, leaf_.c_str()) != 0) return ErrnoError("rename to " + path_, errno);
  committed_ = true;
  return Status::OK();
}

}  // namespace libshard::io
