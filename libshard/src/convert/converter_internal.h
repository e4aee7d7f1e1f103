// Pieces of the conversion shared by converter.cc (Convert's steps),
// dry_run.cc (DryRun), encode_pipeline.cc (the oneTBB pipeline),
// conversion_plan.cc (options, plan ids, schema) and shard_sink.cc (writing
// and reusing shards). Private to the convert module.
#ifndef LIBSHARD_SRC_CONVERT_CONVERTER_INTERNAL_H_
#define LIBSHARD_SRC_CONVERT_CONVERTER_INTERNAL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libshard/convert/converter.h"
#include "libshard/convert/dataset_stats.h"
#include "libshard/convert/duplicates.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/manifest.pb.h"
#include "libshard/record/record_writer.h"

namespace libshard::convert::internal {

// Appended to the reason of a reject whose cause was not the file's content
// (out of memory, an I/O error reading it): a shard whose entry holds one is
// not kept by the next run, which tries those inputs again.
constexpr char kRetryNote[] = " (not caused by the file: retried on the next run)";

// True for a reject that another run may not repeat: out of memory (as
// util::CatchAsStatus reports it) or an I/O error (not a missing file).
bool IsTransient(const Status& reject);

// Largest source file read (an image bigger than this is rejected).
constexpr uint64_t kMaxSourceBytes = uint64_t{1} << 30;

bool IsRegularFile(const std::string& path);
// The file's size, or UINT64_MAX when it cannot be stat'ed.
uint64_t FileSize(const std::string& path);

// The listing of o.input: a CSV manifest or a folder (without the output
// folder and the mask label file).
StatusOr<Listing> ListInput(const ConvertOptions& o);

// What decides a shard's bytes, hashed: the library version, the options
// (serialized ConversionOptions), the shard's name and its samples.
std::string PlanId(const std::string& options_bytes, const Listing& listing, const PlannedShard& shard);
// The options' bytes for PlanId: those that shape the shards or their
// entries. The leak mode counts only as whether fingerprints are taken (warn
// and fail reuse each other's shards), the distance only with dedup; a dedup
// mode also names its rule (listing order), so shards an earlier build
// deduplicated in plan order are redone.
std::string PlanOptionsBytes(const ConversionOptions& options);

// A sample's record (EncodeSample of its file, and its mask's), as the
// pipeline makes it; *bytes_read is the source file's size once read.
Status EncodeListedSample(const Listing& listing, const EncodeOptions& encode, uint32_t sample, EncodedSample* out,
                          StatsAccumulator* stats, uint64_t* bytes_read);

// What --dedup's first pass decided for one sample: the main pass makes it
// a reject with this reason without encoding it again.
struct PreReject {
  std::string reason;
  bool transient = false;  // IsTransient: an encode failure the next run retries
  bool duplicate = false;  // dropped by --dedup (not a bad input: --on-error fail goes on)
};
using PreRejects = std::map<uint32_t, PreReject>;  // by listing sample

// kInvalidArgument when dedup_across is set and the listing has no split
// named train (Convert and DryRun, before anything is written).
Status CheckDedupSplits(const ConvertOptions& o, const Listing& listing);

// --dedup's first pass (dedup.cc, converter.h's dedup_within and
// dedup_across): the fingerprints of the samples of the shards `todo`
// (EncodeListedSample's, on `threads` threads), those of the images the
// shards kept from an earlier run hold (`kept`: their entries; a sample of
// theirs without one was not stored), then the decisions in the listing's
// order, split by split (train first with dedup_across): a sample that
// duplicates an image kept before it is dropped. Returns the rejects of the
// samples of `todo` (the dropped ones, and those whose encode failed), by
// listing sample. Errors: a kept entry's fingerprints that cannot be read
// (AppendDuplicateImages), or what escapes an encode (out of memory outside
// it).
StatusOr<PreRejects> DecideDuplicates(const ConvertOptions& o, const EncodeOptions& encode, const Listing& listing,
                                      const ShardPlan& plan, const std::vector<size_t>& todo,
                                      const std::vector<ShardEntry>& kept, int threads);

// One sample of one shard, in plan order.
struct Work {
  size_t shard;     // position in plan.shards
  uint32_t sample;  // index into listing.samples
  bool first = false, last = false;
};

// A sample after encoding: its record or why it was rejected.
struct Item {
  const Work* work = nullptr;
  std::string record;
  std::string reject;            // non-empty: the reason this input was rejected
  bool transient = false;        // the reject IsTransient: retried by the next run
  bool gray_source = false;      // the source is gray (1 or 2 channels as stored)
  bool duplicate = false;        // rejected by --dedup (PreReject::duplicate)
  ImageFingerprint fingerprint;  // with EncodeOptions::fingerprint
  StatsAccumulator stats;
  uint64_t bytes_read = 0;
};

// Writes the shards in plan order, one at a time: a temporary file per shard
// under OUT/.libshard/, then its entry, its index and the shard renamed into
// place (a shard under its final name always has its entry and index beside
// it). Not thread-safe: the pipeline's serial stage owns it.
class ShardSink {
 public:
  ShardSink(const ConvertOptions& o, const ShardPlan& plan, const Listing& listing,
            const std::map<size_t, std::string>& plan_ids)
      : o_(o), plan_(plan), listing_(listing), plan_ids_(plan_ids) {}
  ~ShardSink() { Abort(); }
  ShardSink(const ShardSink&) = delete;
  ShardSink& operator=(const ShardSink&) = delete;

