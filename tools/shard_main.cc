// shard: the libshard command-line program.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"shard: image folders to TFRecord shards, and back"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
