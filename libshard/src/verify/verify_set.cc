// VerifySet: a shard set against its manifest.json. The per-file walk does
// the per-record checks (labels, schema) and the whole-file CRC-32C; this
// file loads the manifest, decides which files to walk with which rules,
// and compares what the walk found with what the manifest lists.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <tuple>

#include "libshard/example/schema_kind.h"
#include "libshard/io/open_file.h"
#include "libshard/io/shard_paths.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_checks.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/record_labels.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify {

namespace fs = std::filesystem;

namespace {

struct ListedShard {
  std::string path;  // the manifest's folder joined with `file`
  const ShardEntry* entry = nullptr;
};

struct LoadedManifest {
  ManifestResult result;
  bool ok = false;
  Manifest proto;
  fs::path dir;
  RecordRules rules;
  std::vector<ListedShard> shards;
};

// The canonical form of a path, to tell whether two names are one file.
std::string Key(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

void Add(ManifestResult* m, std::string path, SetFaultKind kind, std::string message) {
  m->faults.push_back(SetFault{std::move(path), kind, std::move(message)});
}

LoadedManifest Load(const std::string& path, bool allow_empty) {
  LoadedManifest m;
  m.result.path = path;
  auto text = io::ReadFileToString(path, manifest::kMaxBytes);
  if (!text.ok()) {
    Add(&m.result, path, SetFaultKind::kManifestUnreadable, text.status().message());
    return m;
  }
  if (Status parsed = manifest::FromJson(*text, &m.proto); !parsed.ok()) {
    Add(&m.result, path, SetFaultKind::kManifestInvalid, std::string(parsed.message()));
    return m;
  }
  if (Status format = manifest::CheckFormat(m.proto); !format.ok()) {
    Add(&m.result, path, SetFaultKind::kManifestFormat, format.message());
    return m;
  }
  m.dir = fs::path(path).parent_path();
  m.rules.source = path;
  for (const FeatureSpec& spec : m.proto.schema()) {
    FeatureRule rule;
    rule.key = spec.key();
    rule.required = spec.required();
    if (spec.key().empty() || !example::ParseSchemaKind(spec.kind(), &rule.kind)) {
      Add(&m.result, path, SetFaultKind::kManifestInvalid,
          "schema entry \"" + spec.key() + "\": kind \"" + spec.kind() + "\" is not bytes, int64 or float");
      continue;
    }
    m.rules.schema.push_back(std::move(rule));
  }
  for (const LabelEntry& l : m.proto.labels()) m.rules.labels.push_back(l.label());
  std::sort(m.rules.labels.begin(), m.rules.labels.end());
  m.rules.labels.erase(std::unique(m.rules.labels.begin(), m.rules.labels.end()), m.rules.labels.end());
  // The detection boxes' label map (image/object/class/label), when the set has one.
  std::vector<int64_t>& objects = m.rules.object_labels;
  for (const LabelEntry& l : m.proto.object_labels()) objects.push_back(l.label());
  std::sort(objects.begin(), objects.end());
  objects.erase(std::unique(objects.begin(), objects.end()), objects.end());
  // What the manifest claims beyond its shards: that it is complete, and
  // totals that are the sums of its shards.
  if (!m.proto.complete()) {
    Add(&m.result, path, SetFaultKind::kManifestInvalid,
        "\"complete\" is false: a task's partial manifest or an unfinished conversion (shard merge writes the "
        "complete one)");
  }
  uint64_t all_records = 0;
  for (const SplitEntry& split : m.proto.splits()) {
    uint64_t records = 0;
    for (const ShardEntry& shard : split.shards()) records += shard.records();
    all_records += records;
    if (records != split.records()) {
      Add(&m.result, path, SetFaultKind::kManifestInvalid,
          "split \"" + split.name() + "\" claims " + std::to_string(split.records()) + " records, its shards list " +
              std::to_string(records));
    }
  }
  if (all_records != m.proto.stats().converted()) {
    Add(&m.result, path, SetFaultKind::kManifestInvalid,
        "stats.converted claims " + std::to_string(m.proto.stats().converted()) + " records, the shards list " +
            std::to_string(all_records));
  }
  if (all_records == 0 && !allow_empty) {
    Add(&m.result, path, SetFaultKind::kManifestEmpty,
        "the manifest lists no records (" + std::to_string(m.proto.splits_size()) +
            " split(s)): an empty dataset; --allow-empty accepts it");
  }
  if (m.proto.stats().rejected() != static_cast<uint64_t>(m.proto.rejects_size())) {
    Add(&m.result, path, SetFaultKind::kManifestInvalid,
        "stats.rejected claims " + std::to_string(m.proto.stats().rejected()) + " rejects, rejects[] lists " +
            std::to_string(m.proto.rejects_size()));
  }
  // A listed file must be a path inside the manifest's folder.
  const auto outside = [](const std::string& file) { return !manifest::IsInsideFolder(file); };
  // Statistics must be numbers that agree with the sums they come from.
  for (const SplitEntry& split : m.proto.splits()) {
    for (int c = 0; c < split.stats().channels_size(); ++c) {
      if (Status s = manifest::CheckChannelStats(split.stats().channels(c)); !s.ok()) {
        Add(&m.result, path, SetFaultKind::kManifestInvalid,
            "split \"" + split.name() + "\" channel " + std::to_string(c) + ": " + s.message());
      }
    }
  }
  for (int c = 0; c < m.proto.stats().channels_size(); ++c) {
    if (Status s = manifest::CheckChannelStats(m.proto.stats().channels(c)); !s.ok()) {
      Add(&m.result, path, SetFaultKind::kManifestInvalid, "stats channel " + std::to_string(c) + ": " + s.message());
    }
  }
  std::set<std::string> seen;
  for (const SplitEntry& split : m.proto.splits()) {
    for (const ShardEntry& shard : split.shards()) {
      if (shard.file().empty()) {
        Add(&m.result, path, SetFaultKind::kManifestInvalid,
            "split \"" + split.name() + "\" lists a shard without a file");
        continue;
      }
      if (outside(shard.file()) || (!shard.index_file().empty() && outside(shard.index_file()))) {
        Add(&m.result, path, SetFaultKind::kManifestInvalid,
            "split \"" + split.name() + "\" lists " + (outside(shard.file()) ? shard.file() : shard.index_file()) +
                ", outside the manifest's folder (not read)");
        continue;
      }
      const std::string joined = (m.dir / shard.file()).string();
      if (!seen.insert(Key(joined)).second) {
        Add(&m.result, joined, SetFaultKind::kManifestInvalid, "listed more than once");
        continue;
      }
      m.shards.push_back(ListedShard{joined, &shard});
    }
  }
  m.result.shards = m.shards.size();
  m.ok = true;
  return m;
}

// Compares a walked shard with its entry.
void Compare(const ListedShard& listed, const FileResult& r, ManifestResult* m) {
  const ShardEntry& e = *listed.entry;
  if (r.Has(FaultKind::kUnreadable)) return;  // the file's own fault says it all
  if (r.records != e.records()) {
    std::string message =
        "the manifest lists " + std::to_string(e.records()) + " records, the shard has " + std::to_string(r.records);
    if (r.frames_after_fault.has_value()) {
      message += " intact ones, then record " + std::to_string(r.records) + ", whose data fails its CRC, and " +
                 std::to_string(*r.frames_after_fault) +
                 " records after it whose framing holds (their payloads not checked)";
    } else if (r.unchecked_bytes.value_or(1) != 0) {
      message += " intact ones before the damage";
    }
    // A damaged shard of `shard convert`: its rerun checks every kept shard
    // against its entry and converts a damaged one again.
    if (r.unchecked_bytes.value_or(1) != 0) message += "; rerun the same `shard convert` to redo this shard";
    Add(m, listed.path, SetFaultKind::kManifestRecordCount, std::move(message));
  }
  if (r.file_size != e.bytes()) {
    Add(m, listed.path, SetFaultKind::kManifestSize,
        "the manifest lists " + std::to_string(e.bytes()) + " bytes, the file has " + std::to_string(r.file_size));
  }
  const StatusOr<uint32_t> want = manifest::ParseChecksum(e.checksum());
  if (!want.ok()) {
    Add(m, listed.path, SetFaultKind::kManifestInvalid, std::string(want.status().message()));
  } else if (r.crc32c.has_value() && *r.crc32c != *want) {
    Add(m, listed.path, SetFaultKind::kManifestChecksum,
        "the manifest lists " + e.checksum() + ", the file's CRC-32C is " + manifest::FormatChecksum(*r.crc32c));
  }
  for (const manifest::ShardCompanion& c : manifest::ShardCompanions(e)) {
    const std::string path = (fs::path(listed.path).parent_path() / c.name).string();
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      Add(m, path, SetFaultKind::kManifestShardMissing,
          std::string(c.what) + " file listed by the manifest is missing");
    }
  }
  // The sidecar's contents are checked beside the shard, where the file
  // check looks for it (labels_check.h): a manifest naming another file
  // would have readers trust one nothing checked.
  if (!e.labels_file().empty() && e.labels_file() != record::LabelsPathFor(e.file())) {
    Add(m, listed.path, SetFaultKind::kManifestInvalid,
        "labels_file \"" + e.labels_file() + "\" is not the shard's name with \".labels\" (" +
            record::LabelsPathFor(e.file()) + ")");
  }
}

// Files under the manifest's folder that look like shards but are not listed.
void FindUnlisted(const LoadedManifest& m, const std::set<std::string>& listed, ManifestResult* result) {
  const fs::path dir = m.dir.empty() ? fs::path(".") : m.dir;
  StatusOr<std::vector<std::string>> all = io::FindShardFiles(dir.string());
  if (!all.ok()) {
    Add(result, dir.string(), SetFaultKind::kManifestUnreadable, all.status().message());
    return;
  }
  std::vector<std::string> found;
  for (const std::string& path : *all) {
    if (listed.count(Key(path)) == 0) {
      found.push_back(m.dir.empty() ? fs::path(path).lexically_relative(".").string() : path);
    }
  }
  for (const std::string& f : found) {
    Add(result, f, SetFaultKind::kManifestShardUnlisted, "a shard in the manifest's folder that it does not list");
  }
}

}  // namespace

