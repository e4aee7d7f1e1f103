// shard: the libshard command-line program. Each subcommand lives in its own
// cmd_*.cc file; see commands.h. The benchmarks are a separate program,
// shard-bench (bench/).
#include "cli_main.h"
#include "commands.h"
#include "progress.h"

int main(int argc, char** argv) {
  CLI::App app{
      "shard: turn image folders into TFRecord shards and read them back at disk speed.\n"
      "Exit codes: 0 success, 1 failure (see each subcommand's --help), 2 usage error or unreadable argument."};
  app.name("shard");
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", "shard " LIBSHARD_VERSION);
  int exit_code = shard_tool::kExitOk;
  shard_tool::RegisterConvert(app, &exit_code);
  shard_tool::RegisterMerge(app, &exit_code);
  shard_tool::RegisterInspect(app, &exit_code);
  shard_tool::RegisterIndex(app, &exit_code);
  shard_tool::RegisterVerify(app, &exit_code);
  shard_tool::RegisterReport(app, &exit_code);
  // Ctrl-C or SIGTERM during a remote verify, report, inspect or merge
  // leaves no staging folder behind.
  const shard_tool::StagingCleanup cleanup("shard");
  return shard_tool::ParseAndRun(app, argc, argv, exit_code);
}
