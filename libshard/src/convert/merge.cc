#include "libshard/convert/merge.h"

#include <google/protobuf/text_format.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "libshard/convert/duplicates.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/output_lock.h"
#include "libshard/crc32c.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;

// "crc32c:xxxxxxxx" of a file, or the reason it cannot be read.
StatusOr<std::string> FileChecksum(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return NotFoundError(path + ": missing");
  LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, io::Crc32cOfFile(path));  // pread: no SIGBUS if it shrinks
  return manifest::FormatChecksum(crc);
}

// The options that differ between two tasks, with both values:
// "quality 90 vs 50, seed 0 vs 5" (by reflection, so every option counts).
std::string OptionDifferences(const ConversionOptions& a, const ConversionOptions& b) {
  const google::protobuf::Descriptor* d = ConversionOptions::descriptor();
  std::string out;
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    // A repeated field (features) as its values joined: "[a, b]".
    auto text = [f](const ConversionOptions& m) {
      std::string v;
      if (!f->is_repeated()) {
        google::protobuf::TextFormat::PrintFieldValueToString(m, f, -1, &v);
        return v;
      }
      const int n = m.GetReflection()->FieldSize(m, f);
      for (int k = 0; k < n; ++k) {
        std::string one;
        google::protobuf::TextFormat::PrintFieldValueToString(m, f, k, &one);
        v += (k ? ", " : "") + one;
      }
      return "[" + v + "]";
    };
    const std::string va = text(a), vb = text(b);
    if (va != vb) out += (out.empty() ? "" : ", ") + f->name() + " " + va + " vs " + vb;
  }
  return out;
}

}  // namespace

