// `shard bench`: the benchmark programs. Each prints a table of figures and
// their ratio against a baseline measured in the same run.
#include "commands.h"

namespace shard_tool {

void RegisterBench(CLI::App& app, int* exit_code) {
  CLI::App* bench = app.add_subcommand(
      "bench", "Benchmarks: each prints a table of rates and ratios against a baseline measured in the same run");
  bench->require_subcommand(1, 1);
  RegisterBenchCrc(*bench, exit_code);
  RegisterBenchRead(*bench, exit_code);
  RegisterBenchCodec(*bench, exit_code);
  RegisterBenchConvert(*bench, exit_code);
  RegisterBenchVerify(*bench, exit_code);
}

}  // namespace shard_tool
