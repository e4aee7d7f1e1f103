// What a BatchLoader (batch_loader.h) and a SampleDecoder (sample_decoder.h)
// are asked for: the output geometry, the order, the augmentation, the
// output layout and dtype, error handling, extras and boxes; and the one
// check of those options against a dataset (ResolveLoaderOptions).
//
//   BatchLoaderOptions o;
//   o.height = o.width = 0;  // the stored size
//   LIBSHARD_RETURN_IF_ERROR(ResolveLoaderOptions(*dataset, &o));
//   // o.width, o.height, o.channels and o.threads now hold what the loader uses
//
// Plain values; thread-safety as for any struct. ResolveLoaderOptions is a
// pure function of the dataset's manifests and the options.
#ifndef LIBSHARD_READER_LOADER_OPTIONS_H_
#define LIBSHARD_READER_LOADER_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/image/box_geometry.h"
#include "libshard/image/resize.h"
#include "libshard/image/transform.h"
#include "libshard/reader/batch_layout.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/sample_order.h"
#include "libshard/status.h"

namespace libshard::reader {

enum class Augment { kNone, kRandomResizedCrop };
// "none" / "random-resized-crop".
const char* AugmentName(Augment a);
StatusOr<Augment> ParseAugment(std::string_view name);

struct RandomResizedCropOptions {
  // Fraction of the image area kept, [min, max]. Default: 0.08.
  double scale_min = 0.08;
  // Default: 1.0.
  double scale_max = 1.0;
  // Aspect ratio (w / h) range, sampled log-uniformly. Default: 3/4.
  double ratio_min = 3.0 / 4.0;
  // Default: 4/3.
  double ratio_max = 4.0 / 3.0;
  // Horizontal flip with probability 1/2. Default: true.
  bool flip = true;
};

struct BatchLoaderOptions {
  // Samples per batch. Default: 32.
  size_t batch_size = 32;
  // Output height in pixels; height = width = 0: the stored size, when the
  // dataset's manifests say every image has it (Dataset::stored_shape(),
  // else InvalidArgument naming the sizes found). Default: 224.
  int height = 224;
  // Output width in pixels (0: see height). Default: 224.
  int width = 224;
  // Output channels: 1 (gray, Pillow "L" weights) or 3 (RGB); 0: 1 when
  // the manifests say every stored image is gray (with or without alpha),
  // else 3. Default: 3.
  int channels = 3;
  // Order and partition (its batch_size is replaced by the one above; a
  // null global_order is the dataset's mixture(), if any).
  // Default: sequential, rank 0 of 1.
  OrderOptions order;
  // Default: kNone.
  Augment augment = Augment::kNone;
  // kRandomResizedCrop parameters. Default: torchvision's.
  RandomResizedCropOptions rrc;
  // kNone: how an image of another size reaches H x W: kCenterCrop,
  // kStretch, kLetterbox or kCropOrPad. Default: kCenterCrop.
  image::ResizeMode resize = image::ResizeMode::kCenterCrop;
  // kRandomResizedCrop, and a kCenterCrop / kCropOrPad resize that cuts the
  // image (an eval centre crop), on a JPEG: decode only the rows and iMCU
  // columns the crop (plus the filter's reach) needs instead of the whole
  // image. Exactly the full decode's pixels (tested byte for byte). Default:
  // true.
  bool crop_decode = true;
  // JPEG DCT scaling (1/2, 1/4, 1/8) when the region the resize reads covers
  // at least twice the output size in both directions (image::ChooseJpegScale,
  // Pillow's draft() rule), with or without augmentation: much faster on
  // large photos, a mean |difference| of about 1-4 levels from the full-scale
  // decode (docs/performance.md). false: every JPEG decoded at full scale, the
  // exact pixels of image::DecodeImage + image::Transform. Default: true.
  bool dct_scale = true;
  // Resampling filter. Default: kBilinear.
  image::Filter filter = image::Filter::kBilinear;
  // Decode threads (including the loader's own producer thread), 0..256; 0 =
  // one per core (util::ThreadCount, as convert and verify take it; options()
  // then says how many). Default: 2.
  int threads = 2;
  // Batches decoded ahead when the loader owns the buffers. Default: 2.
  size_t prefetch = 2;
  // Also produce segmentation masks. Default: false.
  bool masks = false;
  // Mask value for padded pixels (letterbox / crop-or-pad). Default: 0.
  uint8_t mask_fill = 0;
  // Image layout in the batch: kNHWC (channels last) or kNCHW (channels
  // first). Masks stay N x H x W. Default: kNHWC.
  Layout layout = Layout::kNHWC;
  // Image values: kUint8 (as decoded), kFloat32 or kFloat16 ((x / 255 -
  // mean[c]) / std[c]). Default: kUint8.
  PixelType dtype = PixelType::kUint8;
  // Per-channel mean and standard deviation on the 0..1 scale (torchvision's
  // Normalize), `channels` values each, float dtypes only; empty means 0 / 1.
  // Default: empty.
  std::vector<double> mean;
  // Default: empty.
  std::vector<double> std;
  // A record that fails the image-record contract (a corrupt image, a bad
  // shape, a record that is not an Example: DataLoss / InvalidArgument):
  // kRaise fails its batch (Next() returns the error); kSkip records it
  // (skipped()) and decodes the next sample of the epoch's global order in
  // its place, up to 8 tries, so the batch stays full and the choice depends
  // neither on threads nor on the partition (a resumed run of another shape
  // replaces it the same way). Other errors (out of memory, I/O) fail the batch
  // either way. Default: kRaise.
  enum class OnError { kRaise, kSkip } on_error = OnError::kRaise;
  // Feature keys read from each sample's record as its pixels are decoded (on
  // the decode threads, within the epoch's read plan: a remote split streams
  // through its cache_limit with them as without them) and handed out in
  // Batch::extras. In a mixture (Dataset::mixture()), the key "source"
  // (kSourceExtra) is the index of the sample's source instead. Default: empty.
  std::vector<std::string> extras;
  // Detection boxes (example/box_record.h's keys) per sample in Batch::boxes,
  // moved with the pixels: the resize mode's scale, crop and padding,
  // kRandomResizedCrop's crop and flip. A box cut by a crop is clipped; one
  // keeping less than box_min_visible of its area is dropped (both counted).
  // A record without box keys has zero boxes; malformed box keys fail the
  // sample like a corrupt image (DataLoss naming file and record; skipped
  // under kSkip). Default: false.
  bool boxes = false;
  // Boxes per sample in the padded batch arrays, 1..100000; a sample with
  // more keeps its first max_boxes (after the geometry) and the rest are
  // counted in BatchBoxes::truncated. Default: 100 (the Object Detection
  // API's and DETR's usual cap).
  size_t max_boxes = 100;
  // Fraction of a box's area that must stay in the crop, [0, 1]
  // (image::BoxMapOptions). Default: 0.3.
  float box_min_visible = 0.3f;
};

// One sample's boxes after the loader's geometry (BatchLoaderOptions::boxes).
struct SampleBoxes {
  std::vector<image::Box> boxes;  // normalised to the output image, record order
  std::vector<int64_t> labels;    // image/object/class/label of each box
  size_t clipped = 0;             // kept boxes cut by the crop
  size_t dropped = 0;             // boxes under box_min_visible (or wholly outside)
};

// A batch's boxes, padded to max_boxes per sample (the batch owns them).
struct BatchBoxes {
  size_t max_boxes = 0;
  // size x max_boxes x 4: xmin, ymin, xmax, ymax normalised to the output
  // image; rows past a sample's count are 0.
  std::vector<float> boxes;
  // size x max_boxes; -1 past a sample's count.
  std::vector<int64_t> labels;
  // size: boxes kept per sample (<= max_boxes).
  std::vector<int32_t> counts;
  // Over the batch: boxes clipped, dropped by the crop, and cut by max_boxes.
  uint64_t clipped = 0;
  uint64_t dropped = 0;
  uint64_t truncated = 0;
};

// The extras key that gives a mixture sample's source index (an int64).
inline constexpr char kSourceExtra[] = "source";

// One feature of BatchLoaderOptions::extras in one sample: its kind (kNone
// when the record lacks it) and its values, in the vector of that kind.
struct ExtraValues {
  example::FeatureKind kind = example::FeatureKind::kNone;
  std::vector<std::string> bytes;
  std::vector<int64_t> ints;
  std::vector<float> floats;
};

// Fills in what `options` leaves to the dataset: height = width = 0 (the
// stored size) and channels = 0 (see BatchLoaderOptions). InvalidArgument
// "no samples: ..." for a dataset of 0 records, and naming the sizes found
// when the stored size is asked for but the images differ.
Status ResolveStoredShape(const Dataset& dataset, BatchLoaderOptions* options);

// The one check of `options` against `dataset`, what BatchLoader::Create and
// SampleDecoder::Create run first: ResolveStoredShape, then InvalidArgument
// naming the field for a batch_size of 0, a size outside 1..65535, channels
// other than 1 or 3, threads outside 0..256, a batch whose bytes overflow, a
// resize mode without a fixed size, random-resized-crop ranges out of order,
// box options out of range, masks from shards whose manifest says they have
// none. On success threads is resolved (util::ThreadCount: 0 = one per core).
// The order's own options are SampleOrder::Create's to check.
Status ResolveLoaderOptions(const Dataset& dataset, BatchLoaderOptions* options);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_LOADER_OPTIONS_H_
