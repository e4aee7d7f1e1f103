#include "libshard/reader/dataset.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <limits>
#include <set>
#include <tuple>

#include "libshard/image/transform.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/shard_paths.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/store/object_store.h"
#include "libshard/util/sha256.h"
#include "libshard/util/strings.h"
#include "remote_shards.h"

namespace libshard::reader {
namespace {

using util::EndsWith;

constexpr size_t kLocal = std::numeric_limits<size_t>::max();  // remote_index_ of a local shard

}  // namespace

Dataset::Dataset() = default;
Dataset::~Dataset() = default;

Status Dataset::AddShard(const std::string& path, int64_t expected_records, const std::string& source, uint64_t first,
                         int64_t count, uint64_t expected_bytes) {
  // One read per file, whatever the spelling: the same folder twice, a
  // manifest and one of its shards, a symbolic link and its target.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    const std::pair<uint64_t, uint64_t> id{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
    const std::string here = source == path ? path : source + " (" + path + ")";
    auto [it, fresh] = files_.emplace(id, here);
    if (!fresh) {
      return InvalidArgumentError(here + " and " + it->second +
                                  " are the same file: each shard may be named once (drop one of the sources)");
    }
  }  // else: ShardReader::Open names the problem
  // With the manifest's count the record table waits for the first read of
  // the shard (ShardReader::OpenWithCount): an open reads no .idx.
  std::unique_ptr<ShardReader> shard;
  if (expected_records >= 0) {
    LIBSHARD_ASSIGN_OR_RETURN(shard,
                              ShardReader::OpenWithCount(path, static_cast<uint64_t>(expected_records), options_.shard));
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(shard, ShardReader::Open(path, options_.shard));
  }
  if (expected_bytes > 0 && shard->file_size() != expected_bytes) {
    return DataLossError(path + ": " + std::to_string(shard->file_size()) + " bytes, the manifest says " +
                         std::to_string(expected_bytes));
  }
  if (starts_.empty()) starts_.push_back(0);
  starts_.push_back(starts_.back() + (count < 0 ? shard->size() : static_cast<uint64_t>(count)));
  first_.push_back(first);
  shards_.push_back(std::move(shard));
  paths_.push_back(path);
  remote_index_.push_back(kLocal);
  return Status::OK();
}

Status Dataset::AddManifest(const std::string& src, const std::string& source) {
  LIBSHARD_ASSIGN_OR_RETURN(libshard::Manifest m, manifest::ReadManifest(src));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<const libshard::SplitEntry*> splits, SelectSplits(src, m));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<ShardPart> parts, SelectShards(src, splits));
  const std::filesystem::path dir = std::filesystem::path(src).parent_path();
  for (const ShardPart& p : parts) {
    LIBSHARD_RETURN_IF_ERROR(AddShard((dir / p.shard->file()).string(), static_cast<int64_t>(p.shard->records()),
                                      source, p.first, static_cast<int64_t>(p.count), p.shard->bytes()));
    if (!p.shard->labels_file().empty()) labels_files_[shards_.size() - 1] = (dir / p.shard->labels_file()).string();
  }
  AddManifestMetadata(src, m, splits);
  return Status::OK();
}

void Dataset::AddManifestMetadata(const std::string& src, const libshard::Manifest& m,
                                  const std::vector<const libshard::SplitEntry*>& splits) {
  if (labels_.empty()) {
    for (const auto& l : m.labels()) labels_.push_back({l.label(), l.name()});
  }
  std::set<std::string> keys, listed;  // required ones: every record has them
  for (const auto& f : m.schema()) {
    if (f.required()) keys.insert(f.key());
    listed.insert(f.key());
    if (f.list()) list_features_.insert(f.key());
  }
  auto intersect = [](std::set<std::string>* a, const std::set<std::string>& b) {
    std::set<std::string> both;
    std::set_intersection(a->begin(), a->end(), b.begin(), b.end(), std::inserter(both, both.begin()));
    *a = std::move(both);
  };
  if (m.schema_size() == 0) {
    schema_known_ = false;  // an older manifest without a schema
  } else if (!schema_seen_) {
    schema_ = std::move(keys);
    listed_ = std::move(listed);
    schema_seen_ = true;
  } else {
    intersect(&schema_, keys);
    intersect(&listed_, listed);
  }
  AddStoredShape(src, m, splits);
  for (const libshard::SplitEntry* split : splits) {
    const auto& ch = split->stats().channels();
    if (split->records() == 0) continue;
    if (ch.empty() || (!moment_n_.empty() && moment_n_.size() != static_cast<size_t>(ch.size()))) {
      moments_ok_ = false;
      continue;
    }
    moment_n_.resize(ch.size());
    moment_1_.resize(ch.size());
    moment_2_.resize(ch.size());
    for (int c = 0; c < ch.size(); ++c) {
      const double n = static_cast<double>(ch[c].count());
      moment_n_[c] += n;
      moment_1_[c] += n * ch[c].mean();
      moment_2_[c] += n * (ch[c].std() * ch[c].std() + ch[c].mean() * ch[c].mean());
    }
  }
}

