// WritableFile: an append-only byte sink with explicit, status-returning
// Flush/Sync/Close. Writers (records, indices, manifests) write through it so
// write errors (a full disk) always surface as a Status and tests can write
// to memory.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto file, libshard::io::NewPosixWritableFile(path));
//   LIBSHARD_RETURN_IF_ERROR(file->Append(bytes));
//   LIBSHARD_RETURN_IF_ERROR(file->Close());  // never leave errors to the destructor
//
// Thread-safety: a WritableFile is not thread-safe; use one per thread.
#ifndef LIBSHARD_IO_WRITABLE_FILE_H_
#define LIBSHARD_IO_WRITABLE_FILE_H_

#include <memory>
#include <string>
#include <string_view>

#include "libshard/status.h"

namespace libshard::io {

class WritableFile {
 public:
  WritableFile() = default;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;
  // Closes the file if Close() was not called; any error is lost then.
  virtual ~WritableFile() = default;

  virtual Status Append(std::string_view data) = 0;
  // Hands buffered bytes to the operating system.
  virtual Status Flush() = 0;
  // Flush() and then makes the bytes durable (fsync).
  virtual Status Sync() = 0;
  // Flush() and release the file. Further calls fail.
  virtual Status Close() = 0;
  // The name used in error messages.
  virtual const std::string& name() const = 0;
};

// Creates (or truncates) `path` for writing, buffered. Errors name the path.
StatusOr<std::unique_ptr<WritableFile>> NewPosixWritableFile(const std::string& path);

// Appends to a caller-owned std::string, which must outlive the file.
std::unique_ptr<WritableFile> NewStringWritableFile(std::string* dest, std::string name = "<memory>");

// Durably renames `from` to `to` (replacing `to`) and syncs the parent
// directory, so a crash never leaves `to` half-written. With `sync` false the
// directory is not synced: still atomic for a process that is killed, not
// durable across a power loss.
Status RenameFile(const std::string& from, const std::string& to, bool sync = true);

// Writes `text` to `path` through `path.tmp`: written, fsynced, renamed over
// `path` (RenameFile), so a reader sees the old file or the new one, never a
// part. On an error the temporary is removed and `path` keeps what it held.
// With `sync` false, no fsync: atomic for a killed process, not durable across
// a power loss (`shard convert --no-sync`).
Status WriteFileAtomically(const std::string& path, std::string_view text, bool sync = true);

}  // namespace libshard::io

#endif  // LIBSHARD_IO_WRITABLE_FILE_H_
