#include "libshard/manifest/manifest_checks.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace libshard::manifest {
namespace {

// Shortest text of a double for messages ("10.5", "-5", "nan").
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// A decimal digit string (sum_squares) as a long double; false for
// anything else.
bool ParseDecimal(const std::string& text, long double* out) {
  if (text.empty() || text.size() > 40) return false;
  long double v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool IsInsideFolder(std::string_view name) {
  if (name.empty() || name.find('\0') != std::string_view::npos) return false;
  const std::filesystem::path p = std::filesystem::path(std::string(name)).lexically_normal();
  return !p.is_absolute() && !p.has_root_name() && !p.empty() && *p.begin() != "..";
}

Status CheckChannelStats(const ChannelStats& c) {
  for (const auto& [what, v] : {std::pair<const char*, double>{"mean", c.mean()}, {"std", c.std()}}) {
    if (!std::isfinite(v)) return InvalidArgumentError(std::string(what) + " " + Number(v) + " is not a finite number");
  }
  if (c.std() < 0) return InvalidArgumentError("std " + Number(c.std()) + " is negative");
  if (c.count() == 0) {
    if (c.mean() != 0 || c.std() != 0) {
      return InvalidArgumentError("mean " + Number(c.mean()) + " and std " + Number(c.std()) +
                                  " over a count of 0 values (both must be 0)");
    }
    return Status::OK();
  }
  if (c.sum_squares().empty()) return Status::OK();  // nothing to derive them from
  long double squares = 0;
  if (!ParseDecimal(c.sum_squares(), &squares)) {
    return InvalidArgumentError("sum_squares \"" + c.sum_squares() + "\" is not a decimal number");
  }
  const long double n = static_cast<long double>(c.count());
  const long double mean = static_cast<long double>(c.sum()) / n;
  if (std::fabs(static_cast<long double>(c.mean()) - mean) > 1e-6L * std::max(1.0L, mean)) {
    return InvalidArgumentError("mean " + Number(c.mean()) +
                                " disagrees with sum / count = " + Number(static_cast<double>(mean)));
  }
  const long double var = squares / n - mean * mean;
  if (var < -1e-6L * std::max(1.0L, mean * mean)) {
    return InvalidArgumentError("sum_squares " + c.sum_squares() +
                                " is below sum^2 / count (no channel has those sums)");
  }
  const long double std = std::sqrt(std::max(0.0L, var));
  if (std::fabs(static_cast<long double>(c.std()) - std) > 1e-3L + 1e-6L * std) {
    return InvalidArgumentError("std " + Number(c.std()) + " disagrees with the sums (sum, sum_squares, count) = " +
                                Number(static_cast<double>(std)));
  }
  return Status::OK();
}

std::vector<ShardCompanion> ShardCompanions(const ShardEntry& shard) {
  std::vector<ShardCompanion> out;
  if (!shard.index_file().empty()) out.push_back({shard.index_file(), "index", "index_file"});
  if (!shard.labels_file().empty()) out.push_back({shard.labels_file(), "labels", "labels_file"});
  return out;
}

Status CheckContents(const Manifest& m) {
  for (const SplitEntry& split : m.splits()) {
    const std::string where = "split \"" + split.name() + "\"";
    for (const ShardEntry& shard : split.shards()) {
      if (shard.file().empty()) return InvalidArgumentError(where + " lists a shard without a file");
      std::vector<std::string> names = {shard.file()};
      for (const ShardCompanion& c : ShardCompanions(shard)) names.push_back(c.name);
      for (const std::string& name : names) {
        if (!IsInsideFolder(name)) {
          return InvalidArgumentError(where + " lists \"" + name + "\", outside the manifest's folder");
        }
      }
    }
    for (int c = 0; c < split.stats().channels_size(); ++c) {
      LIBSHARD_RETURN_IF_ERROR(
          CheckChannelStats(split.stats().channels(c)).WithContext(where + " channel " + std::to_string(c)));
    }
  }
  for (int c = 0; c < m.stats().channels_size(); ++c) {
    LIBSHARD_RETURN_IF_ERROR(
        CheckChannelStats(m.stats().channels(c)).WithContext("stats channel " + std::to_string(c)));
  }
  return Status::OK();
}

}  // namespace libshard::manifest
