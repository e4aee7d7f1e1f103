// The CLI11 face of `shard convert`'s flags: the options registered from the
// library's table (libshard/remote/convert_flags.h: names, help, --help
// sections, defaults, checks), which Python's libshard.convert sets without
// CLI11 (python/py_tools.cc); so a keyword argument of libshard.convert means
// what the flag of the same name means and is refused with the same message.
//
//   CLI::App app{"shard"};
//   std::shared_ptr<ConvertFlags> f = AddConvertOptions(app);
//   app.parse(args);                        // CLI::ParseError: a value the table's check refuses
//   Status s = BuildConvertOptions(*f);     // InvalidArgument: the message after "shard convert: "
//   ... f->values.request: convert::Convert(request.convert, progress), or for -o s3://
//       remote::ConvertToObjectStore(request, progress) ...
#ifndef LIBSHARD_TOOLS_CONVERT_FLAGS_H_
#define LIBSHARD_TOOLS_CONVERT_FLAGS_H_

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "libshard/remote/convert_flags.h"
#include "libshard/status.h"

namespace shard_tool {

struct ConvertFlags {
  // What the flags set; values.request once BuildConvertOptions succeeded.
  libshard::remote::ConvertFlagValues values;
  CLI::App* command = nullptr;  // the `convert` subcommand the options are on
  // What CLI11 parsed into, one slot per table entry (sized once: CLI11
  // holds pointers into it).
  struct Slot {
    const libshard::remote::ConvertFlag* flag = nullptr;
    CLI::Option* option = nullptr;
    std::string text;                // a value or the positional
    std::vector<std::string> texts;  // a repeated option's values
    bool on = false;                 // a switch
  };
  std::vector<Slot> slots;
};

// Adds the `convert` subcommand with every option of the table to `app`; the
// returned flags are filled in when `app` parses. No callback is set
// (RegisterConvert sets the program's).
std::shared_ptr<ConvertFlags> AddConvertOptions(CLI::App& app);

// After parsing: sets the parsed flags on `flags.values` and checks them
// together (remote::FinishConvertFlags). InvalidArgument/NotFound carry the
// message `shard convert` prints (without its "shard convert: " prefix); a
// usage error.
libshard::Status BuildConvertOptions(ConvertFlags& flags);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CONVERT_FLAGS_H_
