// Each `shard` subcommand lives in its own cmd_*.cc file and registers itself
// on the CLI11 app here. A subcommand's callback stores its exit code in
// *exit_code; main() returns it. Exit codes shared by all subcommands:
//   0 success, 1 failure (the subcommand's --help says what), 2 usage error or
//   unreadable argument (a named file that cannot be opened, a number out of
//   range: cli_checks.h).
#ifndef LIBSHARD_TOOLS_COMMANDS_H_
#define LIBSHARD_TOOLS_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <iostream>

#include "libshard/status.h"

namespace shard_tool {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
// shard convert: some inputs were rejected, or the annotations matched no image.
constexpr int kExitRejected = 3;

// The exit code of a failed staging of an s3:// / https:// location
// (remote/staging.h): 1 for a run-time failure here or at the server (a full
// $TMPDIR, a damaged or lying answer, a server error), 2 for what the
// argument names (a bad URL, nothing there, no access).
inline int StagingExitCode(const libshard::Status& s) {
  const libshard::StatusCode c = s.code();
  return c == libshard::StatusCode::kIOError || c == libshard::StatusCode::kResourceExhausted ||
                 c == libshard::StatusCode::kDataLoss
             ? kExitFailure
             : kExitUsage;
}

// inspect and verify write their report to `out` and their messages to `err`.
void RegisterInspect(CLI::App& app, int* exit_code, std::ostream& out = std::cout, std::ostream& err = std::cerr);
void RegisterIndex(CLI::App& app, int* exit_code);
void RegisterVerify(CLI::App& app, int* exit_code, std::ostream& out = std::cout, std::ostream& err = std::cerr);
void RegisterConvert(CLI::App& app, int* exit_code);
void RegisterMerge(CLI::App& app, int* exit_code);
void RegisterReport(CLI::App& app, int* exit_code, std::ostream& err = std::cerr);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_COMMANDS_H_
