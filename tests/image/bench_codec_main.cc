// Stand-alone runner for `shard bench codec` until the shard program wires
// it: `image_bench_codec bench codec [--images DIR] [--iterations N]`.
// Exit codes as the shard program's: 0 ok, 1 failure, 2 usage error.
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"image codec benchmark"};
  int exit_code = shard_tool::kExitOk;
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  shard_tool::RegisterBenchCodec(*bench, &exit_code);
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? shard_tool::kExitOk : shard_tool::kExitUsage;
  }
  return exit_code;
}
