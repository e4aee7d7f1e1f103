// Dataset: an ordered set of shards opened for training, addressed by a
// global sample number (shards in the given order, records in file order),
// with the Example keys to read labels and images from.
//
//   DatasetOptions opts;
//   LIBSHARD_ASSIGN_OR_RETURN(auto ds, Dataset::Open({"out/manifest.json"}, opts));   // split "train"
//   LIBSHARD_ASSIGN_OR_RETURN(auto ds2, Dataset::Open({"out/*.tfrecord"}, opts));     // a glob
//   RecordBuffer buf;
//   std::string_view rec;
//   LIBSHARD_RETURN_IF_ERROR(ds->ReadRecord(12345, &buf, &rec));
//
// Sources, each argument one of:
//   - a file ending in ".json": the converter's manifest.json (manifest.proto,
//     format "libshard.manifest/1"; other formats are refused). The shards of
//     `options.split` are opened, in manifest order, relative to the
//     manifest's folder; the label map comes with it and each shard's record
//     count is checked against the manifest;
//   - a folder holding a manifest.json (the converter's output): that manifest;
//   - a shard file, another folder (its shards, recursively, sorted) or a glob,
//     as `shard verify` expands them (io/shard_paths.h ExpandPaths);
//   - an object-store URL: "s3://BUCKET/PREFIX" (the folder holding
//     manifest.json), "s3://BUCKET/PREFIX/NAME.json", or the same over
//     "https://" (store/object_store.h; configured from AWS_* variables).
//     The manifest is fetched and planned from (no LIST): sizes, sample
//     numbers and the label map come from it, and nothing else is
//     downloaded at Open. Each shard (and its .idx) is downloaded whole into
//     the cache (`cache_dir`, store/shard_cache.h) when first needed --
//     checked against the manifest's size and CRC-32C as it arrives
//     (DataLoss naming the object otherwise) -- and read from there like a
//     local file. A read of a shard not resident yet waits for its download
//     (or starts it); a failed download is the error of its reads, naming
//     the object. A loader tells the dataset its order (PlanEpoch()): shards
//     are then downloaded in first-touch order, download_threads at once, a
//     bounded window ahead of the reads; shards the loader's part never
//     reads are not downloaded. Complete cached shards are reused (no
//     request for them). Without a `cache_limit` (or when the part fits
//     under it) shards stay resident once read, so later epochs make no
//     requests. Over a part larger than the limit, shards stream: each is
//     unpinned (evictable) once its stretch of reads is done; sequential and
//     block-shuffle orders only (a global shuffle is refused naming block
//     shuffle), and a limit that cannot hold one batch's shards plus one
//     ahead is refused (CheckReadOrder()). A limit below the largest shard is
//     refused at Open (InvalidArgument naming cache_limit).
// A source that does not exist (a missing file, folder or manifest, a glob
// matching nothing) is NotFound naming it.
// Each shard file is read once: two sources that reach the same file (by
// device and inode: the same folder twice, a manifest and one of its shards,
// a glob and its folder, a symbolic link and its target) are InvalidArgument
// naming both and the file.
// Unfinished conversions are refused (InvalidArgument naming the source), so
// that only what a complete manifest.json lists is read:
//   - a manifest whose `complete` is false (a `--num-tasks` task's partial
//     manifest): run `shard merge`;
//   - a folder without manifest.json that holds the converter's `.libshard/`
//     state (a conversion killed before its manifest, or task outputs not
//     merged yet: the message says which to run);
//   - a folder or glob whose `-NNNNN-of-MMMMM` shards form an incomplete set
//     (io::FindIncompleteNumberedSets): run `shard verify` (or `shard merge`).
// A shard file named on its own is read as it is, numbered or not.
// Splits: with `options.split` empty a manifest must have one split (several
// is InvalidArgument naming them); "*" takes all; an unknown split, or a
// split with no manifest among the sources, is InvalidArgument. A split may
// be sliced in TFDS's syntax, "train[:10%]", "val[:500]" (reader/split_spec.h):
// each manifest's selected samples in manifest order, sliced before any
// order is drawn; only the shards the slice reaches are opened (or, remote,
// downloaded), and the stored shape and channel statistics stay the whole
// split's.
//
// Keys: `options.keys` names the features read (defaults: example/image_keys.h,
// the converter's keys). TensorFlow-written files with other names work by
// changing them, e.g. keys.label = "label", keys.image = "image_raw". When
// every source is a manifest with a schema, each key changed from its
// default must be one the schemas list (InvalidArgument naming the key's
// role and the keys they have: a misspelt label key would otherwise give
// every sample label -1); plain shards are not checked.
//
// Mixtures (OpenMixture(), or a mixture.json source: manifest/mixture_json.h):
// several datasets, each a list of the sources above, numbered one after the
// other (source s's sample i is global sample offset_s + i) and read in a
// weighted interleave: mixture() is the order (reader/mixture.h) that
// BatchLoader takes when its OrderOptions::global_order is null. Label maps:
// sources whose manifests' label maps differ are InvalidArgument naming both
// sources and the difference, unless MixtureOptions::label_maps is kMerge
// (one map over the class names of all, sorted by name; MapLabel() turns
// each source's stored labels into it, a stored label outside its source's
// map into -1; a source without a label map is InvalidArgument) or kKeep
// (labels as stored; labels() is the sources' common map, or empty when
// they differ). A mixture.json must be the only source of Open(); its
// sources may not be mixtures.
//
// Thread-safety: after Open() the dataset's contents are immutable;
// ReadRecord(), OpenShard() and Locate() may be called from many threads,
// each with its own RecordBuffer. PlanEpoch() replaces the remote download
// plan (the latest call wins: one loader per remote dataset at a time
// streams as planned; others still read correctly, on demand). A remote
// dataset may be used in a fork child (a DataLoader worker): the child
// starts its own downloads (complete cached files are reused).
#ifndef LIBSHARD_READER_DATASET_H_
#define LIBSHARD_READER_DATASET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libshard/example/image_record.h"
#include "libshard/reader/mixture.h"
#include "libshard/reader/sample_order.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/reader/split_spec.h"
#include "libshard/status.h"

