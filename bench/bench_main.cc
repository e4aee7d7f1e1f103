// shard-bench: the benchmark programs (bench.h). Exit codes as `shard`'s:
// 0 success, 1 failure, 2 usage error.
#include <iostream>
#include <new>

#include "bench.h"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "shard-bench: " << e.what() << "\nRun with --help for more information.\n";
    return shard_tool::kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "shard-bench: out of memory\n";
    return shard_tool::kExitFailure;
  }
  return exit_code;
}
