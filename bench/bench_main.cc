// shard-bench: the benchmark programs (bench.h). Exit codes as `shard`'s:
// 0 success, 1 failure, 2 usage error.
#include "bench.h"
#include "cli_main.h"

int main(int argc, char** argv) {
  CLI::App app{
      "shard-bench: libshard's benchmarks. Each prints a table of rates and ratios against a baseline measured in "
      "the same run."};
  app.name("shard-bench");
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", "shard-bench " LIBSHARD_VERSION);
  int exit_code = shard_tool::kExitOk;
  shard_tool::RegisterBenchCrc(app, &exit_code);
  shard_tool::RegisterBenchRead(app, &exit_code);
  shard_tool::RegisterBenchCodec(app, &exit_code);
  shard_tool::RegisterBenchConvert(app, &exit_code);
  shard_tool::RegisterBenchVerify(app, &exit_code);
  shard_tool::RegisterBenchS3(app, &exit_code);
  return shard_tool::ParseAndRun(app, argc, argv, exit_code);
}
