// One sample of a batch (sample_decoder.h).
#include "libshard/reader/sample_decoder.h"

#include <utility>
#include <vector>

#include "libshard/example/image_record.h"
#include "reader/augment.h"
#include "reader/batch_boxes.h"
#include "util/catch_status.h"

namespace libshard::reader {

SampleDecoder::SampleDecoder(std::shared_ptr<const Dataset> dataset, const BatchLoaderOptions& options,
                             SampleConverter converter)
    : ds_(std::move(dataset)),
      opt_(options),
      converter_(std::move(converter)),
      decoded_bytes_(static_cast<size_t>(options.width) * options.height * options.channels) {}

StatusOr<SampleDecoder> SampleDecoder::Create(std::shared_ptr<const Dataset> dataset,
                                              const BatchLoaderOptions& given) {
  if (dataset == nullptr) return InvalidArgumentError("SampleDecoder: no dataset");
  BatchLoaderOptions options = given;
  LIBSHARD_RETURN_IF_ERROR(ResolveLoaderOptions(*dataset, &options));
  LIBSHARD_ASSIGN_OR_RETURN(SampleConverter converter,
                            SampleConverter::Create(options.layout, options.dtype, options.mean, options.std,
                                                    options.height, options.width, options.channels));
  return SampleDecoder(std::move(dataset), options, std::move(converter));
}

namespace {

// The values of `keys` in `ex`, one ExtraValues per key (kNone when absent);
// in a mixture, "source" is the sample's source (`source` >= 0), not a
// feature.
void ReadExtras(const example::ExampleView& ex, const std::vector<std::string>& keys, int64_t source,
                std::vector<ExtraValues>* out) {
  out->assign(keys.size(), ExtraValues{});
  for (size_t k = 0; k < keys.size(); ++k) {
    if (source >= 0 && keys[k] == kSourceExtra) {
      (*out)[k].kind = example::FeatureKind::kInt64;
      (*out)[k].ints.push_back(source);
      continue;
    }
    example::FeatureView f;
    if (!ex.Find(keys[k], &f)) continue;
    ExtraValues& v = (*out)[k];
    v.kind = f.kind();
    for (size_t i = 0; i < f.size(); ++i) {
      if (f.kind() == example::FeatureKind::kBytes) v.bytes.emplace_back(f.bytes(i));
      if (f.kind() == example::FeatureKind::kInt64) v.ints.push_back(f.int64(i));
      if (f.kind() == example::FeatureKind::kFloat) v.floats.push_back(f.float_value(i));
    }
  }
}

}  // namespace

Status SampleDecoder::DecodeUint8(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst, int64_t* label,
                                  std::vector<ExtraValues>* extras, SampleBoxes* boxes) const {
  thread_local RecordBuffer buf;
  std::string_view rec;
  uint64_t offset = 0;
  LIBSHARD_RETURN_IF_ERROR(ds_->ReadRecord(sample, &buf, &rec, &offset, /*planned=*/true));
  const Dataset::Location loc = ds_->Locate(sample);
  auto context = [&] {
    return ds_->shard_path(loc.shard) + ": record " + std::to_string(loc.record) + " at byte " + std::to_string(offset);
  };
  auto ex = example::ExampleView::Parse(rec);
  if (!ex.ok()) return ex.status().WithContext(context());
  util::SplitMix64 rng = AugmentRng(opt_.order.seed, epoch, sample);
  LIBSHARD_RETURN_IF_ERROR(DecodeImagePart(*ex, &rng, dst, mdst, label, boxes).WithContext(context()));
  *label = ds_->MapLabel(sample, *label);  // a mixture's merged label map
  if (extras != nullptr) ReadExtras(*ex, opt_.extras, ds_->SourceOf(sample), extras);
  return Status::OK();
}

// The record contract is example/image_record's and the pixels
// record_pixels'; the loader only chooses the geometry (and draws the
// augmentation).
Status SampleDecoder::DecodeImagePart(const example::ExampleView& ex, util::SplitMix64* rng, uint8_t* dst,
                                      uint8_t* mdst, int64_t* label, SampleBoxes* boxes) const {
  *label = -1;
  const example::ImageRecordKeys& keys = ds_->options().keys;
  LIBSHARD_ASSIGN_OR_RETURN(example::ImageRecord rec, example::ParseImageRecord(ex, keys, {}));
  *label = rec.label;
  const PixelRequest req = SamplePixelRequest(opt_, rec.width, rec.height, rng);
  LIBSHARD_RETURN_IF_ERROR(DecodeRecordPixels(rec, keys, {}, req, dst, mdst));
  if (boxes == nullptr) return Status::OK();
  return MapSampleBoxes(ex, rec.width, rec.height, req, opt_.box_min_visible, boxes);
}

std::string SampleDecoder::RecordName(uint64_t sample) const {
  const Dataset::Location loc = ds_->Locate(sample);
  return ds_->shard_path(loc.shard) + " record " + std::to_string(loc.record);
}

Status SampleDecoder::Decode(uint64_t sample, uint64_t epoch, uint8_t* dst, uint8_t* mdst, int64_t* label,
                             std::vector<ExtraValues>* extras, SampleBoxes* boxes) const {
  if (ds_ == nullptr || sample >= ds_->size()) {
    return OutOfRangeError("sample " + std::to_string(sample) + " out of range (" +
                           std::to_string(ds_ == nullptr ? 0 : ds_->size()) + " samples)");
  }
  if (!opt_.masks) mdst = nullptr;
  if (boxes != nullptr && !opt_.boxes) {
    *boxes = SampleBoxes{};
    boxes = nullptr;
  }
  return util::CatchAsStatus(
      [&]() -> Status {
        if (converter_.identity()) return DecodeUint8(sample, epoch, dst, mdst, label, extras, boxes);
        // Another layout or dtype: decode to uint8 HWC, then convert into the slot.
        thread_local std::vector<uint8_t> decoded;
        decoded.resize(decoded_bytes_);
        LIBSHARD_RETURN_IF_ERROR(DecodeUint8(sample, epoch, decoded.data(), mdst, label, extras, boxes));
        converter_.Convert(decoded.data(), dst);
        return Status::OK();
      },
      [&] { return "decoding " + RecordName(sample); });
}

}  // namespace libshard::reader
