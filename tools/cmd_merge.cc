// `shard merge OUT`: puts the outputs of `shard convert --num-tasks N` back
// together (libshard/convert/merge.h): checks every task and shard, then
// writes OUT/manifest.json and OUT/rejects.tsv.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "commands.h"
#include "libshard/convert/merge.h"
#include "remote_staging.h"
#include "remote_upload.h"

namespace shard_tool {
namespace {

// rejects.tsv, then manifest.json (the commit point), from `local` to `url`.
libshard::Status UploadMerged(const std::string& url, const std::string& local) {
  LIBSHARD_ASSIGN_OR_RETURN(auto uploader, ShardUploader::Start(url, local));
  return uploader->Finish(/*commit=*/true);
}

struct MergeFlags {
  std::string dir;
  bool quiet = false;
};

int Run(const MergeFlags& f_in) {
  // s3://BUCKET/PREFIX: the task outputs are downloaded once into a
  // temporary folder, merged there, and rejects.tsv then manifest.json (the
  // commit point) uploaded.
  MergeFlags f = f_in;
  std::unique_ptr<StagedObjects> staged;
  if (f.dir.rfind("s3://", 0) == 0) {
    auto st = StagedObjects::Stage(f.dir);
    if (!st.ok()) {
      std::fprintf(stderr, "shard merge: %s\n", st.status().message().c_str());
      return kExitUsage;
    }
    staged = std::move(*st);
    f.dir = staged->local();
  } else if (f.dir.find("://") != std::string::npos) {
    std::fprintf(stderr, "shard merge: %s: only local folders and s3:// prefixes can be merged\n", f.dir.c_str());
    return kExitUsage;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(f.dir, ec)) {
    std::fprintf(stderr, "shard merge: %s: no such folder\n", f.dir.c_str());
    return kExitUsage;
  }
  libshard::StatusOr<libshard::convert::MergeResult> r = libshard::convert::MergeTasks(f.dir);
  if (r.ok() && r->problems.empty() && staged) {
    for (std::string& p : r->problems) p = staged->ToUrl(p);
    libshard::Status up = UploadMerged(f_in.dir, f.dir);
    if (!up.ok()) {
      std::fprintf(stderr, "shard merge: uploading to %s: %s\n", f_in.dir.c_str(), up.message().c_str());
      return kExitFailure;
    }
    r->manifest_path = staged->ToUrl(r->manifest_path);
  } else if (r.ok() && staged) {
    for (std::string& p : r->problems) p = staged->ToUrl(p);
  } else if (!r.ok() && staged) {
    std::fprintf(stderr, "shard merge: %s\n", staged->ToUrl(r.status().message()).c_str());
    return kExitFailure;
  }
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
      "writing to OUT (each named; nothing written), 2 usage (OUT is not a folder).");
  cmd->add_option("output", flags->dir,
                  "the output folder the tasks wrote to, or their s3://BUCKET/PREFIX (downloaded once into a "
                  "temporary folder under $TMPDIR, merged there; rejects.tsv then manifest.json uploaded)")
      ->required();
  cmd->add_flag("-q,--quiet", flags->quiet, "no summary line");
  cmd->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

}  // namespace shard_tool
