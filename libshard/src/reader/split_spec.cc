// The split string (reader/split_spec.h), and the shards and records of a
// manifest it selects (Dataset::SelectSplits, Dataset::SelectShards).
#include "libshard/reader/split_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "libshard/manifest.pb.h"
#include "libshard/reader/dataset.h"

namespace libshard::reader {
namespace {

constexpr char kForms[] =
    ": expected NAME or NAME[FROM:TO], FROM and TO both sample numbers or both percentages, each optional "
    "(\"train[:10%]\", \"train[10%:]\", \"val[:500]\", \"train[100:200]\")";

Status Bad(std::string_view text, const std::string& why) {
  return InvalidArgumentError("split \"" + std::string(text) + "\": " + why + kForms);
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "-12", "12.5%": a sample number or a percentage; false for anything else
// (a sample number beyond int64, a fraction without '%').
bool ParseBound(std::string_view s, SliceBound* out) {
  out->set = !s.empty();
  if (s.empty()) return true;
  out->percent = s.back() == '%';
  if (out->percent) s.remove_suffix(1);
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) s.remove_prefix(1);
  const size_t dot = s.find('.');
  const std::string_view whole = s.substr(0, dot);
  const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
  if (whole.empty() || !std::all_of(whole.begin(), whole.end(), IsDigit)) return false;
  if (dot != std::string_view::npos &&
      (!out->percent || fraction.empty() || !std::all_of(fraction.begin(), fraction.end(), IsDigit))) {
    return false;
  }
  if (out->percent) {  // decimal digits by hand: no locale's decimal point
    double v = 0, scale = 1;
    for (char c : whole) v = v * 10 + (c - '0');
    for (char c : fraction) v += (c - '0') * (scale /= 10);
    out->value = negative ? -v : v;
    return true;
  }
  uint64_t v = 0;
  for (char c : whole) {
    if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - (c - '0')) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out->index = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

}  // namespace

StatusOr<SplitSpec> ParseSplitSpec(std::string_view text) {
  SplitSpec spec;
  spec.text = std::string(text);
  if (text.find('+') != std::string_view::npos) {
    return InvalidArgumentError("split \"" + spec.text +
                                "\": unions of splits (+) are not supported; open one split at a time");
  }
  const size_t open = text.find('[');
  if (open == std::string_view::npos) {
    if (text.find(']') != std::string_view::npos) return Bad(text, "] without [");
    spec.name = spec.text;
    return spec;
  }
  const size_t close = text.find(']', open);
  if (close == std::string_view::npos) return Bad(text, "no closing ]");
  if (close + 1 != text.size()) return Bad(text, "text after the closing ]");
  spec.name = std::string(text.substr(0, open));
  const std::string_view inside = text.substr(open + 1, close - open - 1);
  const size_t colon = inside.find(':');
  if (colon == std::string_view::npos) return Bad(text, "one index; a slice is [FROM:TO]");
  if (inside.find(':', colon + 1) != std::string_view::npos) return Bad(text, "a step; a slice is [FROM:TO]");
  spec.sliced = true;
  for (const auto& [part, bound] :
       {std::pair{inside.substr(0, colon), &spec.from}, std::pair{inside.substr(colon + 1), &spec.to}}) {
    if (!ParseBound(part, bound)) {
      const bool shard = part.size() > 5 && part.substr(part.size() - 5) == "shard";
      return Bad(text, "\"" + std::string(part) + "\" is neither a sample number nor a percentage" +
                           (shard ? " (shard slices are not supported)" : ""));
    }
    if (bound->percent && std::fabs(bound->value) > 100) {
      return Bad(text, std::string(part) + " is outside -100%..100%");
    }
  }
  if (spec.from.set && spec.to.set && spec.from.percent != spec.to.percent) {
    return Bad(text, "FROM and TO mix a percentage and a sample number");
  }
  return spec;
}

StatusOr<SampleRange> ResolveSlice(const SplitSpec& spec, uint64_t n) {
  if (!spec.sliced) return SampleRange{0, n};
  const std::string where = "split \"" + spec.text + "\": ";
  // A boundary as a sample number from the start: TFDS's "closest" rounding
  // for a percentage (round(p * n / 100), halves to even: nearbyint in the
  // default rounding mode), Python's negative indices.
  auto resolve = [&](const SliceBound& b, uint64_t omitted, uint64_t* out) -> Status {
    if (!b.set) {
      *out = omitted;
      return Status::OK();
    }
    bool negative = b.index < 0;
    uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(b.index) : static_cast<uint64_t>(b.index);
    if (b.percent) {
      const double at = std::nearbyint(b.value * static_cast<double>(n) / 100.0);
      negative = at < 0;
      // |at| <= n but for the rounding of a huge n to a double: clamped before the conversion.
      const double m = std::fabs(at);
      magnitude = m >= static_cast<double>(n) ? n : static_cast<uint64_t>(m);
    } else if (magnitude > n) {
      return InvalidArgumentError(where + "sample " + std::to_string(b.index) + " is beyond the split's " +
                                  std::to_string(n) + " samples");
    }
    *out = negative ? n - magnitude : magnitude;
    return Status::OK();
  };
  SampleRange r;
  LIBSHARD_RETURN_IF_ERROR(resolve(spec.from, 0, &r.begin));
  LIBSHARD_RETURN_IF_ERROR(resolve(spec.to, n, &r.end));
  if (r.begin >= r.end) {
    return InvalidArgumentError(where + "selects no sample of the split's " + std::to_string(n) + " (samples " +
                                std::to_string(r.begin) + ".." + std::to_string(r.end) + ")");
  }
  return r;
}

namespace {

// "train, test" for messages.
std::string SplitNames(const libshard::Manifest& m) {
  std::string out;
  for (const auto& split : m.splits()) out += (out.empty() ? "" : ", ") + split.name();
  return out.empty() ? "none" : out;
}

}  // namespace

StatusOr<std::vector<const libshard::SplitEntry*>> Dataset::SelectSplits(const std::string& src,
                                                                         const libshard::Manifest& m) const {
  if (!m.complete()) {
    return InvalidArgumentError(src +
                                ": the manifest says its conversion is not complete (a --num-tasks task's "
                                "partial manifest); run `shard merge` on its folder and read the manifest.json "
                                "that writes");
  }
  const std::string& want = split_.name;
  if (want.empty() && m.splits_size() > 1) {
    return InvalidArgumentError(src + ": the manifest has splits " + SplitNames(m) +
                                "; pick one (split=NAME, or \"*\" for all)");
  }
  bool found_split = want.empty() || want == "*";
  std::vector<const libshard::SplitEntry*> out;
  for (const auto& split : m.splits()) {
    if (!found_split && split.name() != want) continue;
    if (split.name() == want) found_split = true;
    out.push_back(&split);
    if (split.name() == want) break;
  }
  if (!found_split) {
    return InvalidArgumentError(src + ": no split named \"" + want + "\" (the manifest has " + SplitNames(m) + ")");
  }
  return out;
}

StatusOr<std::vector<Dataset::ShardPart>> Dataset::SelectShards(
    const std::string& src, const std::vector<const libshard::SplitEntry*>& splits) const {
  uint64_t n = 0;
  for (const libshard::SplitEntry* split : splits) {
    for (const auto& sh : split->shards()) n += sh.records();
  }
  StatusOr<SampleRange> range = ResolveSlice(split_, n);
  if (!range.ok()) return range.status().WithContext(src);
  std::vector<ShardPart> out;
  uint64_t at = 0;  // the split's sample number of the shard's first record
  for (const libshard::SplitEntry* split : splits) {
    for (const auto& sh : split->shards()) {
      const uint64_t begin = std::max(at, range->begin), end = std::min(at + sh.records(), range->end);
      // Unsliced, every shard (an empty one too) as before; sliced, only
      // those the slice reaches.
      if (!split_.sliced || begin < end) out.push_back({&sh, begin - at, end - begin});
      at += sh.records();
    }
  }
  return out;
}

}  // namespace libshard::reader
