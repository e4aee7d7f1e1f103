#include "cli_main.h"

#include <iostream>
#include <new>
#include <string>

#include "commands.h"

namespace shard_tool {

int ParseAndRun(CLI::App& app, int argc, char** argv, const int& exit_code) {
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
    std::cerr << app.get_name() << ": " << e.what() << "\n";
    const CLI::App* sub = &app;
    for (const CLI::App* s : app.get_subcommands()) {
      sub = s;
      while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
    }
    std::string path;
    for (const CLI::App* a = sub; a != nullptr; a = a->get_parent()) {
      path = a->get_name() + (path.empty() ? "" : " " + path);
    }
    std::cerr << "usage: " << path << " [OPTIONS]" << (sub == &app ? " SUBCOMMAND" : "")
              << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    // The library turns out-of-memory into errors where it can (a reject, a
    // fault); this is the last resort.
    std::cerr << app.get_name() << ": out of memory\n";
    return kExitFailure;
  }
  return exit_code;
}

}  // namespace shard_tool
