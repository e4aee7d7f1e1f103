// BatchLoader: contiguous image batches (uint8 N x H x W x C by default; NCHW
// and normalised float32 / float16 on request) and int64 labels from a Dataset, decoded by a pool of oneTBB threads
// into a ring of reusable buffers, `prefetch` batches ahead of the consumer.
//
//   BatchLoaderOptions o;
//   o.batch_size = 64; o.height = o.width = 224; o.threads = 2;
//   o.order.kind = OrderKind::kShuffle; o.order.seed = 1;
//   o.augment = Augment::kRandomResizedCrop;
//   LIBSHARD_ASSIGN_OR_RETURN(auto loader, BatchLoader::Create(dataset, o));
//   for (uint64_t b = 0; b < loader->batches_per_epoch() * epochs; ++b) {
//     Batch batch;
//     LIBSHARD_RETURN_IF_ERROR(loader->Next(&batch));
//     Train(batch.images, batch.labels, batch.size);
//   }
//   Position saved = loader->position();   // ... later: loader->Seek(saved)
//
// The stream of batches runs epoch after epoch; each Batch says its (epoch,
// index). Batch contents are a pure function of the dataset, the options and
// the position: the sample order comes from SampleOrder (seed, epoch), and
// each sample's augmentation from (seed, epoch, sample number) — never from
// thread timing. So Seek(position()) after a restart gives exactly the same
// following batches, whatever `threads` is; and SeekGlobal(global_position())
// continues the epoch on a loader of another world size, rank, worker count
// or batch size (SampleOrder's elastic resume: the rest of the epoch's global
// order cut anew).
//
// Per sample (keys from DatasetOptions::keys):
//   - JPEG / PNG: decoded with image::DecodeAndTransform (JPEG DCT scaling
//     when the plan shrinks 2x or more). Augment::kNone: an image already
//     H x W is copied as decoded; another size goes through `resize` (centre
//     crop by default). kRandomResizedCrop: torchvision's RandomResizedCrop
//     parameters (scale, ratio, 10 tries then a centre crop) pick a crop box
//     that is resampled to H x W, then a horizontal flip with probability 1/2.
//     For a JPEG only the crop's rows and columns are decoded (crop_decode).
//   - raw arrays ("raw" / "raw.zst" / "raw.up.zst" in the format key, with
//     shape and dtype keys): uint8 arrays of exactly H x W x C are
//     decompressed (and unfiltered) straight into the batch, on one zstd
//     context per decode thread; others are decoded (uint16 reduced as round(v / 257)) and
//     transformed as images.
//   - with `masks`, the segmentation mask (1 channel) gets the same geometry
//     with nearest-neighbour sampling into an N x H x W buffer.
//   - the label is the int64 label key's first value, or -1 when absent.
//   - with `boxes`, the detection boxes (example/box_record.h) get the same
//     geometry (image/box_geometry.h: the resize mode's plan or the crop box,
//     then the flip) into Batch::boxes, padded to max_boxes per sample.
// Which records load is example/image_record.h's contract, the one `shard
// verify --decode` checks (format, shape, dtype, label kind, mask, pixel
// limit); the decoding is record_pixels.h's DecodeRecordPixels.
// Output (batch_layout.h): each sample is decoded to uint8 H x W x C, then
// stored in `layout` and `dtype`, float values (x / 255 - mean[c]) / std[c]
// — in the decode threads, so the consumer never touches pixels. uint8 NHWC
// (the default) decodes straight into the batch.
// A sample that fails to decode fails its batch: Next() returns the error,
// naming the shard file, record number and offset; later calls repeat it
// until Seek(). Running out of memory is such an error too
// (ResourceExhausted "out of memory decoding FILE record N"): no exception
// leaves the loader or its threads.
//
// Buffers: the ring has prefetch + 1 slots (at least 2). By default their
// memory comes from a BatchPool (batch_pool.h): a heap pool of the loader's
// own, or one the caller gives to CreateWithPool() (e.g. slots in pinned or
// shared memory). Then NextOwned() hands each batch out with its memory: the
// caller holds it as long as it likes, and the ring slot takes a new block
// from the pool (a recycled one when the caller lets go of its batches
// promptly, so no page is faulted in twice). The loader's own heap blocks
// hold min(batch_size, samples per rank) samples: the largest batch an epoch
// can give, so a batch_size beyond the dataset costs no more memory than the
// dataset; a ring that would need more than half the machine's physical
// memory (sysconf) is refused at Create (InvalidArgument naming batch_size or
// prefetch and the bytes). A caller may instead give fixed
// buffers to Create(): the ring is then those buffers, used in order; each
// must hold batch_size full samples in the output layout and dtype
// (batch_size * H * W * C values of dtype, aligned for it) and outlive the
// loader; NextOwned() is then FailedPrecondition.
//
// Lifetime: a Batch's pointers from Next() / NextFor() are valid until the
// next Next(), NextFor(), NextOwned(), Seek() or the loader's destruction;
// from NextOwned(), while its BatchBlock lives (also after the loader is
// gone). Destruction stops and joins the loader's threads. Thread-safety: one
// consumer thread; the loader's own threads are internal.
//
// fork(): a loader may be used in a fork child (a PyTorch DataLoader worker):
// the child has none of the parent's threads, so the loader starts its own
// there, from position(), transparently. A fork child decodes on plain
// std::threads (oneTBB's pool cannot be restarted in a fork child). To see
// forks, the library installs one pthread_atfork child handler when the first
// loader is created (never at static initialisation); it only sets a flag.
#ifndef LIBSHARD_READER_BATCH_LOADER_H_
#define LIBSHARD_READER_BATCH_LOADER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/reader/batch_layout.h"
#include "libshard/reader/batch_pool.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/loader_options.h"
#include "libshard/reader/sample_decoder.h"
#include "libshard/reader/sample_order.h"
#include "libshard/status.h"

