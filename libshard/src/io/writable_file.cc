#include "libshard/io/writable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/writable_fd.h"

namespace libshard::io {
namespace {

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string name, int fd) : name_(std::move(name)), fd_(fd) { buf_.reserve(kBufferSize); }
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().IgnoreError();
  }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return FailedPreconditionError(name_ + ": append after close");
    if (!error_.ok()) return error_;
    if (buf_.size() + data.size() <= kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    LIBSHARD_RETURN_IF_ERROR(Flush());
    if (data.size() >= kBufferSize) return WriteAll(data);
    buf_.append(data);
    return Status::OK();
  }

  Status Flush() override {
    if (fd_ < 0) return FailedPreconditionError(name_ + ": flush after close");
    if (!error_.ok()) return error_;
    Status s = WriteAll(buf_);
    buf_.clear();
    return s;
  }

  Status Sync() override {
    LIBSHARD_RETURN_IF_ERROR(Flush());
    if (::fsync(fd_) != 0) return ErrnoError("fsync " + name_, errno);
    return Status::OK();
  }

  Status Close() override {
    if (fd_ < 0) return FailedPreconditionError(name_ + ": already closed");
    Status s = Flush();
    if (::close(fd_) != 0 && s.ok()) s = ErrnoError("close " + name_, errno);
    fd_ = -1;
    return s;
  }

  const std::string& name() const override { return name_; }

 private:
  static constexpr size_t kBufferSize = 1 << 20;

  Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        // Sticky: bytes may be lost or partly written, so every later
        // Append/Flush/Close reports this error instead of leaving a gap.
        error_ = ErrnoError("write " + name_, errno);
        return error_;
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::OK();
  }

  std::string name_;
  int fd_;
  std::string buf_;
  Status error_;  // the first write error
};

class StringWritableFile final : public WritableFile {
 public:
  StringWritableFile(std::string* dest, std::string name) : dest_(dest), name_(std::move(name)) {}
  Status Append(std::string_view data) override {
    if (closed_) return FailedPreconditionError(name_ + ": append after close");
    dest_->append(data);
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override {
    if (closed_) return FailedPreconditionError(name_ + ": already closed");
    closed_ = true;
    return Status::OK();
  }
  const std::string& name() const override { return name_; }

 private:
  std::string* dest_;
  std::string name_;
  bool closed_ = false;
};

std::string ParentDir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

StatusOr<std::unique_ptr<WritableFile>> NewPosixWritableFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open " + path, errno);
  return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
}

std::unique_ptr<WritableFile> WrapWritableFd(int fd, std::string name) {
  return std::unique_ptr<WritableFile>(new PosixWritableFile(std::move(name), fd));
}

std::unique_ptr<WritableFile> NewStringWritableFile(std::string* dest, std::string name) {
  return std::make_unique<StringWritableFile>(dest, std::move(name));
}

Status RenameFile(const std::string& from, const std::string& to, bool sync) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoError("rename " + from + " to " + to, errno);
  }
  if (!sync) return Status::OK();
  std::string dir = ParentDir(to);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open directory " + dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("fsync directory " + dir, err);
  return Status::OK();
}

Status WriteFileAtomically(const std::string& path, std::string_view text, bool sync) {
  const std::string tmp = path + ".tmp";
  Status st = [&]() -> Status {
    LIBSHARD_ASSIGN_OR_RETURN(auto f, NewPosixWritableFile(tmp));
    LIBSHARD_RETURN_IF_ERROR(f->Append(text));
    if (sync) LIBSHARD_RETURN_IF_ERROR(f->Sync());
    LIBSHARD_RETURN_IF_ERROR(f->Close());
    return RenameFile(tmp, path, sync);
  }();
  // A full disk must not leave the temporary behind.
  if (!st.ok()) ::unlink(tmp.c_str());
  return st;
}

}  // namespace libshard::io
