// Private: one sample of a batch from its global number. Reads the record
// from the Dataset, checks it against the image-record contract
// (example/image_record.h), draws its geometry (augment.h) and decodes it
// into the batch slot (record_pixels.h), in the options' layout and dtype
// (batch_layout.h). Errors name the shard file, the record number and its
// byte offset; exceptions (std::bad_alloc above all) become a Status.
//
// Thread-safety: Decode() may run on many threads at once (per-thread
// buffers); the object is immutable after construction.
#ifndef LIBSHARD_SRC_READER_SAMPLE_DECODER_H_
#define LIBSHARD_SRC_READER_SAMPLE_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/reader/batch_layout.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "libshard/status.h"
#include "libshard/util/random.h"

namespace libshard::reader {

class SampleDecoder {
 public:
  SampleDecoder() = default;
  // `options` as BatchLoader::Create validated them (sizes resolved);
  // `converter` for their layout and dtype.
  SampleDecoder(std::shared_ptr<const Dataset> dataset, const BatchLoaderOptions& options, SampleConverter converter);

  // Bytes of one sample in the batch (the converter's).
  size_t sample_bytes() const { return converter_.sample_bytes(); }

  // Decodes global sample `sample` as it appears at `epoch` into `image`
  // (sample_bytes()) and, when `mask` is not null, its mask (H x W bytes);
  // *label gets the record's label (-1 when absent or when the record fails
  // before its label is read). `extras`, when not null: the record's values
  // of options.extras, one ExtraValues per key, replaced whole. `boxes`, when
  // not null: the record's boxes after the sample's geometry (batch_boxes.h).
  Status Decode(uint64_t sample, uint64_t epoch, uint8_t* image, uint8_t* mask, int64_t* label,
                std::vector<ExtraValues>* extras = nullptr, SampleBoxes* boxes = nullptr) const;

 private:
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

}  // namespace libshard::reader

#endif  // LIBSHARD_SRC_READER_SAMPLE_DECODER_H_