namespace libshard::reader {

// A record skipped under OnError::kSkip: where it is and why.
struct SkippedRecord {
  uint64_t sample = 0;  // its global sample number
  std::string path;     // the shard file
  uint64_t record = 0;  // its number in the shard
  uint64_t offset = 0;  // its byte offset in the shard
  std::string reason;   // the decode error's message
};

struct Position {
  // The last epoch a loader runs (2^63 - 1, so that a position fits an int64
  // wherever it is saved).
  static constexpr uint64_t kMaxEpoch = (uint64_t{1} << 63) - 1;
  uint64_t epoch = 0;  // 0 .. kMaxEpoch
  uint64_t batch = 0;  // index within the epoch's cut from `start`
  // Samples of the epoch's global order consumed before this loader's cut
  // of it began (SampleOrder's elastic resume; 0: the whole epoch).
  uint64_t start = 0;
  friend bool operator==(const Position& a, const Position& b) {
    return a.epoch == b.epoch && a.batch == b.batch && a.start == b.start;
  }
};

// Where all ranks together are in the stream: `consumed` samples of epoch
// `epoch`'s global order (SampleOrder::GlobalConsumed). The same on every
// rank at the same step, and meaningful to a loader of any world size,
// rank, worker count or batch size (see docs/reader.md, "Changing the
// number of GPUs").
struct GlobalPosition {
  uint64_t epoch = 0;
  uint64_t consumed = 0;  // 0 .. the epoch's length
  friend bool operator==(const GlobalPosition& a, const GlobalPosition& b) {
    return a.epoch == b.epoch && a.consumed == b.consumed;
  }
};

struct Batch {
  const uint8_t* images = nullptr;  // size samples in options' layout and dtype (bytes)
  const int64_t* labels = nullptr;  // size
  const uint8_t* masks = nullptr;   // size x H x W, or null
  size_t size = 0;                  // samples (short only for a last batch)
  Position position;                // which batch this is
  size_t slot = 0;                  // which ring buffer holds it
  // With options.extras: per sample, per key, the batch's own copy (valid
  // however long the Batch lives); else empty.
  std::vector<std::vector<ExtraValues>> extras;
  // With options.boxes: the batch's boxes (its own copy); else empty.
  BatchBoxes boxes;
};

class BatchLoader {
 public:
  // InvalidArgument for bad options (sizes, channels, threads, resize mode,
  // a null caller buffer, masks from shards whose manifest says they have
  // none, buffers beyond the memory bound, a stored size asked for where
  // the images differ) and the SampleOrder::Create errors.
  static StatusOr<std::unique_ptr<BatchLoader>> Create(std::shared_ptr<const Dataset> dataset,
                                                       const BatchLoaderOptions& options,
                                                       std::vector<BatchBuffers> buffers = {});
  // As Create() without buffers, the ring's memory from `pool` (shared with
  // the caller, who may hand it slots in pinned or shared memory).
  // InvalidArgument when the pool's shape is smaller than a batch of these
  // options (batch_shape()).
  static StatusOr<std::unique_ptr<BatchLoader>> CreateWithPool(std::shared_ptr<const Dataset> dataset,
                                                               const BatchLoaderOptions& options,
                                                               std::shared_ptr<BatchPool> pool);
  // The bytes of one full batch of `options` (images in its layout and dtype,
  // labels, masks): what a pool's shape must hold.
  static BatchShape ShapeOf(const BatchLoaderOptions& options);
  // Fills in what `options` leaves to the dataset: height = width = 0 (the
  // stored size) and channels = 0 (see BatchLoaderOptions). Create() does the
  // same; a caller that sizes its own buffers calls it first. A dataset of 0
  // records is InvalidArgument "no samples: ...".
  static Status ResolveShape(const Dataset& dataset, BatchLoaderOptions* options);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  uint64_t batches_per_epoch() const;
  // The loader's stages: its order and partition, and the decoder of its
  // samples (valid as long as the loader).
  const SampleOrder& order() const;
  const SampleDecoder& decoder() const;
  const BatchLoaderOptions& options() const;
  // The position of the batch the next Next() returns.
  Position position() const;
  // Moves to `p` (batch may equal batches_per_epoch(p.start), meaning the
  // next epoch's start); drops prefetched batches. InvalidArgument if the
  // batch is past that, the start past the epoch's length or the epoch past
  // Position::kMaxEpoch.
  Status Seek(Position p);
  // The global position of the batch Next() returns next: the samples all
  // ranks have consumed. FailedPrecondition with num_workers > 1 (a worker
  // sees only its share of the rank's batches; the consumer that receives
  // them all counts: SampleOrder::GlobalConsumed).
  StatusOr<GlobalPosition> global_position() const;
  // Continues epoch g.epoch after its first g.consumed samples (saved by a
  // loader of any shape): the rest of the epoch's order is cut anew for this
  // loader's rank and worker (Position{g.epoch, 0, g.consumed}); consumed ==
  // the epoch's length is the next epoch's start. InvalidArgument past that.
  Status SeekGlobal(GlobalPosition g);
  // Blocks until the next batch is ready. OutOfRange when the order has no
  // batches at all (an empty dataset); the first failing batch's error, again
  // on each call until Seek().
  Status Next(Batch* out);
  // As Next(), but waits at most `wait`: *ready says whether *out was filled
  // (OK and *ready false: not yet, call again). The previous batch is released
  // either way. Lets a caller poll for interrupts (Python's KeyboardInterrupt).
  Status NextFor(Batch* out, std::chrono::milliseconds wait, bool* ready);
  // As NextFor(), handing the batch's memory to the caller: *owner keeps
  // out's pointers valid until its last copy dies (see BatchPool). Set only
  // when *ready. FailedPrecondition for a loader given fixed buffers.
  Status NextOwned(Batch* out, std::shared_ptr<BatchBlock>* owner, std::chrono::milliseconds wait, bool* ready);

