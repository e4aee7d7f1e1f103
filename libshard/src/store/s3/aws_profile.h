// The AWS profile files (~/.aws/config, ~/.aws/credentials) as text: an INI
// dialect of [section] headers, "key = value" lines, comments starting with
// '#' or ';', and nested settings -- "s3 =" followed by indented
// "key = value" lines, kept as "s3.key". Bytes from outside: any text parses
// (lines that are none of these are skipped), nothing is unbounded but the
// text itself (fuzz_aws_profile).
//
// Thread-safety: pure.
#ifndef LIBSHARD_SRC_STORE_S3_AWS_PROFILE_H_
#define LIBSHARD_SRC_STORE_S3_AWS_PROFILE_H_

#include <map>
#include <string>
#include <string_view>

#include "libshard/status.h"

namespace libshard::store {

// Section name -> key -> value.
using AwsProfileFile = std::map<std::string, std::map<std::string, std::string>>;

// The sections of `text`.
AwsProfileFile ParseAwsProfile(std::string_view text);

// Reads and parses the file at `path` through the io module (a regular file
// only, at most 1 MiB: a FIFO or a device is refused, never waited on). A
// missing file is empty; another failure is InvalidArgument naming `what`
// ("config file") and the file.
StatusOr<AwsProfileFile> ReadAwsProfile(const std::string& path, const std::string& what);

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_S3_AWS_PROFILE_H_
