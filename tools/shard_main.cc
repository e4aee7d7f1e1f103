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
  for (CLI::App* sub : app.get_subcommands({})) {
    const std::string& n = sub->get_name();
    sub->group(n == "convert" || n == "merge" ? "Write shards" : "Check and look");
  }
  shard_tool::UseShortSubcommandHelp(
      app, {{"convert", "image folder or CSV -> TFRecord shards, .idx, manifest.json, rejects.tsv (local or s3://)"},
            {"merge", "put the outputs of convert --num-tasks N together into one manifest.json"},
            {"verify", "check shards, indexes and a manifest (also s3:// and https://); exit 1 names the damage"},
            {"inspect", "summarise one TFRecord file: records, feature keys, the first records"},
            {"index", "write DALI .idx files (FILE.idx) for TFRecord files, or --check them"},
            {"report", "write report.html about a converted set: classes, statistics, thumbnails, rejects"}});
  // Ctrl-C or SIGTERM during a remote verify, report, inspect or merge
  // leaves no staging folder behind.
  const shard_tool::StagingCleanup cleanup("shard");
  return shard_tool::ParseAndRun(app, argc, argv, exit_code);
}
