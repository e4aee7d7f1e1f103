// Each `shard` subcommand lives in its own cmd_*.cc file and registers itself
// on the CLI11 app here. A subcommand's callback stores its exit code in
// *exit_code; main() returns it. Exit codes shared by all subcommands:
//   0 success, 1 failure (the subcommand's --help says what), 2 usage error or
//   unreadable argument (a named file that cannot be opened, a number out of
//   range: cli_checks.h).
#ifndef LIBSHARD_TOOLS_COMMANDS_H_
#define LIBSHARD_TOOLS_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace shard_tool {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

void RegisterInspect(CLI::App& app, int* exit_code);
void RegisterIndex(CLI::App& app, int* exit_code);
void RegisterVerify(CLI::App& app, int* exit_code);
void RegisterConvert(CLI::App& app, int* exit_code);
void RegisterMerge(CLI::App& app, int* exit_code);
void RegisterReport(CLI::App& app, int* exit_code);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_COMMANDS_H_