// The output size of each source size, through the conversion's own
// geometry (image::PlanGeometry), and the channels from the pixel counts.
void Dataset::AddStoredShape(const std::string& src_name, const libshard::Manifest& m,
                             const std::vector<const libshard::SplitEntry*>& splits) {
  const libshard::ConversionOptions& o = m.options();
  uint64_t records = 0;
  std::map<std::string, uint64_t> sources;  // "WxH" -> samples
  std::vector<uint64_t> counts;             // pixels per channel index
  bool jpeg = false;
  for (const libshard::SplitEntry* split : splits) {
    records += split->records();
    const libshard::DatasetStats& st = split->stats();
    for (const auto& f : st.source_sizes()) sources[f.name()] += f.count();
    for (const auto& f : st.source_formats()) jpeg = jpeg || (f.name() == "jpeg" && f.count() > 0);
    if (counts.size() < static_cast<size_t>(st.channels_size())) counts.resize(st.channels_size());
    for (int c = 0; c < st.channels_size(); ++c) counts[c] += st.channels(c).count();
  }
  const int channels =
      !counts.empty() && counts.front() > 0 && counts.front() == counts.back() ? static_cast<int>(counts.size()) : 0;
  if (!channel_set_) {
    stored_.channels = channels;
    channel_set_ = true;
  } else if (stored_.channels != channels) {
    stored_.channels = 0;
  }
  if (records == 0) return;  // nothing stored: no size to agree or disagree
  auto mode = image::ParseResizeMode(o.resize_mode());
  image::TransformSpec spec;
  spec.mode = mode.ok() ? *mode : image::ResizeMode::kNone;
  spec.width = o.width();
  spec.height = o.height();
  if (!o.crop().empty()) {
    image::PixelRect c;
    if (std::sscanf(o.crop().c_str(), "%d,%d,%d,%d", &c.x, &c.y, &c.width, &c.height) != 4) {
      unknown_sizes_ = src_name + ": its crop \"" + o.crop() + "\" is not X,Y,W,H";
      return;
    }
    spec.crop = c;
  }
  const bool fixed = mode.ok() && spec.mode != image::ResizeMode::kNone && spec.mode != image::ResizeMode::kKeepRatio &&
                     spec.width > 0 && spec.height > 0;
  if (!mode.ok()) {
    unknown_sizes_ = src_name + ": its resize mode \"" + o.resize_mode() + "\" is unknown to this reader";
    return;
  }
  if (fixed) {
    sizes_[std::to_string(spec.width) + "x" + std::to_string(spec.height)] += records;
    return;
  }
  if (sources.empty()) {
    unknown_sizes_ = src_name + " records no image sizes";
    return;
  }
  for (const auto& [name, count] : sources) {
    int w = 0, h = 0;
    if (std::sscanf(name.c_str(), "%dx%d", &w, &h) != 2 || w < 1 || h < 1) continue;
    auto out = [&](int sw, int sh) -> std::string {
      auto g = image::PlanGeometry(sw, sh, spec);
      if (!g.ok()) return "";
      return std::to_string(g->out_width) + "x" + std::to_string(g->out_height);
    };
    const std::string a = out(w, h);
    if (!a.empty()) sizes_[a] += count;
    // An EXIF-rotated JPEG is stored turned (its source size is counted as
    // stored in the file): both are possible.
    if (jpeg && o.apply_orientation() && w != h) {
      const std::string b = out(h, w);
      if (!b.empty() && b != a) sizes_.emplace(b, 0);
    }
  }
}

