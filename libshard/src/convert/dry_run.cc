// DryRun (converter.h): the listing, the plan, and a header probe of every
// input, writing nothing.
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <map>

#include "convert/converter_internal.h"
#include "libshard/io/open_file.h"
#include "util/catch_status.h"

namespace libshard::convert {
namespace {

// (split, class name) -> samples, sorted.
std::vector<DryRunReport::ClassCount> CountClasses(const Listing& l) {
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const SourceSample& s : l.samples) ++counts[{s.split, std::string(ClassName(l, s.label))}];
  std::vector<DryRunReport::ClassCount> out;
  for (const auto& [k, n] : counts) out.push_back({k.first, k.second, n});
  return out;
}

// What makes an input worth a look ("" for nothing): the reasons, comma-separated.
std::string RiskReasons(const image::ImageInfo& info, uint64_t max_pixels) {
  std::string r;
  auto add = [&r](const std::string& what) { r += r.empty() ? what : ", " + what; };
  if (info.cmyk) add(info.ycck ? "YCCK" : "CMYK");
  if (info.progressive) add(info.format == image::ImageFormat::kPng ? "interlaced" : "progressive");
  if (info.bit_depth == 16) add("16-bit");
  if (info.bit_depth == 12) add("12-bit JPEG (not decodable)");
  if (info.has_alpha) add("alpha");
  if (info.orientation != 1) add("EXIF-rotated (orientation " + std::to_string(info.orientation) + ")");
  if (info.arithmetic) add("arithmetic-coded");
  if (info.animated) add("animated WebP (not decodable)");
  const uint64_t pixels = static_cast<uint64_t>(info.width) * static_cast<uint64_t>(info.height);
  if (pixels > max_pixels) {  // as image::CheckPixelLimit decides
    add("over the pixel limit (" + std::to_string(info.width) + "x" + std::to_string(info.height) + " = " +
        std::to_string(pixels) + " pixels > " + std::to_string(max_pixels) + "; rejected)");
  }
  return r;
}

// One input's header probe.
struct Probe {
  std::string format = "unknown";
  std::string reasons;  // RiskReasons, or why it does not probe
  bool gray = false;    // 1 or 2 channels as stored
};

Probe ProbeSample(const Listing& l, const SourceSample& s, uint64_t max_pixels) {
  // 1 MiB covers any JPEG's markers up to SOS in practice (EXIF segments are
  // at most 64 KiB).
  std::string head(1 << 20, '\0');
  if (l.source != nullptr) {
    // A pack's sample is read whole (it is one record).
    StatusOr<std::string> bytes = l.source->Read(s, internal::kMaxSourceBytes);
    head = bytes.ok() ? std::move(*bytes) : std::string();
  } else {
    auto f = io::OpenForRead(SourceFilePath(l.root, s.path));  // regular files only: never blocks on a FIFO
    const int64_t n = f.ok() ? io::PreadFull(f->get(), head.data(), head.size(), 0) : 0;
    head.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
  }
  Probe p;
  StatusOr<image::ImageInfo> info = image::ProbeImage(head);
  if (!info.ok()) {
    p.reasons = "undecodable: " + info.status().message();
    return p;
  }
  p.format = image::ImageFormatName(info->format);
  p.gray = info->channels <= 2;
  p.reasons = RiskReasons(*info, max_pixels);
  return p;
}

}  // namespace

StatusOr<DryRunReport> DryRun(const ConvertOptions& in) {
  const ConvertOptions o = Normalized(in);
  LIBSHARD_RETURN_IF_ERROR(ValidateEncodeOptions(o.encode));
  DryRunReport report;
  LIBSHARD_ASSIGN_OR_RETURN(report.listing, internal::ListInput(o));
  LIBSHARD_RETURN_IF_ERROR(internal::CheckDedupSplits(o, report.listing));
  LIBSHARD_ASSIGN_OR_RETURN(report.plan, MakeShardPlan(report.listing, o.plan));
  const Listing& l = report.listing;
  report.counts = CountClasses(l);

  std::vector<Probe> probes(l.samples.size());
  tbb::parallel_for(size_t{0}, l.samples.size(), [&](size_t i) {
    Status s = util::CatchAsStatus(
        [&] {
          probes[i] = ProbeSample(l, l.samples[i], o.encode.decode.max_pixels);
          return Status::OK();
        },
        [] { return "probing the image"; });
    if (!s.ok()) probes[i] = Probe{"unknown", s.message(), false};
  });
  std::map<std::string, uint64_t> formats;
  for (size_t i = 0; i < l.samples.size(); ++i) {
    ++formats[probes[i].format];
    if (o.encode.decode.channels == image::ChannelMode::kRgb) report.gray_expanded += probes[i].gray;
    if (!probes[i].reasons.empty()) {
      Reject r;
      r.set_path(l.samples[i].path);
      r.set_reason(probes[i].reasons);
      report.risky.push_back(r);
    }
  }
  for (const auto& [name, n] : formats) {
    NamedCount c;
    c.set_name(name);
    c.set_count(n);
    report.formats.push_back(c);
  }
  return report;
}

}  // namespace libshard::convert
