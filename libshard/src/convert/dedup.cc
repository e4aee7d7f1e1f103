// --dedup (converter.h's dedup_within, dedup_across): the first pass that
// fingerprints the images, and the decisions, in the listing's order
// (converter_internal.h, DecideDuplicates).
//
// The rule is greedy in the listing's canonical order (split, then path):
// an image is dropped when it duplicates an image kept before it, so every
// reject names a stored image, no two kept images of a split are duplicates
// (the leak check then finds no pair within a split), and the decisions
// depend on the listing and the options alone, never on the plan's shuffle
// or the thread count. The search is the incremental FingerprintIndex
// (duplicate_index.h) over the kept images only: each image looked up
// before it is added, so no pair list (and no cap on one) is needed.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <memory>
#include <set>

#include "convert/converter_internal.h"
#include "libshard/convert/duplicate_index.h"
#include "libshard/text_escape.h"
#include "util/catch_status.h"

namespace libshard::convert {

namespace {
constexpr char kTrain[] = "train";
}  // namespace

Status ParseDedup(std::string_view text, ConvertOptions* options) {
  bool within = false, across = false;
  auto bad = [&text] {
    return InvalidArgumentError("--dedup must be within, across or within,across, not '" + EscapeText(text) + "'");
  };
  if (!text.empty()) {
    size_t start = 0;
    while (true) {
      const size_t comma = text.find(',', start);
      const std::string_view word = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
      bool* flag = word == "within" ? &within : word == "across" ? &across : nullptr;
      if (flag == nullptr || *flag) return bad();
      *flag = true;
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  options->dedup_within = within;
  options->dedup_across = across;
  return Status::OK();
}

std::string DedupName(const ConvertOptions& o) {
  if (o.dedup_within && o.dedup_across) return "within,across";
  if (o.dedup_within) return "within";
  if (o.dedup_across) return "across";
  return "";
}

namespace internal {
namespace {

// The images kept so far of one split, as the references later images are
// looked up among: by exact key, and by perceptual hashes.
class KeptImages {
 public:
  KeptImages(int distance, uint64_t expected) : near_(distance, expected) {}

  // "duplicate of FILE<where> (exact: equal pixels)" or "(near: perceptual
  // hashes N bits apart)" for the first kept image that `f` duplicates (an
  // equal key first), else "".
  std::string DuplicateOf(const ImageFingerprint& f, const Listing& listing, const std::string& where) const {
    if (auto it = exact_.find(f.key_sha256); it != exact_.end()) {
      return "duplicate of " + listing.samples[it->second].path + where + " (exact: equal pixels)";
    }
    uint32_t first = UINT32_MAX;
    int distance = 0;
    near_.ForEachNear(f, [&](uint32_t id, int d) {  // increasing ids: the first call is the first kept
      if (id < first) {
        first = id;
        distance = d;
      }
    });
    if (first == UINT32_MAX) return "";
    return "duplicate of " + listing.samples[samples_[first]].path + where + " (near: perceptual hashes " +
           std::to_string(distance) + " bits apart)";
  }

  void Add(uint32_t sample, const ImageFingerprint& f) {
    exact_.emplace(f.key_sha256, sample);
    near_.Add(f);
    samples_.push_back(sample);
  }

 private:
  std::map<std::string, uint32_t> exact_;  // key -> listing sample
  FingerprintIndex near_;                  // ids index samples_
  std::vector<uint32_t> samples_;
};

// One sample as the decisions see it.
struct Seen {
  uint32_t sample = 0;
  // From a shard kept from an earlier run: its decision stands (stored when
  // its entry has its fingerprints, dropped or rejected otherwise).
  bool kept_shard = false;
  const ImageFingerprint* print = nullptr;  // null: not stored
  Status status;                            // a sample to convert whose encode failed
};

}  // namespace

Status CheckDedupSplits(const ConvertOptions& o, const Listing& listing) {
  if (!o.dedup_across || listing.samples.empty()) return Status::OK();
  if (std::find(listing.splits.begin(), listing.splits.end(), kTrain) != listing.splits.end()) return Status::OK();
  std::string splits;
  for (const std::string& s : listing.splits) splits += (splits.empty() ? "" : ", ") + EscapeText(s);
  return InvalidArgumentError("--dedup across keeps the split named train and drops its copies from the others, but " +
                              o.input + " has no train split (its splits: " + splits + ")");
}

StatusOr<PreRejects> DecideDuplicates(const ConvertOptions& o, const EncodeOptions& encode, const Listing& listing,
                                      const ShardPlan& plan, const std::vector<size_t>& todo,
                                      const std::vector<ShardEntry>& kept, int threads) {
  // Which samples this run converts, and the fingerprints of the images the
  // kept shards stored (by escaped path, as their entries name them).
  std::vector<char> converts(listing.samples.size(), 0);
  for (size_t pos : todo) {
    for (uint32_t i : plan.shards[pos].samples) converts[i] = 1;
  }
  std::map<std::string, const ShardEntry*> kept_by_file;
  for (const ShardEntry& e : kept) kept_by_file[e.file()] = &e;
  std::vector<DuplicateImage> stored;
  std::vector<std::pair<uint32_t, std::string>> kept_samples;  // (sample, escaped path)
  for (const PlannedShard& s : plan.shards) {
    auto it = kept_by_file.find(s.file);
    if (it == kept_by_file.end()) continue;
    LIBSHARD_RETURN_IF_ERROR(AppendDuplicateImages(*it->second, &stored));
    for (uint32_t i : s.samples) kept_samples.emplace_back(i, EscapeText(listing.samples[i].path));
  }
  std::map<std::string, const ImageFingerprint*> stored_by_file;
  for (const DuplicateImage& img : stored) stored_by_file[img.file] = &img.fingerprint;
  std::map<uint32_t, const ImageFingerprint*> kept_print;  // kept shards' samples -> stored print or null
  for (const auto& [i, file] : kept_samples) {
    auto it = stored_by_file.find(file);
    kept_print[i] = it == stored_by_file.end() ? nullptr : it->second;
  }

  // The splits in the listing's order, train first with dedup_across: its
  // kept images are what the other splits are looked up among.
  std::map<std::string, std::vector<uint32_t>> by_split;
  for (uint32_t i = 0; i < listing.samples.size(); ++i) by_split[listing.samples[i].split].push_back(i);
  std::vector<std::string> order;
  if (o.dedup_across && by_split.count(kTrain)) order.push_back(kTrain);
  for (const auto& [name, samples] : by_split) {
    if (!(o.dedup_across && name == kTrain)) order.push_back(name);
  }

  PreRejects out;
  std::unique_ptr<KeptImages> train;
  tbb::task_arena arena(threads);
  for (const std::string& split : order) {
    const std::vector<uint32_t>& samples = by_split[split];
    const bool is_train = split == kTrain;
    // The first pass: this split's samples to convert, fingerprinted as the
    // conversion will (one sample per thread in flight).
    std::vector<Seen> seen(samples.size());
    std::vector<size_t> fresh;
    for (size_t k = 0; k < samples.size(); ++k) {
      seen[k].sample = samples[k];
      if (converts[samples[k]]) {
        fresh.push_back(k);
      } else if (auto it = kept_print.find(samples[k]); it != kept_print.end()) {
        seen[k].kept_shard = true;
        seen[k].print = it->second;
      }
    }
    std::vector<ImageFingerprint> prints(fresh.size());
    LIBSHARD_RETURN_IF_ERROR(util::CatchAsStatus(
        [&] {
          arena.execute([&] {
            tbb::parallel_for(tbb::blocked_range<size_t>(0, fresh.size(), 1), [&](const tbb::blocked_range<size_t>& r) {
              for (size_t j = r.begin(); j < r.end(); ++j) {
                Seen& s = seen[fresh[j]];
                s.status = util::CatchAsStatus(
                    [&] {
                      EncodedSample e;
                      StatsAccumulator stats;
                      uint64_t bytes_read = 0;
                      LIBSHARD_RETURN_IF_ERROR(EncodeListedSample(listing, encode, s.sample, &e, &stats, &bytes_read));
                      prints[j] = std::move(e.fingerprint);
                      return Status::OK();
                    },
                    [] { return "decoding the image"; });
                if (s.status.ok()) s.print = &prints[j];
              }
            });
          });
          return Status::OK();
        },
        [] { return "fingerprinting the images for --dedup"; }));

    // The decisions, in the listing's order.
    std::unique_ptr<KeptImages> local;
    KeptImages* mine = nullptr;  // this split's kept images, when something looks them up
    if (is_train && o.dedup_across) {
      train = std::make_unique<KeptImages>(o.leak_distance, samples.size());
      mine = train.get();
    } else if (o.dedup_within) {
      local = std::make_unique<KeptImages>(o.leak_distance, samples.size());
      mine = local.get();
    }
    for (const Seen& s : seen) {
      if (!s.kept_shard && !s.status.ok()) {
        out[s.sample] = PreReject{s.status.message(), IsTransient(s.status), false};
        continue;
      }
      if (s.print == nullptr) continue;
      if (!s.kept_shard) {
        std::string why;
        if (o.dedup_across && !is_train && train != nullptr) why = train->DuplicateOf(*s.print, listing, " in train");
        if (why.empty() && o.dedup_within) why = mine->DuplicateOf(*s.print, listing, "");
        if (!why.empty()) {
          out[s.sample] = PreReject{std::move(why), false, true};
          continue;
        }
      }
      if (mine != nullptr) mine->Add(s.sample, *s.print);
    }
  }
  return out;
}

}  // namespace internal
}  // namespace libshard::convert