namespace {

// A folder the converter writes to (its .libshard/ state) but without a
// manifest.json: a conversion that did not finish, or task outputs not merged.
Status CheckFinishedConversion(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path state = fs::path(dir) / ".libshard";
  if (!fs::is_directory(state, ec)) return Status::OK();
  bool tasks = false;
  for (fs::directory_iterator it(state, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    tasks = tasks || util::StartsWith(name, "manifest.task-");
  }
  if (tasks) {
    return InvalidArgumentError(dir +
                                ": task outputs of `shard convert --num-tasks` not merged yet (no manifest.json, "
                                "partial manifests in .libshard/); run `shard merge " +
                                dir + "` first");
  }
  return InvalidArgumentError(dir +
                              ": a `shard convert` that did not finish (no manifest.json, the converter's "
                              ".libshard/ state is there); rerun the same command to finish it (`shard verify " +
                              dir + "` says what is there)");
}

}  // namespace

Status Dataset::AddPlain(const std::string& src) {
  std::error_code ec;
  const bool file = std::filesystem::is_regular_file(src, ec);
  const bool folder = !file && std::filesystem::is_directory(src, ec);
  if (folder) LIBSHARD_RETURN_IF_ERROR(CheckFinishedConversion(src));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ExpandPaths({src}));
  if (!file) {
    // A folder or a glob: its numbered shards must form whole sets.
    const std::vector<io::NumberedSetGap> gaps = io::FindIncompleteNumberedSets(files);
    if (!gaps.empty()) {
      std::string more = gaps.size() > 1 ? " (and " + std::to_string(gaps.size() - 1) + " more)" : "";
      return InvalidArgumentError(src + ": " + gaps.front().path + ": " + gaps.front().message + more +
                                  "; a conversion that did not finish, or `shard convert --num-tasks` outputs not "
                                  "merged: run `shard verify " +
                                  src +
                                  "` (or `shard merge` on the output folder), "
                                  "or name the shard files to read");
    }
  }
  for (const auto& f : files) LIBSHARD_RETURN_IF_ERROR(AddShard(f, -1, src));
  return Status::OK();
}

const std::vector<KeyRole>& KeyRoles() {
  static const std::vector<KeyRole> roles = {{"image", &KeyMap::image},
                                             {"label", &KeyMap::label},
                                             {"format", &KeyMap::format},
                                             {"shape", &KeyMap::shape},
                                             {"dtype", &KeyMap::dtype},
                                             {"mask", &KeyMap::mask},
                                             {"mask_format", &KeyMap::mask_format}};
  return roles;
}

std::string* KeyForRole(KeyMap* keys, std::string_view name) {
  for (const KeyRole& r : KeyRoles()) {
    if (name == r.name) return &(keys->*r.field);
  }
  return nullptr;
}

Status Dataset::CheckKeys() const {
  if (!schema_known_ || !schema_seen_) return Status::OK();
  const KeyMap& k = options_.keys;
  const KeyMap defaults;
  for (const KeyRole& r : KeyRoles()) {
    const char* role = r.name;
    const std::string* key = &(k.*r.field);
    const std::string* default_key = &(defaults.*r.field);
    // The converter's keys are in every schema it writes; a key the caller
    // changed must be there too.
    if (*key == *default_key || listed_.count(*key) > 0) continue;
    std::string have;
    for (const std::string& l : listed_) have += (have.empty() ? "" : ", ") + l;
    return InvalidArgumentError(std::string("keys: the ") + role + " key \"" + *key +
                                "\" is not in the manifest's schema (its keys: " + (have.empty() ? "none" : have) +
                                ")");
  }
  return Status::OK();
}

Status Dataset::AddSource(const std::string& src, bool* any_manifest) {
  if (store::IsObjectUrl(src)) {  // s3://, https://: remote_dataset.cc
    *any_manifest = true;
    return AddRemote(src);
  }
  std::string manifest;
  std::error_code ec;
  if (EndsWith(src, ".json")) {
    manifest = src;
  } else if (std::filesystem::is_directory(src, ec) &&
             std::filesystem::is_regular_file(manifest::ManifestInFolder(src), ec)) {
    manifest = manifest::ManifestInFolder(src);  // the converter's output folder
  }
  if (manifest.empty()) {
    schema_known_ = false;
    plain_ = true;
    unknown_sizes_ = src + " has no manifest.json to record them";
    return AddPlain(src);
  }
  *any_manifest = true;
  return AddManifest(manifest, src);
}

