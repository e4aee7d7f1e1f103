// SampleDecoder: one sample of the dataset by its global number, decoded as
// a BatchLoader's batch holds it — the record read from the Dataset, checked
// against the image-record contract (example/image_record.h), its geometry
// drawn (the resize mode, or kRandomResizedCrop's box and flip from (seed,
// epoch, sample)) and its pixels decoded (record_pixels.h) in the options'
// layout and dtype (batch_layout.h); its mask, boxes and extras likewise.
// No ring, no threads, no order: map-style access (libshard.Dataset[i],
// libshard.torch.ShardImages) and the loader's own decode threads.
//
//   LIBSHARD_ASSIGN_OR_RETURN(SampleDecoder d, SampleDecoder::Create(dataset, options));
//   std::vector<uint8_t> image(d.sample_bytes());
//   int64_t label = -1;
//   LIBSHARD_RETURN_IF_ERROR(d.Decode(7, /*epoch=*/0, image.data(), nullptr, &label));
//
// Errors name the shard file, the record number and its byte offset;
// exceptions (std::bad_alloc above all) become a Status. Lifetime: the
// decoder shares the dataset (shared_ptr). Thread-safety: Decode() may run
// on many threads at once (per-thread buffers); the object is immutable
// after Create().
#ifndef LIBSHARD_READER_SAMPLE_DECODER_H_
#define LIBSHARD_READER_SAMPLE_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/image/image.h"
#include "libshard/reader/batch_layout.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/loader_options.h"
#include "libshard/status.h"
#include "libshard/util/random.h"

namespace libshard::reader {

class SampleDecoder {
 public:
  SampleDecoder() = default;
  // Checks `options` against `dataset` (ResolveLoaderOptions: the stored size
  // and channels filled in, threads resolved) and prepares the output
  // conversion; the InvalidArgument errors of ResolveLoaderOptions and
  // SampleConverter::Create. Only the options' geometry, augmentation, seed
  // (order.seed), layout, dtype, masks, boxes and extras are used.
  static StatusOr<SampleDecoder> Create(std::shared_ptr<const Dataset> dataset, const BatchLoaderOptions& options);

  // The options as resolved by Create().
  const BatchLoaderOptions& options() const { return opt_; }
  // Bytes of one sample's image in the options' layout and dtype.
  size_t sample_bytes() const { return converter_.sample_bytes(); }
  // Bytes of one sample's mask (H x W with options.masks, else 0).
  size_t mask_bytes() const { return opt_.masks ? static_cast<size_t>(opt_.width) * opt_.height : 0; }

  // Decodes global sample `sample` as it appears at `epoch` into `image`
  // (sample_bytes(), aligned for the dtype) and, with options.masks and a
  // `mask` that is not null, its mask (mask_bytes()); *label gets the
  // record's label (-1 when absent or when the record fails before its label
  // is read; a mixture's merged label). `extras`, when not null: the record's
  // values of options.extras, one ExtraValues per key, replaced whole.
  // `boxes`, when not null: the record's boxes after the sample's geometry
  // with options.boxes, else cleared. OutOfRange for a sample past the
  // dataset; DataLoss / InvalidArgument for a record that breaks the
  // image-record contract.
  Status Decode(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label,
                std::vector<ExtraValues>* extras = nullptr, SampleBoxes* boxes = nullptr) const;

 private:
  SampleDecoder(std::shared_ptr<const Dataset> dataset, const BatchLoaderOptions& options, SampleConverter converter);
  Status DecodeUint8(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mask, int64_t* label,
                     std::vector<ExtraValues>* extras, SampleBoxes* boxes) const;
  Status DecodeImagePart(const example::ExampleView& ex, util::SplitMix64* rng, uint8_t* dst, uint8_t* mask,
                         int64_t* label, SampleBoxes* boxes) const;
  // "FILE record N", for messages.
  std::string RecordName(uint64_t sample) const;

  std::shared_ptr<const Dataset> ds_;
  BatchLoaderOptions opt_;
  SampleConverter converter_;
  size_t decoded_bytes_ = 0;  // per sample, as decoded (uint8 HWC)
};

// The crop box (in the record's stored pixels) kRandomResizedCrop draws for
// global sample `sample` at `epoch` of a `width` x `height` record under
// `options` (its seed and rrc): what the decoder resamples to H x W. For
// benchmarks and tests that reproduce the loader's geometry; a pure function.
image::PixelRect RandomResizedCropOf(const BatchLoaderOptions& options, uint64_t epoch, uint64_t sample, int width,
                                     int height);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SAMPLE_DECODER_H_