uint64_t SetResult::fault_count() const {
  uint64_t n = name_set_faults.size();
  for (const FileResult& f : files) n += f.fault_count();
  for (const ManifestResult& m : manifests) n += m.faults.size();
  return n;
}

std::vector<SetFault> CheckNumberedSets(const std::vector<std::string>& paths) {
  std::vector<SetFault> faults;
  for (io::NumberedSetGap& g : io::FindIncompleteNumberedSets(paths)) {
    faults.push_back({std::move(g.path), SetFaultKind::kSetIncomplete, std::move(g.message)});
  }
  return faults;
}

SetResult VerifySet(const std::vector<std::string>& paths, const std::vector<std::string>& manifests,
                    const VerifyOptions& options) {
  if (manifests.empty()) {
    SetResult out;
    out.files = VerifyFiles(paths, options);
    out.no_manifest = true;
    return out;
  }
  std::vector<std::unique_ptr<LoadedManifest>> loaded;
  std::set<std::string> manifest_keys;
  for (const std::string& path : manifests) {
    if (!manifest_keys.insert(Key(path)).second) continue;
    loaded.push_back(std::make_unique<LoadedManifest>(Load(path, options.allow_empty)));
  }
  // Which file gets which rules: a listed shard those of its manifest.
  std::vector<std::string> all = paths;
  std::map<std::string, size_t> index_of;  // Key -> position in `all`
  for (size_t i = 0; i < all.size(); ++i) index_of.emplace(Key(all[i]), i);
  std::vector<FileChecks> checks(all.size());
  // For each manifest, the position in `all` of each listed shard (or npos when missing).
  std::vector<std::vector<size_t>> positions(loaded.size());
  for (size_t m = 0; m < loaded.size(); ++m) {
    LoadedManifest& man = *loaded[m];
    if (!man.ok) continue;
    for (const ListedShard& s : man.shards) {
      std::error_code ec;
      if (!fs::exists(s.path, ec)) {
        Add(&man.result, s.path, SetFaultKind::kManifestShardMissing, "listed by the manifest, but not there");
        positions[m].push_back(std::string::npos);
        continue;
      }
      auto [it, added] = index_of.emplace(Key(s.path), all.size());
      if (added) {
        all.push_back(s.path);
        checks.emplace_back();
      }
      checks[it->second].rules = &man.rules;
      checks[it->second].checksum = true;
      checks[it->second].empty_listed = s.entry != nullptr && s.entry->records() == 0;
      positions[m].push_back(it->second);
    }
  }
  SetResult out;
  out.files = VerifyFiles(all, options, checks);
  for (size_t m = 0; m < loaded.size(); ++m) {
    LoadedManifest& man = *loaded[m];
    if (man.ok) {
      std::set<std::string> listed;
      for (size_t k = 0; k < man.shards.size(); ++k) {
        listed.insert(Key(man.shards[k].path));
        if (positions[m][k] != std::string::npos) Compare(man.shards[k], out.files[positions[m][k]], &man.result);
      }
      FindUnlisted(man, listed, &man.result);
    }
    out.manifests.push_back(std::move(man.result));
  }
  return out;
}

std::vector<std::string> FindManifests(const std::vector<std::string>& args) {
  std::vector<std::string> found;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) continue;
    const fs::path manifest = manifest::ManifestInFolder(arg);
    if (!fs::is_regular_file(manifest, ec)) continue;
    std::string key = fs::weakly_canonical(manifest, ec).string();
    if (seen.insert(ec ? manifest.string() : key).second) found.push_back(manifest.string());
  }
  return found;
}

}  // namespace libshard::verify