  // decoder().Decode(): decodes global sample `sample` as it would appear at
  // `epoch` (its augmentation drawn from (seed, epoch, sample)) into `image`: one sample
  // of the batch, in the options' layout and dtype (H*W*C values, aligned for
  // the dtype); `mask`: H*W bytes (with options.masks, else ignored; may be
  // null). Map-style access (libshard.torch.ShardImages) and tests. Safe to
  // call from several threads at once; independent of the batch stream.
  Status DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label) const;
  // As above, also the sample's boxes (with options.boxes; else *boxes is
  // cleared).
  Status DecodeSample(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label,
                      SampleBoxes* boxes) const;

  // The records skipped so far under OnError::kSkip, each once, in the order
  // they were first met. Thread-safe.
  std::vector<SkippedRecord> skipped() const;
  // Adds records skipped before a resume (a saved skipped()) to skipped(),
  // each once. InvalidArgument when one does not name this dataset's record
  // (its sample number, shard file name and record number disagree).
  Status RestoreSkipped(const std::vector<SkippedRecord>& records);
  // The global sample numbers a delivered batch holds, in its order: the
  // order's samples for `position`, each skipped one (OnError::kSkip)
  // replaced as the decode threads replaced it. For a batch already returned
  // by Next*(). Thread-safe.
  std::vector<uint64_t> BatchSamples(Position position) const;

  struct Impl;

 private:
  explicit BatchLoader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_BATCH_LOADER_H_
