// The dataset report: one self-contained HTML page about a converted dataset
// (`shard report OUT`, `shard convert --report`), for the first questions
// after a conversion: are the classes balanced, did the crops come out
// right, do the masks sit on the images, what was rejected and why.
//
//   report::ReportOptions opts;                   // 6 thumbnails per class, seed 0
//   LIBSHARD_ASSIGN_OR_RETURN(std::string page, report::WriteReportPage("out", "", opts));
//   // page == "out/report.html"
//
// An s3:// or https:// dataset is staged first: remote/remote_report.h.
//
// What the page holds (docs/report.md says the same for users), per split:
// totals (samples, shards, bytes, records per shard), a class-balance bar
// chart (the largest `max_classes` classes by name, then "and N more"),
// source width and aspect histograms when the sizes vary, per-channel
// mean/std, and a grid of thumbnails per class (the file name on hover);
// for segmentation sets each thumbnail carries its mask overlaid in class
// colours, with a legend and the per-class pixel histogram. Then, for the
// whole dataset, the rejects grouped by reason (counts, first files), the
// conversion options, and (with `verify`) the result of `shard verify`.
//
// The page is offline and static: CSS inline, charts as inline SVG written
// as text, thumbnails as data: JPEG (mask overlays as data: PNG), no script,
// no font and no http(s) URL. Its size is bounded whatever the dataset size:
// at most max_classes x thumbnails_per_class thumbnails of at most
// thumbnail_size pixels a side, and at most max_classes rows per chart.
//
// Thumbnails are picked deterministically by `seed`: records are visited in
// a seeded pseudo-random order (every record when a split holds at most
// `max_scan_records`, else that many seeded draws), and each shown class
// takes the first `thumbnails_per_class` of its records in that order. The
// same dataset, options and seed give the same bytes.
//
// Mask overlay colours: a colour-mask set (manifest `mask_classes`) keeps
// its own class colours; an index-mask set gets a fixed palette whose
// colours each have a contrast ratio of at least 3:1 against the page's white
// background (WCAG 2 non-text contrast). Every legend swatch has a border of
// black or white, whichever contrasts more with it (at least 4.5:1), so a
// swatch of any colour stands out. The mask's ignore index is not drawn.
//
// A mixture file (manifest/mixture_json.h: a .json of format
// "libshard.mixture/1", or a folder holding mixture.json and no
// manifest.json) gets a page of its own: each source's dataset, samples and
// weight, and the realised picks of epoch 0 (a shuffled order under `seed`)
// against the weights, as a table and a bar chart.
//
// Errors: NotFound / InvalidArgument naming the file when the folder holds
// no manifest.json or it is not a libshard manifest, or for bad options; I/O
// errors naming the file from writing the page, which is written atomically
// (a temporary name, then rename). A damaged set is not an error: a record or
// shard that cannot be read is skipped for thumbnails and counted on the page
// with the first message (file and offset), and `verify` lists every fault.
// Thread-safety: pure functions apart from the named files.
#ifndef LIBSHARD_REPORT_REPORT_H_
#define LIBSHARD_REPORT_REPORT_H_

#include <cstdint>
#include <string>

#include "libshard/status.h"

namespace libshard::report {

// The report's file name beside manifest.json (`shard convert --report`).
inline constexpr char kReportName[] = "report.html";

struct ReportOptions {
  // Thumbnails per shown class, 0..64 (0: no thumbnails). Default: 6.
  int thumbnails_per_class = 6;
  // Classes listed in a chart and given thumbnails, the largest first; the
  // rest are summed up as "and N more". 1..1000. Default: 40.
  int max_classes = 40;
  // Longest side of a thumbnail in pixels, 16..512. Default: 112.
  int thumbnail_size = 112;
  // JPEG quality of the thumbnails, 1..100. Default: 75.
  int thumbnail_quality = 75;
  // Seed of the thumbnail choice. Default: 0.
  uint64_t seed = 0;
  // Records per split looked at to find thumbnails (a bound on the work for
  // a huge split). At least 1. Default: 20000.
  uint64_t max_scan_records = 20000;
  // Run `shard verify`'s checks over the set (framing, CRCs, Examples,
  // indexes, the manifest) and show the result. Default: false.
  bool verify = false;
  // Decode every image and mask too (`shard verify --decode`); needs
  // `verify`. Default: false.
  bool verify_decode = false;
  // Threads for verify; 0: one per core. Default: 0.
  int threads = 0;
};

// Checks the ranges above; InvalidArgument names the field.
Status ValidateReportOptions(const ReportOptions& options);

// The page for `source`: an output folder of `shard convert` (its
// manifest.json) or a manifest.json itself. Shards are found beside the
// manifest.
StatusOr<std::string> RenderReport(const std::string& source, const ReportOptions& options = {});

// RenderReport, written to `output_path` atomically (a temporary name, then
// rename; nothing left behind on failure). An empty output_path means
// report.html beside the manifest. Returns the path written.
StatusOr<std::string> WriteReportPage(const std::string& source, const std::string& output_path,
                                      const ReportOptions& options = {});

// WriteReportPage; `written_path` (when not null) receives the path written.
Status WriteReport(const std::string& source, const std::string& output_path, const ReportOptions& options = {},
                   std::string* written_path = nullptr);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_REPORT_H_