  // The next item in plan order; a shard's last item publishes the shard.
  // Its fingerprints go into the shard's entry.
  Status Add(Item& item);
  // Removes the shard being written, if any (also one whose entry or
  // renames failed).
  void Abort();
  std::vector<ShardEntry>& entries() { return entries_; }

 private:
  Status Begin(size_t pos);
  Status Finish();

  const ConvertOptions& o_;
  const ShardPlan& plan_;
  const Listing& listing_;
  const std::map<size_t, std::string>& plan_ids_;
  std::unique_ptr<record::RecordWriter> writer_;
  std::string temp_;
  uint32_t crc_ = 0;
  ShardEntry entry_;
  StatsAccumulator stats_;
  std::vector<int64_t> labels_;  // the shard's records' labels so far (-1: none): its labels sidecar
  std::vector<ShardEntry> entries_;
};

// Encodes `work` (samples in plan order) on `threads` threads and hands each
// item to `sink` strictly in plan order: oneTBB's serial-in-order ->
// parallel -> serial-in-order pipeline, at most 4 samples per thread in
// flight, so the shards are the same bytes for any thread count. A sample
// that fails to read, decode or encode is a reject (Item::reject), never an
// error, unless `fail_on_error` (kFailedPrecondition naming the file). A
// sample in `pre` (may be null) is not encoded: it is the reject `pre` says
// (a --dedup duplicate does not stop a `fail_on_error` run).
// `progress` is called after each sample is written (converter.h's
// ProgressFn; `shards_total` is Progress::shards_total). On success
// *gray_expanded counts the gray sources written; on an error (the sink's, or
// an exception that escapes a stage) the shard being written is removed
// (ShardSink::Abort) and the error returned.
Status EncodeAndWrite(const Listing& listing, const EncodeOptions& encode, const std::vector<Work>& work,
                      size_t shards_total, int threads, bool fail_on_error, const PreRejects* pre,
                      const ProgressFn& progress, ShardSink* sink, uint64_t* gray_expanded);

// A complete shard from an earlier run with the same plan, or nothing. A
// shard whose entry matches but whose bytes do not have the entry's CRC-32C
// is not reusable, and *damaged then says so ("FILE (crc32c:..., its entry
// says crc32c:...)"); one whose entry holds rejects with kRetryNote is not
// reusable either, and *retried says so ("FILE (N reject(s) ...)").
// Otherwise they are left alone.
std::optional<ShardEntry> ReusableShard(const ConvertOptions& o, const PlannedShard& s, const std::string& plan_id,
                                        std::string* damaged, std::string* retried);

// Shards of an earlier run into this folder under another plan (another
// shard count, a split this plan no longer has) are removed with everything
// of theirs: a shard is stale when it is not in this plan and either is named
// PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord for a split of this plan, or has an
// entry in .libshard/ that this prefix names. Returns the removed shard names.
std::vector<std::string> RemoveStaleShards(const std::string& out, const std::string& prefix, const ShardPlan& plan);

}  // namespace libshard::convert::internal

#endif  // LIBSHARD_SRC_CONVERT_CONVERTER_INTERNAL_H_
