// shard-bench: the benchmark programs, one source file per subcommand
// (bench_*.cc). Each prints a table of rates and their ratio against a
// baseline measured in the same run. Built only with LIBSHARD_BUILD_BENCH;
// the installed `shard` program holds no benchmark code.
#ifndef LIBSHARD_BENCH_BENCH_H_
#define LIBSHARD_BENCH_BENCH_H_

#include <CLI/CLI.hpp>

#include "commands.h"  // the exit codes shared with `shard`

namespace shard_tool {

void RegisterBenchCrc(CLI::App& bench, int* exit_code);
void RegisterBenchRead(CLI::App& bench, int* exit_code);
void RegisterBenchVerify(CLI::App& bench, int* exit_code);
void RegisterBenchCodec(CLI::App& bench, int* exit_code);
void RegisterBenchConvert(CLI::App& bench, int* exit_code);
void RegisterBenchS3(CLI::App& bench, int* exit_code);

}  // namespace shard_tool

#endif  // LIBSHARD_BENCH_BENCH_H_
