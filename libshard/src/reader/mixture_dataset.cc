// Dataset::OpenMixture and mixture.json sources (reader/dataset.h): the
// sources' numbering, their label maps, the mixture's order.
#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "libshard/manifest/manifest_json.h"
#include "libshard/manifest/mixture_json.h"
#include "libshard/reader/dataset.h"
#include "libshard/store/object_store.h"
#include "libshard/util/strings.h"

namespace libshard::reader {

StatusOr<LabelMaps> ParseLabelMaps(std::string_view word) {
  if (word == "error") return LabelMaps::kError;
  if (word == "merge") return LabelMaps::kMerge;
  if (word == "keep") return LabelMaps::kKeep;
  return InvalidArgumentError("label_maps: expected \"error\", \"merge\" or \"keep\", got \"" + std::string(word) +
                              "\"");
}

StatusOr<std::optional<std::string>> Dataset::FindMixtureFile(const std::vector<std::string>& sources) {
  namespace fs = std::filesystem;
  for (const std::string& src : sources) {
    if (store::IsObjectUrl(src)) continue;
    std::error_code ec;
    std::string candidate;
    if (util::EndsWith(src, ".json") && fs::is_regular_file(src, ec)) {
      candidate = src;
    } else if (fs::is_directory(src, ec) && !fs::exists(fs::path(src) / manifest::kManifestName, ec) &&
               fs::is_regular_file(fs::path(src) / "mixture.json", ec)) {
      candidate = (fs::path(src) / "mixture.json").string();
    }
    if (candidate.empty()) continue;
    LIBSHARD_ASSIGN_OR_RETURN(bool mixture, manifest::IsMixtureFile(candidate));
    if (!mixture) continue;
    if (sources.size() > 1) {
      return InvalidArgumentError(candidate +
                                  ": a mixture file must be the only source (add the other datasets to its sources)");
    }
    return std::optional<std::string>(candidate);
  }
  return std::optional<std::string>();
}

StatusOr<std::unique_ptr<Dataset>> Dataset::OpenMixtureFile(const std::string& path, const DatasetOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(libshard::Mixture m, manifest::ReadMixture(path));
  std::vector<std::vector<std::string>> sources;
  MixtureOptions mix;
  for (const auto& s : m.sources()) {
    sources.push_back({s.path()});
    mix.weights.push_back(s.weight());
  }
  mix.samples_per_epoch = m.samples_per_epoch();
  if (!m.label_maps().empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(mix.label_maps, ParseLabelMaps(m.label_maps()));
  }
  auto ds = OpenMixture(sources, mix, options);
  if (!ds.ok()) return ds.status().WithContext(path);
  return ds;
}

StatusOr<std::unique_ptr<Dataset>> Dataset::OpenMixture(const std::vector<std::vector<std::string>>& sources,
                                                        const MixtureOptions& mixture, const DatasetOptions& options) {
  if (sources.empty()) return InvalidArgumentError("mixture: no sources");
  std::unique_ptr<Dataset> ds(new Dataset());
  LIBSHARD_RETURN_IF_ERROR(ds->Init(options));
  bool any_manifest = false;
  std::vector<uint64_t> sizes;
  std::vector<std::vector<LabelName>> maps;
  for (size_t g = 0; g < sources.size(); ++g) {
    std::string name;
    for (const std::string& src : sources[g]) name += (name.empty() ? "" : ", ") + src;
    if (sources[g].empty()) return InvalidArgumentError("mixture: source " + std::to_string(g) + " names no dataset");
    LIBSHARD_ASSIGN_OR_RETURN(std::optional<std::string> nested, FindMixtureFile(sources[g]));
    if (nested) return InvalidArgumentError(*nested + ": a mixture's source may not be a mixture");
    const uint64_t before = ds->size();
    ds->labels_.clear();  // each source's own map (AddManifestMetadata keeps the first)
    for (const std::string& src : sources[g]) LIBSHARD_RETURN_IF_ERROR(ds->AddSource(src, &any_manifest));
    sizes.push_back(ds->size() - before);
    maps.push_back(std::move(ds->labels_));
    ds->labels_.clear();
    ds->mixture_names_.push_back(name);
  }
  LIBSHARD_RETURN_IF_ERROR(ds->ReconcileLabels(maps, mixture.label_maps));
  LIBSHARD_ASSIGN_OR_RETURN(ds->mixture_,
                            MixtureOrder::Create(std::move(sizes), mixture.weights, mixture.samples_per_epoch));
  LIBSHARD_RETURN_IF_ERROR(ds->Finish(any_manifest));
  return ds;
}

namespace {

// "label 2 is \"cat\" in A and \"dog\" in B; \"zebra\" only in B": at most a
// few of the differences between two label maps.
std::string MapDifference(const std::vector<LabelName>& a, const std::string& a_name, const std::vector<LabelName>& b,
                          const std::string& b_name) {
  std::map<int64_t, std::string> by_label_b;
  std::set<std::string> names_a, names_b;
  for (const LabelName& l : b) {
    by_label_b[l.label] = l.name;
    names_b.insert(l.name);
  }
  for (const LabelName& l : a) names_a.insert(l.name);
  std::vector<std::string> diffs;
  for (const LabelName& l : a) {
    auto it = by_label_b.find(l.label);
    if (it != by_label_b.end() && it->second != l.name) {
      diffs.push_back("label " + std::to_string(l.label) + " is \"" + l.name + "\" in " + a_name + " and \"" +
                      it->second + "\" in " + b_name);
    }
  }
  for (const std::string& n : names_a) {
    if (names_b.count(n) == 0) diffs.push_back("\"" + n + "\" only in " + a_name);
  }
  for (const std::string& n : names_b) {
    if (names_a.count(n) == 0) diffs.push_back("\"" + n + "\" only in " + b_name);
  }
  if (diffs.empty()) diffs.push_back("the same names under other labels");
  std::string out;
  for (size_t i = 0; i < diffs.size() && i < 4; ++i) out += (i ? "; " : "") + diffs[i];
  if (diffs.size() > 4) out += "; and " + std::to_string(diffs.size() - 4) + " more";
  return out;
}

bool SameMap(const std::vector<LabelName>& a, const std::vector<LabelName>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].label != b[i].label || a[i].name != b[i].name) return false;
  }
  return true;
}

}  // namespace