namespace libshard {
class Manifest;
class ShardEntry;
class SplitEntry;
}  // namespace libshard

namespace libshard::reader {

// The Example keys a loader reads (the image-record contract's keys,
// example/image_record.h).
using KeyMap = example::ImageRecordKeys;

// The key roles by name -- "image", "label", "format", "shape", "dtype",
// "mask", "mask_format" -- and their fields in a KeyMap: the one table the
// reader's key check and the faces' `keys={role: key}` arguments read.
struct KeyRole {
  const char* name;
  std::string KeyMap::*field;
};
// Every key role, in the order above.
const std::vector<KeyRole>& KeyRoles();
// The field of `keys` for the role `name`; nullptr for an unknown role.
std::string* KeyForRole(KeyMap* keys, std::string_view name);

struct DatasetOptions {
  // How each shard is read. Default: mmap, CRC on first touch, .idx used.
  ShardReaderOptions shard;
  // Feature names. Default: the converter's (image_keys.h).
  KeyMap keys;
  // manifest.json sources: the split to open; "" when the manifest has just
  // one, "*" for all; with a slice, "train[:10%]" (see the file comment).
  // Default: "".
  std::string split;
  // pread mode: descriptors open at once over all shards; a shard whose
  // descriptor was closed (least recently used) reopens it on its next read.
  // mmap mode keeps none open after Open(). Must be >= 1 (ignored when
  // shard.open_files is set). Default: 64.
  size_t max_open_files = 64;
  // Remote sources: the cache folder; "" = $LIBSHARD_CACHE_DIR, else
  // ~/.cache/libshard. Default: "".
  std::string cache_dir;
  // Remote sources: most bytes the cache may hold (0 = no limit); a part
  // larger than it streams (see the file comment). Default: 0.
  uint64_t cache_limit = 0;
  // Remote sources: shards downloaded at once, ahead of a loader's reads.
  // Default: 8.
  int download_threads = 8;
};

// What the manifests say about the stored images (stored_shape()): what a
// loader takes for its output size and channels when none are given.
struct StoredShape {
  // Width and height every stored image has; 0 when they differ or are
  // unknown.
  int width = 0;
  int height = 0;
  // Channels every stored image has (1 gray, 2 gray + alpha, 3 RGB,
  // 4 RGBA); 0 when they differ or are unknown.
  int channels = 0;
  // The sizes found, "WxH" most common first (at most 5, then ", ..."), or
  // "none (no samples)"; for messages. Empty when unknown.
  std::string sizes;
  // Why the sizes are unknown ("DIR/x.tfrecord has no manifest.json to
  // record them"); empty when they are known.
  std::string unknown;
};

struct LabelName {
  int64_t label = 0;
  std::string name;
};

// How a mixture treats sources whose label maps differ (see the file
// comment).
enum class LabelMaps { kError, kMerge, kKeep };
// "error", "merge", "keep".
StatusOr<LabelMaps> ParseLabelMaps(std::string_view word);

struct MixtureOptions {
  // One per source, finite and >= 0, not all 0 (normalised). Default: empty.
  std::vector<double> weights;
  // Samples per epoch; 0: the sum of the sources' sizes. Default: 0.
  uint64_t samples_per_epoch = 0;
  // Default: kError.
  LabelMaps label_maps = LabelMaps::kError;
};

class RemoteShards;  // remote_shards.h

class Dataset {
 public:
  // Opens every shard named by `sources` (see the file comment). Errors name
  // the source: InvalidArgument (nothing matched, a bad manifest), and the
  // ShardReader::Open errors.
  static StatusOr<std::unique_ptr<Dataset>> Open(const std::vector<std::string>& sources,
                                                 const DatasetOptions& options = {});
  // A weighted mixture of `sources` (each a list of the sources Open()
  // takes; see the file comment). Errors: Open()'s, naming the source;
  // MixtureOrder::Create()'s; a label-map difference as described above.
  static StatusOr<std::unique_ptr<Dataset>> OpenMixture(const std::vector<std::vector<std::string>>& sources,
                                                        const MixtureOptions& mixture,
                                                        const DatasetOptions& options = {});
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  ~Dataset();

