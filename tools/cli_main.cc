#include "cli_main.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"
#include "libshard/util/strings.h"

namespace shard_tool {

namespace {

// " (did you mean --resize-mode?)" for an argument that starts a long option
// of `sub` without being one (`--resize center-crop`); "" otherwise.
std::string DidYouMean(const CLI::App& sub, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    arg = arg.substr(0, arg.find('='));
    if (arg.size() < 4 || !libshard::util::StartsWith(arg, "--")) continue;
    std::vector<std::string> names;
    bool known = false;
    for (const CLI::Option* o : sub.get_options()) {
      for (const std::string& l : o->get_lnames()) {
        known = known || "--" + l == arg;
        if (libshard::util::StartsWith("--" + l, arg)) names.push_back("--" + l);
      }
    }
    if (known || names.empty()) continue;
    std::string list;
    for (size_t k = 0; k < names.size(); ++k) list += (k == 0 ? "" : k + 1 == names.size() ? " or " : ", ") + names[k];
    return " (" + arg + ": did you mean " + list + "?)";
  }
  return "";
}

// The top-level help: one line per subcommand.
class ShortSubcommandFormatter : public CLI::Formatter {
 public:
  explicit ShortSubcommandFormatter(std::map<std::string, std::string> short_help)
      : short_help_(std::move(short_help)) {}
  std::string make_subcommand(const CLI::App* sub) const override {
    std::string text = sub->get_description();
    if (auto it = short_help_.find(sub->get_name()); it != short_help_.end()) {
      text = it->second;
    } else if (const size_t end = text.find_first_of(".\n"); end != std::string::npos) {
      text = text.substr(0, end + (text[end] == '.' ? 1 : 0));
    }
    std::string name = "  " + sub->get_name();
    name.resize(std::max<size_t>(name.size() + 1, 12), ' ');
    return name + text + "\n";
  }
  std::string make_footer(const CLI::App* app) const override {
    return "Run `" + app->get_name() + " SUBCOMMAND --help` for its options and exit codes.\n";
  }

 private:
  std::map<std::string, std::string> short_help_;
};

}  // namespace

void UseShortSubcommandHelp(CLI::App& app, std::map<std::string, std::string> short_help) {
  app.formatter(std::make_shared<ShortSubcommandFormatter>(std::move(short_help)));
}

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
    const CLI::App* sub = &app;
    for (const CLI::App* s : app.get_subcommands()) {
      sub = s;
      while (!sub->get_subcommands().empty()) sub = sub->get_subcommands().front();
    }
    std::cerr << app.get_name() << ": " << e.what() << DidYouMean(*sub, argc, argv) << "\n";
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