StatusOr<MergeResult> MergeTasks(const std::string& dir, const MergeOptions& merge_options) {
  const auto t0 = std::chrono::steady_clock::now();
  MergeResult result;
  std::map<uint32_t, Manifest> tasks;  // by index
  std::set<uint32_t> task_counts;
  // Task manifests live in OUT/.libshard/. Older versions wrote them beside
  // the shards, without the plan fingerprint merge needs: those are named,
  // not read.
  auto scan = [](const std::string& folder, const auto& each) -> Status {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      unsigned index = 0, count = 0;
      const std::string name = it->path().filename().string();
      char tail = 0;
      if (std::sscanf(name.c_str(), "manifest.task-%5u-of-%5u.jso%c", &index, &count, &tail) != 3 ||
          name != TaskManifestName(index, count)) {
        continue;
      }
      LIBSHARD_RETURN_IF_ERROR(each(it->path().string(), index, count));
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
      return IOError(folder + ": cannot read folder: " + ec.message());
    }
    return Status::OK();
  };
  if (!fs::is_directory(dir)) return NotFoundError(dir + ": no such folder");
  // Held until the merge returns: no conversion may write meanwhile.
  LIBSHARD_ASSIGN_OR_RETURN(OutputLock lock, OutputLock::Acquire(dir, LockMode::kExclusive));
  LIBSHARD_RETURN_IF_ERROR(
      scan(dir + "/" + kStateDir, [&](const std::string& path, uint32_t index, uint32_t count) -> Status {
        LIBSHARD_ASSIGN_OR_RETURN(Manifest m, manifest::ReadManifest(path));
        task_counts.insert(count);
        tasks[index] = std::move(m);
        return Status::OK();
      }));
  if (tasks.empty()) {
    std::string old;
    LIBSHARD_RETURN_IF_ERROR(scan(dir, [&](const std::string& path, uint32_t, uint32_t) {
      if (old.empty()) old = path;
      return Status::OK();
    }));
    if (!old.empty()) {
      return NotFoundError(old + ": a task manifest of an older libshard (they now live in " + dir + "/" + kStateDir +
                           "/); re-run the tasks with this version");
    }
    // A run of one task (`--num-tasks 1`, an array of one) wrote the
    // manifest itself: nothing is left to merge, and that is no error.
    const std::string single = manifest::ManifestInFolder(dir);
    if (StatusOr<Manifest> m = manifest::ReadManifest(single); m.ok() && m->complete() && m->run().num_tasks() <= 1) {
      result.tasks = 1;
      for (const SplitEntry& split : m->splits()) result.shards += split.shard_count();
      result.manifest = std::move(*m);
      result.manifest_path = single;
      return result;
    }
    return NotFoundError(dir + ": no task manifests (" + kStateDir +
                         "/manifest.task-IIIII-of-NNNNN.json); run "
                         "`shard convert --num-tasks N --task-index I` first");
  }
  if (task_counts.size() > 1) {
    result.problems.push_back(
        "task manifests from runs with different task counts: " + std::to_string(*task_counts.begin()) + " and " +
        std::to_string(*task_counts.rbegin()) + "; remove the stale ones");
    return result;
  }
  const uint32_t n = *task_counts.begin();
  result.tasks = n;
  const Manifest& first = tasks.begin()->second;
  const std::string options = first.options().SerializeAsString();
  for (uint32_t i = 0; i < n; ++i) {
    auto it = tasks.find(i);
    if (it == tasks.end()) {
      result.problems.push_back("task " + std::to_string(i) + " of " + std::to_string(n) + ": no " +
                                TaskManifestName(i, n) + " (not run, or not finished)");
    } else if (it->second.options().SerializeAsString() != options) {
      result.problems.push_back("task " + std::to_string(i) + ": converted with different options than task " +
                                std::to_string(tasks.begin()->first) + " (" +
                                OptionDifferences(it->second.options(), first.options()) + ")");
    } else if (it->second.plan_id() != first.plan_id()) {
      result.problems.push_back("task " + std::to_string(i) + ": planned a different conversion than task " +
                                std::to_string(tasks.begin()->first) + " (plan " + it->second.plan_id().substr(0, 12) +
                                " vs " + first.plan_id().substr(0, 12) +
                                "): the input changed between the task runs; re-run every task");
    }
  }
  if (first.plan_id().empty()) {
    result.problems.push_back("task " + std::to_string(tasks.begin()->first) +
                              ": its manifest has no plan_id (written by an older libshard); "
                              "re-run every task");
  }

  std::vector<ShardEntry> shards;
  std::vector<Reject> rejects;
  std::map<std::string, std::pair<uint32_t, std::set<uint32_t>>> splits;  // count, indices
  // Each task's entries move into `shards` (with the leak check's
  // fingerprints they are most of the merge's memory: held once).
  for (auto& [index, m] : tasks) {
    for (const Reject& r : m.rejects()) rejects.push_back(r);
    for (SplitEntry& s : *m.mutable_splits()) {
      for (ShardEntry& e : *s.mutable_shards()) {
        auto& [count, seen] = splits[e.split()];
        count = e.count();
        seen.insert(e.index());
        StatusOr<std::string> sum =
            merge_options.shard_checksum ? merge_options.shard_checksum(e) : FileChecksum(dir + "/" + e.file());
        if (merge_options.shard_checksum && !sum.ok() && sum.status().code() != StatusCode::kNotFound) {
          return sum.status();  // not a missing shard: the store failed (403, a dead endpoint)
        }
        if (!sum.ok()) {
          result.problems.push_back("task " + std::to_string(index) + ": shard " + e.file() + " is missing");
        } else if (*sum != e.checksum()) {
          result.problems.push_back("task " + std::to_string(index) + ": shard " + e.file() +
                                    " is damaged or incomplete (" + *sum + ", manifest says " + e.checksum() + ")");
        } else {
          for (const manifest::ShardCompanion& c : manifest::ShardCompanions(e)) {
            if (merge_options.companion_exists ? !merge_options.companion_exists(c.name)
                                               : !fs::exists(dir + "/" + c.name)) {
              result.problems.push_back("task " + std::to_string(index) + ": " + c.what + " " + c.name +
                                        " is missing");
            }
          }
        }
        shards.push_back(std::move(e));
      }
    }
  }
  for (const auto& [split, cs] : splits) {
    for (uint32_t i = 0; i < cs.first; ++i) {
      if (!cs.second.count(i)) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "%05u-of-%05u", i, cs.first);
        result.problems.push_back("split " + split + ": shard " + buf + " is in no task manifest");
      }
    }
  }
  result.shards = static_cast<uint32_t>(shards.size());
  if (!result.problems.empty()) return result;

  std::vector<LabelEntry> labels(first.labels().begin(), first.labels().end());
  std::vector<FeatureSpec> schema(first.schema().begin(), first.schema().end());
  LIBSHARD_ASSIGN_OR_RETURN(result.manifest, AssembleManifest(first.options(), labels, schema, std::move(shards),
                                                              rejects, /*complete=*/true));
  result.manifest.set_plan_id(first.plan_id());
  *result.manifest.mutable_mask_classes() = first.mask_classes();
  *result.manifest.mutable_object_labels() = first.object_labels();
  if (first.has_annotations()) *result.manifest.mutable_annotations() = first.annotations();
  RunInfo* run = result.manifest.mutable_run();
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char started[32];
  std::strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
  run->set_started(started);
  run->set_num_tasks(n);
  run->set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  // The leak check over every task's shards (their fingerprints are in the
  // task manifests); a manifest of an older libshard has no mode: off.
  LeakMode leaks = LeakMode::kOff;
  if (!first.options().leaks().empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(leaks, ParseLeakMode(first.options().leaks()));
  }
  LIBSHARD_RETURN_IF_ERROR(CheckLeaks(dir, leaks, first.options().leak_distance(), /*sync=*/true, &result.manifest,
                                      &result.shards_without_hashes));
  LIBSHARD_RETURN_IF_ERROR(WriteRejectsTsv(dir + "/rejects.tsv", result.manifest));
  LIBSHARD_RETURN_IF_ERROR(WriteLabelMap(dir, result.manifest));
  DropShardDetails(&result.manifest);  // as a single run's manifest.json
  result.manifest_path = manifest::ManifestInFolder(dir);
  LIBSHARD_RETURN_IF_ERROR(io::WriteFileAtomically(result.manifest_path, manifest::ToJson(result.manifest)));
  return result;
}

}  // namespace libshard::convert