  // Total records over all shards.
  uint64_t size() const { return starts_.empty() ? 0 : starts_.back(); }
  // What a saved loader position is checked against: a short hex digest of
  // the sample count and each shard's file name and record count (not its
  // folder: a copy of the shards elsewhere is the same dataset).
  std::string Identity() const;
  size_t num_shards() const { return shards_.size(); }
  // Shard i's local file: for a remote shard, where the cache keeps it
  // (whether it is there yet or not). Never waits.
  const std::string& shard_path(size_t i) const { return paths_[i]; }
  // Shard i's reader. A remote shard is opened from the cache once its
  // download completes: this waits for it (or downloads it now), and keeps
  // it resident while the returned pointer lives. Errors: the download's
  // (naming the object) and ShardReader::Open's.
  StatusOr<std::shared_ptr<const ShardReader>> OpenShard(size_t i) const;
  // Shard i's labels sidecar (record/record_labels.h), the file its local
  // manifest lists (ShardEntry.labels_file); nullptr for a shard without one
  // (plain files, older manifests, remote shards). Never reads it.
  const std::string* labels_file(size_t i) const {
    auto it = labels_files_.find(i);
    return it == labels_files_.end() ? nullptr : &it->second;
  }
  // The record of shard i that is its first sample (a sliced split's first
  // shard may start past record 0), its samples, and the global sample
  // number of the first.
  uint64_t first_record(size_t i) const { return first_[i]; }
  uint64_t shard_samples(size_t i) const { return starts_[i + 1] - starts_[i]; }
  uint64_t shard_start(size_t i) const { return starts_[i]; }
  const DatasetOptions& options() const { return options_; }
  // The label map of a manifest (empty for plain files).
  const std::vector<LabelName>& labels() const { return labels_; }
  // Whether every record carries feature `key`, as the manifests' schemas
  // say; nullopt when unknown (a plain shard among the sources, or a manifest
  // without a schema).
  std::optional<bool> HasFeature(const std::string& key) const;
  // Whether a manifest's schema marks feature `key` a list (any number of
  // values a record: an int_list / float_list CSV column, the object boxes);
  // false for keys no schema marks.
  bool ListFeature(const std::string& key) const { return list_features_.count(key) > 0; }
  // The stored image shape, from the manifests: the conversion's options
  // (a fixed-size resize mode, or else the source sizes of the opened
  // splits' statistics through the same geometry) and the per-channel pixel
  // counts of the statistics. Unknown (0) with any plain shard among the
  // sources, and for an EXIF-rotated JPEG source size that is not square.
  const StoredShape& stored_shape() const { return stored_; }

  // Per-channel mean and standard deviation of the stored pixels on the
  // 0..255 scale, over the opened splits of every manifest (count-weighted),
  // as manifest.json records them; empty when a source has none (a plain
  // shard, a manifest without statistics) or the manifests disagree on the
  // number of channels.
  struct ChannelMoments {
    double mean = 0;
    double std = 0;
  };
  const std::vector<ChannelMoments>& channel_stats() const { return channel_stats_; }

