// `shard convert --help` in sections: the options of the `convert`
// subcommand put in groups (input, masks and annotations, output, image,
// leak check, object storage, tasks, run), in that order.
#ifndef LIBSHARD_TOOLS_CONVERT_HELP_H_
#define LIBSHARD_TOOLS_CONVERT_HELP_H_

#include <CLI/CLI.hpp>

namespace shard_tool {

// Sets the group of each of `cmd`'s named options; call after adding them.
// An option the table does not name keeps CLI11's "Options" group (the
// shard_cli test ConvertHelpReadsInSections fails on one).
void GroupConvertOptions(CLI::App* cmd);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_CONVERT_HELP_H_