Status Dataset::Finish(bool any_manifest) {
  if (!options_.split.empty() && !any_manifest) {
    return InvalidArgumentError("split \"" + options_.split +
                                "\" needs a manifest.json (or a folder holding one); the sources are plain shards");
  }
  if (starts_.empty()) starts_.push_back(0);
  if (!any_manifest) schema_known_ = false;
  LIBSHARD_RETURN_IF_ERROR(CheckKeys());
  FinishStoredShape();
  if (moments_ok_ && !plain_) {
    for (size_t c = 0; c < moment_n_.size(); ++c) {
      const double n = moment_n_[c];
      if (n <= 0) {
        channel_stats_.clear();
        break;
      }
      const double mean = moment_1_[c] / n;
      channel_stats_.push_back({mean, std::sqrt(std::max(0.0, moment_2_[c] / n - mean * mean))});
    }
  }
  return Status::OK();
}

StatusOr<std::unique_ptr<Dataset>> Dataset::Open(const std::vector<std::string>& sources,
                                                 const DatasetOptions& options) {
  if (sources.empty()) return InvalidArgumentError("no shards given");
  LIBSHARD_ASSIGN_OR_RETURN(std::optional<std::string> mixture_file, FindMixtureFile(sources));
  if (mixture_file) return OpenMixtureFile(*mixture_file, options);
  std::unique_ptr<Dataset> ds(new Dataset());
  LIBSHARD_RETURN_IF_ERROR(ds->Init(options));
  bool any_manifest = false;
  for (const std::string& src : sources) LIBSHARD_RETURN_IF_ERROR(ds->AddSource(src, &any_manifest));
  LIBSHARD_RETURN_IF_ERROR(ds->Finish(any_manifest));
  return ds;
}

Status Dataset::Init(const DatasetOptions& options) {
  options_ = options;
  LIBSHARD_ASSIGN_OR_RETURN(split_, ParseSplitSpec(options.split));
  if (options.max_open_files < 1) return InvalidArgumentError("max_open_files must be at least 1");
  if (options.shard.io == IoMode::kPread && options.shard.open_files == nullptr) {
    options_.shard.open_files = std::make_shared<io::OpenFileCache>(options.max_open_files);
  }
  return Status::OK();
}

void Dataset::FinishStoredShape() {
  std::vector<std::pair<std::string, uint64_t>> by_count(sizes_.begin(), sizes_.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  for (size_t i = 0; i < by_count.size() && i < 5; ++i) list += (i ? ", " : "") + by_count[i].first;
  if (by_count.size() > 5) list += ", ...";
  if (!unknown_sizes_.empty()) {
    stored_.unknown = unknown_sizes_;
    if (plain_) stored_.channels = 0;
    return;
  }
  stored_.sizes = list.empty() ? "none (no samples)" : list;
  if (by_count.size() == 1) {
    std::sscanf(by_count[0].first.c_str(), "%dx%d", &stored_.width, &stored_.height);
  }
}

std::optional<bool> Dataset::HasFeature(const std::string& key) const {
  if (!schema_known_) return std::nullopt;
  return schema_.count(key) > 0;
}

Dataset::Location Dataset::Locate(uint64_t sample) const {
  // starts_ is sorted; find the last start <= sample among non-empty shards.
  auto it = std::upper_bound(starts_.begin(), starts_.end(), sample);
  size_t shard = static_cast<size_t>(it - starts_.begin()) - 1;
  return {shard, static_cast<size_t>(sample - starts_[shard] + first_[shard])};
}

Status Dataset::ReadRecord(uint64_t sample, RecordBuffer* buf, std::string_view* out, uint64_t* offset,
                           bool planned) const {
  if (sample >= size()) {
    return OutOfRangeError("sample " + std::to_string(sample) + " of a dataset of " + std::to_string(size()));
  }
  const Location loc = Locate(sample);
  const size_t r = remote_index_[loc.shard];
  if (r == kLocal) {
    const ShardReader& shard = *shards_[loc.shard];
    if (offset != nullptr) *offset = shard.entry(loc.record).offset;
    return shard.ReadCopy(loc.record, buf, out);
  }
  LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<const ShardReader> shard, remote_->Acquire(r, planned));
  if (offset != nullptr) *offset = shard->entry(loc.record).offset;
  return shard->ReadCopy(loc.record, buf, out);
}

StatusOr<std::shared_ptr<const ShardReader>> Dataset::OpenShard(size_t i) const {
  if (remote_index_[i] == kLocal) return shards_[i];
  return remote_->Acquire(remote_index_[i], /*count_read=*/false);
}

uint64_t Dataset::downloads() const { return remote_ == nullptr ? 0 : remote_->downloads(); }

void Dataset::CancelTransfers() const {
  if (remote_ != nullptr) remote_->Cancel();
}