  // A mixture's order (null for a plain dataset).
  const std::shared_ptr<const MixtureOrder>& mixture() const { return mixture_; }
  // A mixture's sources as given (each list joined with ", "), for messages
  // and reports; empty for a plain dataset.
  const std::vector<std::string>& mixture_names() const { return mixture_names_; }
  // The mixture source of a global sample (< size()), or -1 for a plain
  // dataset.
  int64_t SourceOf(uint64_t sample) const;
  // The label a loader gives for global sample `sample` whose record stores
  // `stored`: remapped into labels() under LabelMaps::kMerge, else `stored`.
  int64_t MapLabel(uint64_t sample, int64_t stored) const;

  // Which shard and record a global sample number is (sample < size()).
  struct Location {
    size_t shard = 0;
    size_t record = 0;
  };
  Location Locate(uint64_t sample) const;

  // The record bytes of a global sample, copied into `buf` (ShardReader::ReadCopy
  // semantics: a shard shrunk while open is DataLoss, never SIGBUS); with
  // `offset`, also the record's byte offset in its shard. A remote shard not
  // resident yet is waited for (see OpenShard()). `planned`: the read is one
  // of those a loader gave PlanEpoch() (BatchLoader's decode reads): it moves
  // the download window on and counts towards unpinning its shard; other
  // reads (a batch's extra features, inspection) leave the plan alone.
  Status ReadRecord(uint64_t sample, RecordBuffer* buf, std::string_view* out, uint64_t* offset = nullptr,
                    bool planned = false) const;

  // Remote shards: how a loader tells the dataset its read order (no-ops, OK,
  // when every shard is local). BatchLoader calls both.
  //
  // CheckReadOrder(): whether the order's reads can stream through the
  // cache_limit: InvalidArgument naming cache_limit and the bytes that must
  // be resident at once (the shards in use by a batch plus at least one
  // downloading ahead), or naming block shuffle when a global shuffle reads
  // more than the limit holds. Checked on the order's epoch 0, and for the
  // shuffles on what any epoch may need (a block shuffle: the shards of the
  // blocks its windows can hold at once, plus one downloading ahead; a global
  // shuffle: as many of the largest shards as the part has samples), so a
  // limit accepted here holds for every epoch.
  Status CheckReadOrder(const SampleOrder& order) const;
  // PlanEpoch(): the loader reads, in order, the batches first_batch.. of
  // `order` in `epoch` (SampleOrder::Epoch(), cut from global offset `start`
  // for this part: its samples_per_rank(start) sample numbers are held while
  // planning, for remote shards only; local ones plan nothing): the shards are
  // downloaded in first-touch order, download_threads at once, a bounded
  // window ahead of the reads; shards this part never reads are not
  // downloaded; under a cache_limit the part cannot hold whole, a shard is
  // unpinned (evictable) once its reads in this stretch of the order are
  // done. Replaces the previous plan. Errors: as CheckReadOrder(), but
  // ResourceExhausted.
  Status PlanEpoch(const SampleOrder& order, const EpochOrder& epoch, uint64_t first_batch, uint64_t start = 0) const;
  // Remote shards: objects downloaded into the cache so far by this dataset
  // (for tests and benchmarks).
  uint64_t downloads() const;
  // Remote shards: ends the downloads in flight within about a second
  // (store::ObjectStore::Cancel); reads of shards not yet resident then fail
  // with IOError "cancelled". For a loader being closed (Ctrl-C): its threads
  // stop without waiting for transfers. Irreversible; partial files are
  // removed (or left for the cache's next download of that object to
  // remove). Local shards: nothing to end. Thread-safe.
  void CancelTransfers() const;

