// `shard merge OUT`: puts the outputs of `shard convert --num-tasks N` back
// together (libshard/convert/merge.h): checks every task and shard, then
// writes OUT/manifest.json and OUT/rejects.tsv.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "libshard/convert/merge.h"

namespace shard_tool {
namespace {

struct MergeFlags {
  std::string dir;
  bool quiet = false;
};

int Run(const MergeFlags& f) {
  if (f.dir.find("://") != std::string::npos) {
    std::fprintf(stderr, "shard merge: %s: merging in object storage is not supported; merge the local task "
                         "outputs and upload the folder\n", f.dir.c_str());
    return kExitUsage;
  }
  libshard::StatusOr<libshard::convert::MergeResult> r = libshard::convert::MergeTasks(f.dir);
  if (!r.ok()) {
    std::fprintf(stderr, "shard merge: %s\n", r.status().message().c_str());
    return kExitFailure;
  }
  if (!r->problems.empty()) {
    for (const std::string& p : r->problems) std::fprintf(stderr, "shard merge: %s\n", p.c_str());
    std::fprintf(stderr, "shard merge: %zu problem(s); nothing written. Re-run the tasks named "
                         "(same command with --task-index I), then merge again.\n",
                 r->problems.size());
    return kExitFailure;
  }
  if (!f.quiet) {
    const auto& st = r->manifest.stats();
    std::fprintf(stderr, "shard merge: %u tasks, %u shards, %llu records, %llu rejected -> %s\n",
                 r->tasks, r->shards, static_cast<unsigned long long>(st.converted()),
                 static_cast<unsigned long long>(st.rejected()), r->manifest_path.c_str());
  }
  return kExitOk;
}

}  // namespace

void RegisterMerge(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Combine the task outputs of `shard convert --num-tasks N` in OUT into one manifest.json "
      "(and rejects.tsv), after checking that every task ran, all planned the same conversion "
      "(plan_id), and every shard is complete. Task manifests are read from OUT/.libshard/.\n"
      "Exit codes: 0 merged, 1 something missing, damaged or planned differently, or another convert/merge "
      "writing to OUT (each named; nothing written), 2 usage.");
  cmd->add_option("output", flags->dir, "the output folder the tasks wrote to")->required();
  cmd->add_flag("-q,--quiet", flags->quiet, "no summary line");
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace shard_tool