namespace {

// The remote shard of each read of `order`'s batches first_batch.. (kLocal
// for a local shard's).
std::vector<size_t> ReadsOf(const Dataset& ds, const std::vector<size_t>& remote_index, const SampleOrder& order,
                            const std::vector<uint64_t>& samples, uint64_t first_batch, uint64_t start = 0) {
  std::vector<size_t> reads;
  for (uint64_t b = first_batch; b < order.batches_per_epoch(start); ++b) {
    const SampleOrder::Range range = order.BatchRange(b, start);
    for (size_t k = range.begin; k < range.end && k < samples.size(); ++k) {
      reads.push_back(remote_index[ds.Locate(samples[k]).shard]);
    }
  }
  return reads;
}

// Reads of one shard further apart than this start another stretch of it:
// a block-shuffle window mixes window_blocks blocks, so reads of one block
// are at most that far apart; sequential reads are consecutive; a global
// shuffle reads every shard all through the epoch (one stretch each: the
// first-touch order).
size_t GapOf(const OrderOptions& o) {
  switch (o.kind) {
    case OrderKind::kBlockShuffle:
      return o.block_size * std::max<size_t>(o.window_blocks, 1);
    case OrderKind::kShuffle:
      return std::numeric_limits<size_t>::max() / 2;
    case OrderKind::kSequential:
      break;
  }
  return o.batch_size;
}

// Block shuffle: how many blocks' shards can be resident at once in any
// epoch. RemoteShards::Plan keeps a shard in use from the first to the last
// read of a stretch (reads at most G = max(gap, batch) apart), so whatever is
// in use at a batch was read in the G reads that end with it: for one worker
// G consecutive positions of the rank's order, for W workers the rank's
// positions from the first of the ceil(G / batch) + 1 batches those reads
// span; with R ranks a rank's batch j is a slice of global batch j, so L
// positions of its order span (ceil(L / batch) + 1) global batches of R *
// batch positions of the epoch's order. A window of the order holds window_blocks blocks and (bar the one
// holding a short last block, and the order's last) block_size *
// window_blocks positions, so such a stretch overlaps at most
// ceil((L - 1) / window) + 1 windows, one more for a short block, one more
// where a rank's part wraps round to the order's start (padding).
uint64_t BlocksAtOnce(const SampleOrder& order) {
  const OrderOptions& o = order.options();
  const uint64_t n = order.dataset_size(), b = std::max<uint64_t>(o.batch_size, 1);
  const uint64_t window = static_cast<uint64_t>(o.block_size) * o.window_blocks;
  const uint64_t g = std::max<uint64_t>(window, b);
  const uint64_t workers = static_cast<uint64_t>(o.num_workers);
  const uint64_t rank_span = workers == 1 ? g : ((g + b - 1) / b * workers + 1) * b;
  const uint64_t ranks = static_cast<uint64_t>(o.world_size);
  const uint64_t span = ranks == 1 ? rank_span : ((rank_span + b - 1) / b + 1) * b * ranks;
  uint64_t windows = (span - 1 + window - 1) / window + 1;
  if (n % o.block_size != 0) ++windows;
  if (order.samples_per_rank() * static_cast<uint64_t>(o.world_size) > n) ++windows;
  const uint64_t blocks = (n + o.block_size - 1) / o.block_size;
  return std::min(blocks, windows * o.window_blocks);
}

}  // namespace

Status Dataset::CheckReadOrder(const SampleOrder& order) const {
  // A limit too small for the order is a configuration error, told when the loader is made.
  const Status s = CheckReadOrderBytes(order);
  if (s.code() == StatusCode::kResourceExhausted) return InvalidArgumentError(std::string(s.message()));
  return s;
}