Status Dataset::ReconcileLabels(const std::vector<std::vector<LabelName>>& maps, LabelMaps policy) {
  auto name_of = [&](size_t s) { return "source " + std::to_string(s) + " (" + mixture_names_[s] + ")"; };
  // The first source with a map, and the first that differs from it.
  size_t first = maps.size(), other = maps.size();
  for (size_t s = 0; s < maps.size(); ++s) {
    if (maps[s].empty()) continue;
    if (first == maps.size()) {
      first = s;
    } else if (other == maps.size() && !SameMap(maps[first], maps[s])) {
      other = s;
    }
  }
  if (policy == LabelMaps::kMerge) {
    std::set<std::string> names;
    for (size_t s = 0; s < maps.size(); ++s) {
      if (maps[s].empty()) {
        return InvalidArgumentError("label_maps=merge: " + name_of(s) +
                                    " has no label map to merge by class name (plain shards, or a manifest "
                                    "without labels); use label_maps=keep");
      }
      for (const LabelName& l : maps[s]) names.insert(l.name);
    }
    std::map<std::string, int64_t> merged;
    for (const std::string& n : names) {
      const int64_t label = static_cast<int64_t>(merged.size());
      merged[n] = label;
      labels_.push_back({label, n});
    }
    for (const auto& map : maps) {
      std::vector<std::pair<int64_t, int64_t>> r;
      for (const LabelName& l : map) r.emplace_back(l.label, merged[l.name]);
      std::sort(r.begin(), r.end());
      remap_.push_back(std::move(r));
    }
    return Status::OK();
  }
  if (other != maps.size() && policy == LabelMaps::kError) {
    return InvalidArgumentError(
        "mixture: " + name_of(first) + " and " + name_of(other) + " have different label maps: " +
        MapDifference(maps[first], "source " + std::to_string(first), maps[other], "source " + std::to_string(other)) +
        " (label_maps=\"merge\" remaps them by class name, \"keep\" keeps the stored labels)");
  }
  if (first != maps.size() && other == maps.size()) labels_ = maps[first];  // one map for all
  return Status::OK();
}

int64_t Dataset::SourceOf(uint64_t sample) const {
  return mixture_ == nullptr ? -1 : static_cast<int64_t>(mixture_->SourceOf(sample));
}

int64_t Dataset::MapLabel(uint64_t sample, int64_t stored) const {
  if (remap_.empty()) return stored;
  const auto& r = remap_[mixture_->SourceOf(sample)];
  auto it = std::lower_bound(r.begin(), r.end(), std::make_pair(stored, std::numeric_limits<int64_t>::min()));
  return it != r.end() && it->first == stored ? it->second : -1;
}

}  // namespace libshard::reader
