// `shard merge OUT`: puts the outputs of `shard convert --num-tasks N` back
// together (libshard/convert/merge.h): checks every task and shard, then
// writes OUT/manifest.json and OUT/rejects.tsv. An s3:// prefix is merged
// in place (libshard/remote/remote_merge.h): only the task manifests are
// fetched, the shard objects are checked by HEAD (size and the CRC-32C
// recorded at upload).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "leak_summary.h"
#include "libshard/convert/merge.h"
#include "libshard/remote/remote_merge.h"

namespace shard_tool {
namespace {

struct MergeFlags {
  std::string dir;
  bool quiet = false;
};

int Run(const MergeFlags& f) {
  // A local folder, or an s3:// prefix merged in place (remote/remote_merge.h).
  auto target = libshard::remote::MergeTarget::Open(f.dir);
  if (!target.ok()) {
    std::fprintf(stderr, "shard merge: %s\n", target.status().message().c_str());
    return StagingExitCode(target.status());
  }
  libshard::StatusOr<libshard::convert::MergeResult> r = (*target)->Merge();
  if (!r.ok()) {
    std::fprintf(stderr, "shard merge: %s\n", r.status().message().c_str());
    return kExitFailure;
  }
  if (!r->problems.empty()) {
    for (const std::string& p : r->problems) std::fprintf(stderr, "shard merge: %s\n", p.c_str());
    std::fprintf(stderr,
                 "shard merge: %zu problem(s); nothing written. Re-run the tasks named "
                 "(same command with --task-index I), then merge again.\n",
                 r->problems.size());
    return kExitFailure;
  }
  if (!f.quiet) {
    const auto& st = r->manifest.stats();
    std::fprintf(stderr, "shard merge: %u tasks, %u shards, %llu records, %llu rejected -> %s\n", r->tasks, r->shards,
                 static_cast<unsigned long long>(st.converted()), static_cast<unsigned long long>(st.rejected()),
                 r->manifest_path.c_str());
  }
  return ReportLeaks("shard merge", r->manifest, r->shards_without_hashes, (*target)->local() + "/duplicates.tsv",
                     f.quiet);
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
      "writing to OUT (each named; nothing written), 2 usage (OUT is not a folder).");
  cmd->add_option("output", flags->dir,
                  "the output folder the tasks wrote to, or their s3://BUCKET/PREFIX (merged in place: the task "
                  "manifests are fetched into a temporary folder under $TMPDIR, each shard object is checked by "
                  "its size and the CRC-32C recorded at upload without being downloaded, then rejects.tsv and "
                  "manifest.json are uploaded, manifest.json last)")
      ->required();
  cmd->add_flag("-q,--quiet", flags->quiet, "no summary line");
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace shard_tool
