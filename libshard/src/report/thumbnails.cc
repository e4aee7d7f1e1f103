// The report's thumbnails (thumbnails.h).
#include "report/thumbnails.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "libshard/example/box_record.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/image/encode.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/record_pixels.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/util/random.h"
#include "libshard/verify/verifier.h"
#include "report/box_sections.h"
#include "report/page_parts.h"
#include "report/report_context.h"

namespace libshard::report {

Status MakeThumb(const Context& c, std::string_view record, Thumb* out) {
  LIBSHARD_ASSIGN_OR_RETURN(example::ExampleView ex, example::ExampleView::Parse(record));
  example::ImageRecordKeys keys;
  LIBSHARD_ASSIGN_OR_RETURN(example::ImageRecord rec, example::ParseImageRecord(ex, keys, {}));
  example::FeatureView f;
  if (ex.Find(keys::kFilename, &f) && f.kind() == example::FeatureKind::kBytes && f.size() > 0) {
    out->file = std::string(f.bytes(0));
  }
  out->label = rec.has_label ? rec.label : kUnlabeled;
  example::BoxRecord boxes;  // malformed ones are counted by the scan (AddBoxes), not drawn
  if (example::ReadBoxes(ex, &boxes).ok()) {
    out->boxes = std::move(boxes.boxes);
    out->box_labels = std::move(boxes.labels);
  }
  const int side = c.options.thumbnail_size;
  const double scale = std::min(1.0, static_cast<double>(side) / std::max(rec.width, rec.height));
  reader::PixelRequest req;
  req.width = std::max(1, static_cast<int>(std::lround(rec.width * scale)));
  req.height = std::max(1, static_cast<int>(std::lround(rec.height * scale)));
  req.channels = 3;
  if (req.width != rec.width || req.height != rec.height) {
    req.spec.mode = image::ResizeMode::kStretch;
    req.spec.width = req.width;
    req.spec.height = req.height;
    req.spec.filter = image::Filter::kBox;
  }
  image::Image img(req.width, req.height, 3);
  image::Image mask;
  const bool with_mask = !rec.mask.empty();
  if (with_mask) mask.Reset(req.width, req.height, 1);
  LIBSHARD_RETURN_IF_ERROR(
      reader::DecodeRecordPixels(rec, keys, {}, req, img.data(), with_mask ? mask.data() : nullptr));
  image::JpegEncodeOptions jo;
  jo.quality = c.options.thumbnail_quality;
  LIBSHARD_ASSIGN_OR_RETURN(std::string jpeg, image::EncodeJpeg(img, jo));
  out->width = req.width;
  out->height = req.height;
  out->image_url = DataUrl("image/jpeg", jpeg);
  if (with_mask) {
    // The overlay: each pixel in its class colour, the ignore index clear.
    image::Image overlay(req.width, req.height, 4);
    const size_t n = static_cast<size_t>(req.width) * req.height;
    for (size_t i = 0; i < n; ++i) {
      const int index = mask.data()[i];
      uint8_t* px = overlay.data() + 4 * i;
      if (index == c.ignore_index) {
        px[0] = px[1] = px[2] = px[3] = 0;
        continue;
      }
      const Rgb col = MaskColor(c, index);
      px[0] = col[0];
      px[1] = col[1];
      px[2] = col[2];
      px[3] = 255;
    }
    image::PngEncodeOptions po;
    po.compression_level = 9;
    LIBSHARD_ASSIGN_OR_RETURN(std::string png, image::EncodePng(overlay, po));
    out->overlay_url = DataUrl("image/png", png);
  }
  return Status::OK();
}

// Visits records of `split` in a seeded order and keeps the first
// thumbnails_per_class of each shown class.
StatusOr<SplitThumbs> PickThumbs(const Context& c, const SplitEntry& split, const std::set<int64_t>& shown) {
  SplitThumbs t;
  const ReportOptions& o = c.options;
  if (o.thumbnails_per_class == 0 || shown.empty()) return t;
  std::vector<uint64_t> starts;  // first record number of each shard
  uint64_t total = 0;
  for (const ShardEntry& s : split.shards()) {
    starts.push_back(total);
    total += s.records();
  }
  if (total == 0) return t;
  // The seeded order: a permutation of every record, or max_scan_records
  // draws from a huge split.
  uint64_t split_hash = 1469598103934665603ull;
  for (unsigned char ch : split.name()) split_hash = (split_hash ^ ch) * 1099511628211ull;
  util::SplitMix64 rng(util::MixSeed(o.seed, split_hash, 0x7265706f7274ull));
  std::vector<uint64_t> order;
  if (total <= o.max_scan_records) {
    order.resize(total);
    for (uint64_t i = 0; i < total; ++i) order[i] = i;
    for (uint64_t i = total - 1; i > 0; --i) std::swap(order[i], order[rng.Below(i + 1)]);
  } else {
    std::unordered_set<uint64_t> seen;
    for (uint64_t i = 0; i < o.max_scan_records; ++i) {
      const uint64_t r = rng.Below(total);
      if (seen.insert(r).second) order.push_back(r);
    }
  }
  std::vector<std::unique_ptr<reader::ShardReader>> readers(split.shards_size());
  std::vector<bool> failed(split.shards_size());
  const reader::ShardReaderOptions scan = ScanReaderOptions(std::make_shared<io::OpenFileCache>(kScanOpenFiles));
  reader::RecordBuffer buf;
  size_t wanted = shown.size() * static_cast<size_t>(o.thumbnails_per_class);
  for (uint64_t r : order) {
    // With boxes the scan goes on for their counts (bounded by max_scan_records).
    if (wanted == 0 && t.boxes.records + t.boxes.invalid == 0) break;
    const size_t s = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), r) - starts.begin() - 1);
    const std::string shard_path = c.dir + "/" + split.shards(s).file();
    if (!readers[s] && !failed[s]) {
      StatusOr<std::unique_ptr<reader::ShardReader>> opened = reader::ShardReader::Open(shard_path, scan);
      if (opened.ok()) {
        readers[s] = std::move(*opened);
      } else {
        // A missing or damaged shard: the page still shows the rest.
        failed[s] = true;
        if (t.unreadable++ == 0) t.first_error = opened.status().message();
      }
    }
    if (failed[s]) continue;
    ++t.visited;
    std::string_view rec;
    Status st = readers[s]->ReadCopy(r - starts[s], &buf, &rec);
    // Only the label first: most visited records belong to full classes.
    int64_t label = kUnlabeled;
    if (st.ok()) {
      StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec);
      example::FeatureView f;
      if (!ex.ok())
        st = ex.status();
      else if (ex->Find(keys::kLabel, &f) && f.kind() == example::FeatureKind::kInt64 && f.size() > 0)
        label = f.int64(0);
      if (ex.ok()) AddBoxes(*ex, &t.boxes);
    }
    Thumb thumb;
    if (st.ok()) {
      if (wanted == 0 || !shown.count(label) || t.by_label[label].size() >= static_cast<size_t>(o.thumbnails_per_class))
        continue;
      st = MakeThumb(c, rec, &thumb);
    }
    if (!st.ok()) {
      if (t.unreadable++ == 0)
        t.first_error = shard_path + ": record " + std::to_string(r - starts[s]) + ": " + st.message();
      continue;
    }
    t.by_label[label].push_back(std::move(thumb));
    --wanted;
  }
  return t;
}

}  // namespace libshard::report
