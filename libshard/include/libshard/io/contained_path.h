// Names from outside become local paths only here. An object key, a LIST
// answer's key, a manifest's `file` / `index_file`: each is untrusted text,
// and a `..` part, an absolute part or a symbolic link planted on the way
// would put the bytes somewhere else. The one check (CheckRelativeName) is
// shared by the verified cache (store/shard_cache.h), the staging of remote
// datasets (remote/staging.h) and the uploader; FileBeneath writes such a
// name under a folder without following any link below it.
//
//   LIBSHARD_ASSIGN_OR_RETURN(std::string rel, io::NameUnderPrefix(key, "ds/", url));
//   LIBSHARD_ASSIGN_OR_RETURN(auto f, io::FileBeneath::Create(root, rel));
//   LIBSHARD_RETURN_IF_ERROR(f->file().Append(bytes));
//   LIBSHARD_RETURN_IF_ERROR(f->Commit());   // renamed from its temporary name
//
// Errors are InvalidArgument "WHAT: REASON" (WHAT: the caller's name for the
// text, a URL) for a name refused, and name the folder and the part for a
// file-system error. Thread-safety: all functions are thread-safe; a
// FileBeneath is used by one thread at a time.
#ifndef LIBSHARD_IO_CONTAINED_PATH_H_
#define LIBSHARD_IO_CONTAINED_PATH_H_

#include <memory>
#include <string>
#include <string_view>

#include "libshard/io/writable_file.h"
#include "libshard/status.h"

namespace libshard::io {

// OK when `name` is a relative path of plain parts joined by single '/':
// not empty, no empty, "." or ".." part, no leading or trailing '/', no
// backslash, no NUL or other control byte. `what` names it in the error.
Status CheckRelativeName(std::string_view name, std::string_view what);

// `key` less `prefix`, checked by CheckRelativeName; InvalidArgument when
// `key` does not start with `prefix` ("WHAT: not under PREFIX").
StatusOr<std::string> NameUnderPrefix(std::string_view key, std::string_view prefix, std::string_view what);

// `root` + "/" + `name`, once `name` is checked (the path is text: a link
// inside `root` is refused only by FileBeneath and OpenBeneath).
StatusOr<std::string> PathUnder(const std::string& root, std::string_view name, std::string_view what);

// Opens `root`/`name` (a checked name) for reading without following a
// symbolic link below `root`: folders with O_NOFOLLOW | O_DIRECTORY, one
// after the other from `root`'s descriptor, the file with O_NOFOLLOW.
StatusOr<int> OpenBeneath(const std::string& root, std::string_view name, int flags);

// A new file `root`/`name` written under a temporary name in the same folder
// (".NAME.libshard-partial-N", created exclusively) and given its name by
// Commit(); missing folders are made. No symbolic link below `root` is
// followed, neither a folder nor the file (a link at NAME is replaced by
// Commit, never written through). Destroyed without Commit(), the temporary
// is removed: an interrupted or refused download leaves no file named NAME.
class FileBeneath {
 public:
  static StatusOr<std::unique_ptr<FileBeneath>> Create(const std::string& root, std::string_view name);
  ~FileBeneath();
  FileBeneath(const FileBeneath&) = delete;
  FileBeneath& operator=(const FileBeneath&) = delete;
  // The bytes go here; valid until Commit() or destruction.
  WritableFile& file() { return *file_; }
  // Closes the file and renames it to its name (replacing what was there).
  // Errors name `root`/`name`.
  Status Commit();
  // `root`/`name`, for messages and for the caller's later reads.
  const std::string& path() const { return path_; }

 private:
  FileBeneath() = default;
  int dir_fd_ = -1;
  std::string leaf_, temp_, path_;
  std::unique_ptr<WritableFile> file_;
  bool committed_ = false;
};

}  // namespace libshard::io

#endif  // LIBSHARD_IO_CONTAINED_PATH_H_
