// Private to io: a WritableFile over a descriptor someone else opened (with
// flags of its own: openat, O_NOFOLLOW, O_EXCL). Owns and closes `fd`.
#ifndef LIBSHARD_SRC_IO_WRITABLE_FD_H_
#define LIBSHARD_SRC_IO_WRITABLE_FD_H_

#include <memory>
#include <string>

#include "libshard/io/writable_file.h"

namespace libshard::io {

std::unique_ptr<WritableFile> WrapWritableFd(int fd, std::string name);

}  // namespace libshard::io

#endif  // LIBSHARD_SRC_IO_WRITABLE_FD_H_
