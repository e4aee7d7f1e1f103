// `shard merge OUT`: puts the outputs of `shard convert --num-tasks N` back
// together (libshard/convert/merge.h): checks every task and shard, then
// writes OUT/manifest.json and OUT/rejects.tsv. An s3:// prefix is merged
// in place: only the task manifests are fetched, the shard objects are
// checked by HEAD (size and the CRC-32C recorded at upload).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "leak_summary.h"
#include "libshard/convert/merge.h"
#include "libshard/io/open_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/staging.h"
#include "libshard/remote/uploader.h"
#include "libshard/util/strings.h"

namespace shard_tool {
namespace {

namespace store = libshard::store;
using libshard::Status;
using libshard::StatusOr;
using libshard::remote::CrcMetadata;
using libshard::remote::StagedObjects;

// rejects.tsv, duplicates.tsv, label_map.pbtxt, then manifest.json (the commit point), from `local` to the
// prefix, each with its CRC-32C as metadata (as convert uploads them).
Status UploadMerged(const StagedObjects& staged) {
  for (const char* name : {"rejects.tsv", "duplicates.tsv", "label_map.pbtxt", libshard::manifest::kManifestName}) {
    const std::string path = staged.local() + "/" + name;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, libshard::io::Crc32cOfFile(path));
    store::PutOptions o;
    o.metadata[libshard::remote::kCrcMetadataKey] = CrcMetadata(crc);
    LIBSHARD_RETURN_IF_ERROR(staged.store().PutFile(staged.KeyOf(name), path, o));
  }
  return Status::OK();
}

// The shards checked where they are: the object's size and the CRC-32C
// recorded when it was uploaded (x-amz-meta-crc32c), by HEAD; an object
// without that metadata (put by another tool) is streamed once through a
// CRC check, never stored.
libshard::convert::MergeOptions InPlace(const StagedObjects& staged) {
  libshard::convert::MergeOptions o;
  o.shard_checksum = [&staged](const libshard::ShardEntry& e) -> StatusOr<std::string> {
    const std::string key = staged.KeyOf(e.file());
    auto listed = staged.listed().find(key);
    if (listed == staged.listed().end()) return libshard::NotFoundError(staged.store().UrlOf(key) + ": missing");
    if (listed->second != e.bytes()) return std::to_string(listed->second) + " bytes";
    LIBSHARD_ASSIGN_OR_RETURN(store::ObjectInfo info, staged.store().Head(key));
    if (info.size != e.bytes()) return std::to_string(info.size) + " bytes";
    if (std::optional<std::string> crc = libshard::remote::MetadataChecksum(info)) return *crc;
    LIBSHARD_ASSIGN_OR_RETURN(uint32_t want, libshard::manifest::ParseChecksum(e.checksum()));
    Status s = staged.store().GetVerified(key, {e.bytes(), want}, [](std::string_view) { return Status::OK(); });
    if (s.code() == libshard::StatusCode::kDataLoss) return std::string("its bytes differ");
    LIBSHARD_RETURN_IF_ERROR(s);
    return e.checksum();
  };
  o.companion_exists = [&staged](const std::string& companion) {
    return staged.listed().count(staged.KeyOf(companion)) > 0;
  };
  return o;
}

struct MergeFlags {
  std::string dir;
  bool quiet = false;
};

int Run(const MergeFlags& f_in) {
  // s3://BUCKET/PREFIX: merged in place. The task manifests (small objects)
  // are fetched into a temporary folder and merged there, each shard checked
  // by HEAD where it is (no shard is downloaded or renamed), then rejects.tsv
  // and manifest.json (the commit point) uploaded.
  MergeFlags f = f_in;
  std::unique_ptr<StagedObjects> staged;
  if (libshard::util::StartsWith(f.dir, "s3://")) {
    auto st = StagedObjects::StageTaskManifests(f.dir);
    if (!st.ok()) {
      std::fprintf(stderr, "shard merge: %s\n", st.status().message().c_str());
      return StagingExitCode(st.status());
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
  libshard::StatusOr<libshard::convert::MergeResult> r =
      staged ? libshard::convert::MergeTasks(f.dir, InPlace(*staged)) : libshard::convert::MergeTasks(f.dir);
  if (r.ok() && r->problems.empty() && staged) {
    libshard::Status up = UploadMerged(*staged);
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
  return ReportLeaks("shard merge", r->manifest, r->shards_without_hashes, f.dir + "/duplicates.tsv", f.quiet);
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