Status Dataset::CheckReadOrderBytes(const SampleOrder& order) const {
  if (remote_ == nullptr || size() == 0) return Status::OK();
  const OrderOptions& o = order.options();
  LIBSHARD_RETURN_IF_ERROR(remote_->Plan(ReadsOf(*this, remote_index_, order, order.EpochSamples(0), 0), o.batch_size,
                                         GapOf(o), o.kind == OrderKind::kShuffle,
                                         /*check_only=*/true));
  // Sequential reads are the same every epoch; a shuffle's differ, so the
  // limit must hold the most any epoch can need.
  const uint64_t limit = options_.cache_limit;
  if (o.kind == OrderKind::kSequential || limit == 0) return Status::OK();
  std::vector<uint64_t> sizes;  // of the remote shards with records
  for (size_t i = 0; i < shards_.size(); ++i) {
    if (remote_index_[i] != kLocal && starts_[i + 1] > starts_[i])
      sizes.push_back(remote_->CacheBytes(remote_index_[i]));
  }
  std::sort(sizes.begin(), sizes.end(), std::greater<uint64_t>());
  uint64_t all = 0;
  for (uint64_t b : sizes) all += b;
  if (all <= limit) return Status::OK();  // never streams
  const uint64_t largest = sizes.empty() ? 0 : sizes[0];
  if (o.kind == OrderKind::kShuffle) {
    // An epoch's part may read any shard: as many as it has samples.
    uint64_t most = 0;
    for (size_t i = 0; i < sizes.size() && i < order.samples_per_rank(); ++i) most += sizes[i];
    if (most <= limit) return Status::OK();
    return ResourceExhaustedError(
        "cache " + remote_->cache().dir() + ": cache_limit " + std::to_string(limit) +
        " bytes cannot hold the shards a global shuffle may read in some epoch (up to " + std::to_string(most) +
        " bytes: any sample of this part may come from any shard); stream them with block shuffle "
        "(OrderKind::kBlockShuffle; Python order=\"block-shuffle\"), or raise cache_limit");
  }
  if (mixture_ != nullptr) {  // BlocksAtOnce() counts the blocks of one dataset, not of interleaved ones
    return ResourceExhaustedError("cache " + remote_->cache().dir() + ": cache_limit " + std::to_string(limit) +
                                  " bytes is less than a mixture's remote shards (" + std::to_string(all) +
                                  " bytes): a mixture streams with a sequential or shuffled order only; raise "
                                  "cache_limit to at least " +
                                  std::to_string(all) + " or use another order");
  }
  // Block shuffle: the shards of the BlocksAtOnce() blocks with the most
  // bytes, plus the largest shard downloading ahead.
  std::vector<uint64_t> footprint;
  for (uint64_t begin = 0; begin < size(); begin += o.block_size) {
    const uint64_t end = std::min<uint64_t>(size(), begin + o.block_size);
    uint64_t bytes = 0;
    for (size_t i = Locate(begin).shard; i <= Locate(end - 1).shard; ++i) {
      if (remote_index_[i] != kLocal && starts_[i + 1] > starts_[i]) bytes += remote_->CacheBytes(remote_index_[i]);
    }
    footprint.push_back(bytes);
  }
  const size_t k = static_cast<size_t>(BlocksAtOnce(order));
  std::partial_sort(footprint.begin(), footprint.begin() + k, footprint.end(), std::greater<uint64_t>());
  uint64_t need = 0;
  for (size_t i = 0; i < k; ++i) need += footprint[i];
  need = std::min(need, all) + largest;
  if (need <= limit) return Status::OK();
  return ResourceExhaustedError(
      "cache " + remote_->cache().dir() + ": cache_limit " + std::to_string(limit) +
      " bytes cannot hold what block shuffle (block_size " + std::to_string(o.block_size) + ", window_blocks " +
      std::to_string(o.window_blocks) + ") may need resident at once in some epoch: the shards of " +
      std::to_string(k) + " blocks plus one downloading ahead, up to " + std::to_string(need) +
      " bytes; raise cache_limit to at least " + std::to_string(need) + ", or lower block_size or window_blocks");
}

Status Dataset::PlanEpoch(const SampleOrder& order, const EpochOrder& epoch, uint64_t first_batch,
                          uint64_t start) const {
  if (remote_ == nullptr || size() == 0) return Status::OK();
  const OrderOptions& o = order.options();
  const std::vector<uint64_t> epoch_samples = order.RankSamples(epoch, start);  // remote only: O(part)
  return remote_->Plan(ReadsOf(*this, remote_index_, order, epoch_samples, first_batch, start), o.batch_size, GapOf(o),
                       o.kind == OrderKind::kShuffle, /*check_only=*/false);
}

std::string Dataset::Identity() const {
  std::string text = "libshard dataset 1\n" + std::to_string(size()) + "\n";
  for (size_t i = 0; i < shards_.size(); ++i) {
    const std::string& path = paths_[i];
    text += path.substr(path.find_last_of('/') + 1) + "\t" + std::to_string(starts_[i + 1] - starts_[i]);
    // A slice that starts inside a shard (a split unsliced keeps its identity).
    text += (first_[i] == 0 ? "" : "\t@" + std::to_string(first_[i])) + "\n";
  }
  return util::Sha256Hex(text).substr(0, 16);
}

}  // namespace libshard::reader
