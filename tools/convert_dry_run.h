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

#include <cstdint>
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

// The annotation counts of a conversion with boxes, as the dry run and the
// summary print them: "3 image(s) matched an annotation, 1 without, 0 named
// but missing; 12 boxes".
std::string AnnotationCountsText(uint64_t matched, uint64_t unannotated, uint64_t missing, uint64_t boxes);

// Runs convert::DryRun(o) and prints its report (JSON with `json`; every
// file with `verbose`). Returns the exit code: as the conversion's, 3 when
// annotations were given and no image matched one.
int RunDryRun(const libshard::convert::ConvertOptions& o, bool json, bool verbose);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CONVERT_DRY_RUN_H_