 private:
  Dataset();
  // `source`: the argument that named the file (for messages). Records
  // first.. (count of them; -1: all) are its samples. A manifest's shard
  // comes with its record count and size in bytes (`expected_bytes`, 0 when
  // the manifest has none): the size is checked now, the count when the
  // shard's record table is first needed.
  Status AddShard(const std::string& path, int64_t expected_records, const std::string& source, uint64_t first = 0,
                  int64_t count = -1, uint64_t expected_bytes = 0);
  Status AddManifest(const std::string& path, const std::string& source);
  // An s3:// or https:// source (remote_dataset.cc).
  Status AddRemote(const std::string& url);
  Status AddPlain(const std::string& source);
  // The options' checks (and the pread descriptor cache).
  Status Init(const DatasetOptions& options);
  // The mixture file among Open()'s sources (mixture_dataset.cc): a .json
  // whose format is a mixture's, or a folder holding mixture.json and no
  // manifest.json; nullopt when there is none; InvalidArgument when it is
  // not the only source.
  static StatusOr<std::optional<std::string>> FindMixtureFile(const std::vector<std::string>& sources);
  static StatusOr<std::unique_ptr<Dataset>> OpenMixtureFile(const std::string& path, const DatasetOptions& options);
  // One argument of Open() (see the file comment); sets *any_manifest when
  // it is a manifest or a remote source.
  Status AddSource(const std::string& src, bool* any_manifest);
  // What Open() does once every source is added.
  Status Finish(bool any_manifest);
  // OpenMixture()'s label maps (mixture_dataset.cc): `maps` per source.
  Status ReconcileLabels(const std::vector<std::vector<LabelName>>& maps, LabelMaps policy);
  // The splits of `m` (named `src` in messages) that options_.split selects, in
  // order; InvalidArgument for an incomplete manifest or an unknown split
  // (split_spec.cc).
  StatusOr<std::vector<const libshard::SplitEntry*>> SelectSplits(const std::string& src,
                                                                  const libshard::Manifest& m) const;
  // The records of `splits`' shards that the split's slice selects: each
  // shard it reaches (every shard when unsliced) with its first record and
  // count. ResolveSlice()'s errors, naming `src`.
  struct ShardPart {
    const libshard::ShardEntry* shard;
    uint64_t first = 0;
    uint64_t count = 0;
  };
  StatusOr<std::vector<ShardPart>> SelectShards(const std::string& src,
                                                const std::vector<const libshard::SplitEntry*>& splits) const;
  // The label map, schema and stored shape of a manifest whose shards were added.
  void AddManifestMetadata(const std::string& src, const libshard::Manifest& m,
                           const std::vector<const libshard::SplitEntry*>& splits);
  Status CheckKeys() const;
  // CheckReadOrder()'s checks, a limit too small ResourceExhausted.
  Status CheckReadOrderBytes(const SampleOrder& order) const;
  void AddStoredShape(const std::string& src_name, const libshard::Manifest& m,
                      const std::vector<const libshard::SplitEntry*>& splits);
  void FinishStoredShape();

  DatasetOptions options_;
  SplitSpec split_;                                         // options_.split parsed
  std::vector<std::shared_ptr<const ShardReader>> shards_;  // null: remote (remote_)
  std::vector<std::string> paths_;                          // shard_path()
  std::vector<size_t> remote_index_;                        // per shard: its index in remote_, or npos
  std::unique_ptr<RemoteShards> remote_;                    // the remote shards, if any
  std::vector<uint64_t> starts_;                            // starts_[i]: first sample of shard i; back(): total
  std::vector<uint64_t> first_;                             // first_[i]: the record of shard i that is its first sample
  std::map<size_t, std::string> labels_files_;              // shard -> its labels sidecar (labels_file())
  std::vector<LabelName> labels_;
  bool schema_known_ = true;  // false once a source has no schema
  bool schema_seen_ = false;
  std::set<std::string> schema_;                                // keys every manifest marks required
  std::set<std::string> listed_;                                // keys every manifest lists, required or not
  std::set<std::string> list_features_;                         // keys some manifest marks a list
  std::map<std::pair<uint64_t, uint64_t>, std::string> files_;  // (device, inode) -> "SOURCE (FILE)"
  std::map<std::string, std::string> remote_files_;             // cache path -> "SOURCE (URL)"
  StoredShape stored_;
  std::map<std::string, uint64_t> sizes_;  // "WxH" of the stored images -> samples
  std::string unknown_sizes_;              // why the sizes are unknown, if they are (StoredShape::unknown)
  bool plain_ = false;                     // a plain shard among the sources
  bool channel_set_ = false;               // stored_.channels holds a manifest's value
  // channel_stats(): per channel, samples, sum of means and of mean^2 + std^2
  // (each times the samples); moments_ok_ false once a source has none.
  std::vector<ChannelMoments> channel_stats_;
  std::vector<double> moment_n_, moment_1_, moment_2_;
  bool moments_ok_ = true;
  std::shared_ptr<const MixtureOrder> mixture_;  // null: not a mixture
  std::vector<std::string> mixture_names_;
  // kMerge: per source, (stored label, merged label) sorted by stored label.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> remap_;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_DATASET_H_
