// The main() both programs share (`shard`, `shard-bench`): parse, run the
// chosen subcommand, map the outcome to an exit code.
#ifndef LIBSHARD_TOOLS_CLI_MAIN_H_
#define LIBSHARD_TOOLS_CLI_MAIN_H_

#include <CLI/CLI.hpp>

#include <map>
#include <string>

namespace shard_tool {

// Parses argv with `app` (whose subcommand callbacks store their exit code in
// `exit_code`) and runs the chosen one. --help and --version print to stdout,
// exit 0; a usage error prints "NAME: message" and the subcommand's usage line
// to stderr, exit 2; running out of memory outside the library's own handling
// prints "NAME: out of memory", exit 1 (never std::terminate). Otherwise
// returns `exit_code` as the subcommand left it.
int ParseAndRun(CLI::App& app, int argc, char** argv, const int& exit_code);

// `app --help` in sections rather than a wall: each subcommand on one line
// with its entry of `short_help` (else its description's first sentence),
// under its group (CLI::App::group), then "Run `NAME SUBCOMMAND --help` for
// its options and exit codes." The subcommands' own --help is unchanged.
// Call after the subcommands are added.
void UseShortSubcommandHelp(CLI::App& app, std::map<std::string, std::string> short_help);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CLI_MAIN_H_
