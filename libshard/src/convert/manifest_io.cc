#include "libshard/convert/manifest_io.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>

#include "libshard/convert/annotations.h"
#include "libshard/convert/dataset_stats.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"

namespace libshard::convert {

StatusOr<ShardEntry> ReadShardEntry(const std::string& path) {
  ShardEntry e;
  LIBSHARD_RETURN_IF_ERROR(manifest::ReadJsonFile(path, &e));
  return e;
}

std::string TaskManifestName(uint32_t task_index, uint32_t num_tasks) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "manifest.task-%05u-of-%05u.json", task_index, num_tasks);
  return buf;
}

std::string TaskManifestPath(const std::string& output_dir, uint32_t task_index, uint32_t num_tasks) {
  return output_dir + "/" + kStateDir + "/" + TaskManifestName(task_index, num_tasks);
}

Status WriteRejectsTsv(const std::string& path, const Manifest& m, bool sync) {
  std::string text = "path\treason\n";
  for (const Reject& r : m.rejects()) {
    std::string reason = r.reason();
    for (char& c : reason) {
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    }
    text += r.path() + "\t" + reason + "\n";
  }
  return io::WriteFileAtomically(path, text, sync);
}

Status WriteLabelMap(const std::string& output_dir, const Manifest& m, bool sync) {
  if (m.object_labels().empty()) return Status::OK();
  std::vector<ObjectClass> classes;
  // The manifest's names are EscapeText'd (valid UTF-8 on one line); the
  // label map escapes them for the text format instead.
  for (const LabelEntry& l : m.object_labels()) classes.push_back({l.label(), UnescapeText(l.name())});
  return io::WriteFileAtomically(output_dir + "/label_map.pbtxt", LabelMapPbtxt(classes), sync);
}

StatusOr<Manifest> AssembleManifest(const ConversionOptions& options, const std::vector<LabelEntry>& labels,
                                    const std::vector<FeatureSpec>& schema, std::vector<ShardEntry> shards,
                                    const std::vector<Reject>& listing_rejects, bool complete) {
  Manifest m;
  m.set_format(manifest::kFormat);
  m.set_tool_version(LIBSHARD_VERSION);
  *m.mutable_options() = options;
  for (const LabelEntry& l : labels) *m.add_labels() = l;
  for (const FeatureSpec& f : schema) *m.add_schema() = f;
  m.set_complete(complete);

  std::sort(shards.begin(), shards.end(), [](const ShardEntry& a, const ShardEntry& b) {
    return a.split() != b.split() ? a.split() < b.split() : a.index() < b.index();
  });
  std::map<std::pair<std::string, std::string>, bool> rejects;  // (path, reason)
  for (const Reject& r : listing_rejects) rejects[{r.path(), r.reason()}] = true;
  StatsAccumulator total;
  for (size_t i = 0; i < shards.size();) {
    SplitEntry* split = m.add_splits();
    split->set_name(shards[i].split());
    split->set_shard_count(shards[i].count());
    StatsAccumulator acc;
    for (bool first = true; i < shards.size() && shards[i].split() == split->name(); ++i, first = false) {
      ShardEntry& e = shards[i];
      if (!first && split->shards(split->shards_size() - 1).index() == e.index()) {
        return InvalidArgumentError("shard " + e.file() + " listed twice");
      }
      LIBSHARD_ASSIGN_OR_RETURN(StatsAccumulator s, StatsAccumulator::FromProto(e.stats()));
      acc.Merge(s);
      split->set_records(split->records() + e.records());
      for (const Reject& r : e.rejects()) rejects[{r.path(), r.reason()}] = true;
      // Moved, not copied: the entries (with the leak check's fingerprints,
      // most of a run's memory) are held once.
      *split->add_shards() = std::move(e);
    }
    acc.ToProto(split->mutable_stats());
    total.Merge(acc);
  }
  total.ToProto(m.mutable_stats());
  m.mutable_stats()->set_rejected(rejects.size());
  for (const auto& [key, unused] : rejects) {
    Reject* r = m.add_rejects();
    r->set_path(key.first);
    r->set_reason(key.second);
  }
  return m;
}

void DropShardDetails(Manifest* m) {
  for (SplitEntry& split : *m->mutable_splits()) {
    for (ShardEntry& e : *split.mutable_shards()) {
      e.clear_stats();
      e.clear_rejects();
      e.clear_image_hashes();
    }
  }
}

}  // namespace libshard::convert
