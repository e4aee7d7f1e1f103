// shard: the libshard command-line program. Each subcommand lives in its own
// cmd_*.cc file; see commands.h. The benchmarks are a separate program,
// shard-bench (bench/).
#include <iostream>
#include <new>

#include "commands.h"

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);  // help to stdout, exit 0
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // A message and the short usage on stderr, exit 2.
    std::cerr << "shard: " << e.what() << "\n";
    const CLI::App* sub = &app;
    for (const CLI::App* s : app.get_subcommands()) {
      sub = s;
      while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
    }
    std::string path;
    for (const CLI::App* a = sub; a != nullptr; a = a->get_parent()) {
      path = a->get_name() + (path.empty() ? "" : " " + path);
    }
    std::cerr << "usage: " << path << " [OPTIONS]"
              << (sub == &app ? " SUBCOMMAND" : "") << "\nRun with --help for more information.\n";
    return shard_tool::kExitUsage;
  } catch (const std::bad_alloc&) {
    // The library turns out-of-memory into errors where it can (a reject, a
    // fault); this is the last resort, never std::terminate.
    std::cerr << "shard: out of memory\n";
    return shard_tool::kExitFailure;
  }
  return exit_code;
}
