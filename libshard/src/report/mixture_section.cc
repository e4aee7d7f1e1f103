// The report of a mixture file (mixture_section.h).
#include "report/mixture_section.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "libshard/manifest/manifest_json.h"
#include "libshard/manifest/mixture_json.h"
#include "libshard/reader/dataset.h"
#include "report/page_parts.h"

namespace libshard::report {

std::optional<std::string> MixtureFileOf(const std::string& source) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string file = source;
  if (fs::is_directory(source, ec)) {
    if (fs::exists(fs::path(source) / manifest::kManifestName, ec)) return std::nullopt;
    file = (fs::path(source) / "mixture.json").string();
  }
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  auto is_mixture = manifest::IsMixtureFile(file);
  if (!is_mixture.ok() || !*is_mixture) return std::nullopt;
  return file;
}

namespace {

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * share);
  return buf;
}

}  // namespace

StatusOr<std::string> MixtureSection(const std::string& path, uint64_t seed) {
  auto opened = reader::Dataset::Open({path});
  if (!opened.ok() && opened.status().code() == StatusCode::kInvalidArgument) {
    reader::DatasetOptions train;  // sources with several splits: the one a training run reads
    train.split = "train";
    auto again = reader::Dataset::Open({path}, train);
    if (again.ok()) opened = std::move(again);
  }
  if (!opened.ok()) return opened.status();
  const reader::Dataset& ds = **opened;
  const reader::MixtureOrder& mix = *ds.mixture();
  reader::OrderOptions o;
  o.kind = reader::OrderKind::kShuffle;
  o.seed = seed;
  std::vector<uint64_t> picks(mix.num_sources(), 0);
  for (uint64_t sample : mix.GlobalOrder(0, o)) ++picks[mix.SourceOf(sample)];
  const double total = static_cast<double>(mix.epoch_length());
  std::string out = "<section id=\"mixture\" data-sources=\"" + std::to_string(mix.num_sources()) +
                    "\"><h2>Mixture: epoch 0 against the weights</h2><p class=\"muted\">" +
                    FormatCount(mix.epoch_length()) + " samples per epoch from " + FormatCount(ds.size()) + " in " +
                    FormatCount(mix.num_sources()) + " sources; shuffled order, seed " + std::to_string(seed) +
                    "</p><div class=\"table-wrap\"><table class=\"mixture\"><tr><th>source</th><th>dataset</th>"
                    "<th>samples</th><th>weight</th><th>picks</th><th>realised</th><th>passes</th></tr>";
  std::vector<Bar> bars;
  for (size_t s = 0; s < mix.num_sources(); ++s) {
    char passes[32];
    std::snprintf(passes, sizeof passes, "%.2f", mix.sizes()[s] ? double(picks[s]) / double(mix.sizes()[s]) : 0.0);
    out += "<tr data-source=\"" + std::to_string(s) + "\" data-picks=\"" + std::to_string(picks[s]) + "\"><td>" +
           std::to_string(s) + "</td><td>" + HtmlEscape(ds.mixture_names()[s]) + "</td><td>" +
           FormatCount(mix.sizes()[s]) + "</td><td>" + Percent(mix.weights()[s]) + "</td><td>" + FormatCount(picks[s]) +
           "</td><td>" + Percent(total > 0 ? picks[s] / total : 0) + "</td><td>" + passes + "</td></tr>";
    bars.push_back({"source " + std::to_string(s) + " (weight " + Percent(mix.weights()[s]) + ")", picks[s], "",
                    std::to_string(s)});
  }
  out += "</table></div>" + HorizontalBarChart("Picks per source in epoch 0", bars, mix.epoch_length()) + "</section>";
  return out;
}

}  // namespace libshard::report
