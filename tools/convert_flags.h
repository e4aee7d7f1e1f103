// The options of `shard convert`, in one home for the program
// (cmd_convert.cc) and for Python's libshard.convert (python/py_tools.cc):
// the flags, their checks and help text (CLI11), and the mapping from the
// parsed flags to convert::ConvertOptions. Both parse the same argument
// vector, so a keyword argument of libshard.convert means what the flag of
// the same name means and is refused with the same message.
//
//   CLI::App app{"shard"};
//   std::shared_ptr<ConvertFlags> f = AddConvertOptions(app);
//   app.parse(args);                                  // CLI::ParseError on a bad flag
//   Status s = BuildConvertOptions(*f);               // InvalidArgument: the CLI's message
//   const convert::ConvertOptions& o = ConvertOptionsOf(*f);
//   ... convert::Convert(o, progress), or for -o s3:// (remote::IsRemoteOutput(o.output))
//       remote::ConvertToObjectStore({o, StagingOf(*f), RecheckOf(*f)}, progress) ...
#ifndef LIBSHARD_TOOLS_CONVERT_FLAGS_H_
#define LIBSHARD_TOOLS_CONVERT_FLAGS_H_

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "libshard/convert/converter.h"
#include "libshard/status.h"

namespace shard_tool {

// The parsed flags (cmd_convert.cc); `o` is the ConvertOptions they build,
// `command` the `convert` subcommand they were registered on.
struct ConvertFlags;

// Adds the `convert` subcommand with every option of `shard convert` to
// `app`; the returned flags are filled in when `app` parses. No callback is
// set (RegisterConvert sets the program's).
std::shared_ptr<ConvertFlags> AddConvertOptions(CLI::App& app);

// After parsing: checks the flags and fills ConvertFlags::o (exposed via
// ConvertOptionsOf). InvalidArgument/NotFound carry the message
// `shard convert` prints (without its "shard convert: " prefix); a usage error.
libshard::Status BuildConvertOptions(ConvertFlags& flags);
const libshard::convert::ConvertOptions& ConvertOptionsOf(const ConvertFlags& flags);
// --staging: the local folder an s3:// output is converted into first ("" =
// the default, libshard/remote/remote_convert.h).
const std::string& StagingOf(const ConvertFlags& flags);
// --recheck: a rerun into s3:// reads the kept objects back.
bool RecheckOf(const ConvertFlags& flags);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CONVERT_FLAGS_H_
