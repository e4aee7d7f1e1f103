// `shard convert --dry-run`: what a conversion would do (the listing, the
// plan, what the records will hold), printed or as --json, nothing written;
// and the exit code convert gives a failed conversion. Shared by the program's
// convert command (cmd_convert.cc).
//
//   if (flags.dry_run) return RunDryRun(options, json, verbose);
//
// Thread-safety: writes to stdout and stderr.
#ifndef LIBSHARD_TOOLS_CONVERT_DRY_RUN_H_
#define LIBSHARD_TOOLS_CONVERT_DRY_RUN_H_

#include <string>

#include "libshard/convert/converter.h"
#include "libshard/status.h"

namespace shard_tool {

// The exit code for a failed conversion: kExitUsage for kInvalidArgument or
// kNotFound (a bad option or an unreadable input, returned before anything
// is written), else kExitFailure.
int ExitCodeFor(const libshard::Status& s);

// What the records will hold, e.g. "jpeg quality 90, 3 channels (rgb)".
std::string OutputDescription(const libshard::convert::ConvertOptions& o);

// Runs convert::DryRun(o) and prints its report (JSON with `json`; every
// file with `verbose`). Returns the exit code.
int RunDryRun(const libshard::convert::ConvertOptions& o, bool json, bool verbose);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CONVERT_DRY_RUN_H_
