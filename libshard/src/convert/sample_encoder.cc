#include "libshard/convert/sample_encoder.h"

#include "convert/listing_internal.h"
#include "convert/object_features.h"
#include "libshard/convert/annotations.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/image_keys.h"
#include "libshard/image/pipeline.h"
#include "libshard/util/sha256.h"

namespace libshard::convert {
namespace {

using image::Image;
using image::OutputFormat;

StatusOr<std::string> EncodeAs(const Image& img, const EncodeOptions& o, OutputFormat format,
                               std::string* format_name) {
  switch (format) {
    case OutputFormat::kJpeg:
      *format_name = "jpeg";
      return image::EncodeJpeg(img, o.jpeg);
    case OutputFormat::kPng:
      *format_name = "png";
      return image::EncodePng(img, o.png);
    case OutputFormat::kRaw:
      *format_name = image::RawFormatName(image::RawCompressionFor(o.raw));
      return image::EncodeRaw(img, o.raw);
  }
  return InternalError("unknown output format");
}

// The mask as a 1-channel index image of the (oriented) source size.
StatusOr<Image> DecodeMask(std::string_view bytes, const EncodeOptions& o) {
  if (o.mask_labels == nullptr) return image::DecodeIndexMask(bytes, o.decode.max_pixels);
  image::DecodeOptions d;
  d.max_pixels = o.decode.max_pixels;
  d.channels = image::ChannelMode::kRgb;
  LIBSHARD_ASSIGN_OR_RETURN(Image rgb, image::DecodeImage(bytes, d));
  return o.mask_labels->Apply(rgb, o.mask_options);
}

}  // namespace

const char* ColorspaceName(int channels) {
  switch (channels) {
    case 1:
      return "Grayscale";
    case 2:
      return "GrayscaleAlpha";
    case 3:
      return "RGB";
    case 4:
      return "RGBA";
  }
  return "unknown";
}

Status ValidateEncodeOptions(const EncodeOptions& o) {
  if (o.jpeg.quality < 1 || o.jpeg.quality > 100) {
    return InvalidArgumentError("JPEG quality must be 1..100, not " + std::to_string(o.jpeg.quality));
  }
  LIBSHARD_RETURN_IF_ERROR(image::ValidateRawEncodeOptions(o.raw));
  if (o.png.compression_level < 0 || o.png.compression_level > 9) {
    return InvalidArgumentError("PNG compression level must be 0..9");
  }
  if (o.transform.mode != image::ResizeMode::kNone && (o.transform.width <= 0 || o.transform.height <= 0)) {
    return InvalidArgumentError(std::string("resize mode ") + image::ResizeModeName(o.transform.mode) +
                                " needs a size");
  }
  if (o.transform.mode == image::ResizeMode::kShorterSide && o.transform.width != o.transform.height) {
    return InvalidArgumentError("resize mode shorter-side takes one size N (the shorter side), got " +
                                std::to_string(o.transform.width) + "x" + std::to_string(o.transform.height));
  }
  // JPEG has no alpha: every image with alpha would be decoded, then rejected.
  if (o.decode.alpha == image::AlphaMode::kKeep && o.format == OutputFormat::kJpeg) {
    return InvalidArgumentError(
        "--alpha keep needs --format png or raw: JPEG has no alpha channel (every image "
        "with alpha would be rejected); --alpha composite flattens it over the background");
  }
  return Status::OK();
}

Status EncodeSample(const SourceSample& sample, std::string_view class_name, std::string_view bytes,
                    std::string_view mask_bytes, const EncodeOptions& o, EncodedSample* out, StatsAccumulator* stats) {
  LIBSHARD_ASSIGN_OR_RETURN(out->source, image::ProbeImage(bytes, o.decode.tiff_page));
  const image::ImageInfo& info = out->source;
  image::DecodeOptions decode = o.decode;
  decode.keep_16bit = o.format == OutputFormat::kRaw;
  decode.jpeg_scale_denom = 1;
  const bool oriented = info.format == image::ImageFormat::kJpeg && decode.apply_orientation;
  const int src_w = oriented ? info.oriented_width() : info.width;
  const int src_h = oriented ? info.oriented_height() : info.height;
  LIBSHARD_ASSIGN_OR_RETURN(image::Geometry geometry, image::PlanGeometry(src_w, src_h, o.transform));

  const bool has_mask = !sample.mask_path.empty();
  image::PassThroughDecision pass = image::DecidePassThrough(info, decode, geometry, o.format, o.reencode);
  out->passed_through = pass.pass_through && !has_mask;

  thread_local Image decoded;
  Image output, mask;
  std::string encoded, format_name;
  if (out->passed_through) {
    LIBSHARD_RETURN_IF_ERROR(image::DecodeImageInto(bytes, decode, &decoded));
    encoded.assign(bytes.data(), bytes.size());
    format_name = "jpeg";
  } else {
    if (has_mask) {
      LIBSHARD_RETURN_IF_ERROR(image::DecodeImageInto(bytes, decode, &decoded));
      StatusOr<Image> mask_or = DecodeMask(mask_bytes, o);
      if (!mask_or.ok()) {
        return mask_or.status().WithContext(
            "mask " + sample.mask_path +
            (o.mask_labels_file.empty() ? std::string() : " (colours of " + o.mask_labels_file + ")"));
      }
      Image raw_mask = std::move(*mask_or);
      if (raw_mask.width() != decoded.width() || raw_mask.height() != decoded.height()) {
        return InvalidArgumentError("mask " + sample.mask_path + " is " + std::to_string(raw_mask.width()) + "x" +
                                    std::to_string(raw_mask.height()) + ", image is " +
                                    std::to_string(decoded.width()) + "x" + std::to_string(decoded.height()));
      }
      LIBSHARD_ASSIGN_OR_RETURN(
          image::ImageAndMask both,
          image::ApplyGeometryPair(decoded, raw_mask, geometry, o.transform, o.mask_options.ignore_index));
      output = std::move(both.image);
      mask = std::move(both.mask);
    } else {
      LIBSHARD_ASSIGN_OR_RETURN(output, image::DecodeAndTransform(bytes, decode, o.transform));
    }
    LIBSHARD_ASSIGN_OR_RETURN(encoded, EncodeAs(output, o, o.format, &format_name));
  }
  const Image& pixels = out->passed_through ? decoded : output;
  const std::string file_sha256 = util::Sha256Hex(bytes);
  // The exact key: the stored bytes' SHA-256 (duplicates.h, FingerprintOf);
  // a pass-through stores the file's bytes, whose SHA-256 is at hand.
  out->fingerprint = o.fingerprint ? FingerprintOf(pixels, out->passed_through ? file_sha256 : util::Sha256Hex(encoded))
                                   : ImageFingerprint{};

  StatsAccumulator box_stats;  // added to *stats only on success
  thread_local example::ExampleBuilder b;
  b.Clear();
  b.AddBytes(keys::kEncoded, encoded);
  b.AddBytes(keys::kFormat, format_name);
  b.AddInt64(keys::kHeight, pixels.height());
  b.AddInt64(keys::kWidth, pixels.width());
  b.AddInt64(keys::kChannels, pixels.channels());
  b.AddBytes(keys::kColorspace, ColorspaceName(pixels.channels()));
  if (o.format == OutputFormat::kRaw) {
    const int64_t shape[3] = {pixels.height(), pixels.width(), pixels.channels()};
    b.AddInt64List(keys::kShape, shape, 3);
    b.AddBytes(keys::kDtype, image::RawDtypeName(pixels.bit_depth()));
  }
  if (sample.label >= 0) {
    b.AddInt64(keys::kLabel, sample.label);
    b.AddBytes(keys::kText, class_name);
  }
  b.AddBytes(keys::kFilename, sample.path);
  b.AddBytes(keys::kSha256, file_sha256);
  internal::AddFeatures(o.features, sample.features, &b);
  if (has_mask) {
    std::string mask_format;
    const OutputFormat mf = o.format == OutputFormat::kRaw ? OutputFormat::kRaw : OutputFormat::kPng;
    LIBSHARD_ASSIGN_OR_RETURN(std::string mask_encoded, EncodeAs(mask, o, mf, &mask_format));
    b.AddBytes(keys::kMaskEncoded, mask_encoded);
    b.AddBytes(keys::kMaskFormat, mask_format);
  }
  if (sample.objects != nullptr) {
    b.AddBytes(keys::kSourceId, sample.objects->source_id.empty() ? sample.path : sample.objects->source_id);
    const int orientation = oriented ? info.orientation : 1;
    LIBSHARD_RETURN_IF_ERROR(
        internal::AddObjectFeatures(*sample.objects, info, orientation, geometry, o, &b, &box_stats));
  }
  out->record.clear();
  b.SerializeTo(&out->record);
  out->image_bytes = encoded.size();

  stats->Merge(box_stats);
  stats->AddPixels(pixels);
  if (sample.label >= 0) stats->AddLabel(sample.label);
  if (has_mask) stats->AddMaskPixels(mask);
  stats->AddSource(image::ImageFormatName(info.format), info.width, info.height, bytes.size());
  stats->AddConverted(out->passed_through, encoded.size());
  return Status::OK();
}

}  // namespace libshard::convert
