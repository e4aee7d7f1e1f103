// `shard convert --dry-run` (convert_dry_run.h).
#include "convert_dry_run.h"

#include <cstdio>
#include <iostream>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "json_writer.h"
#include "libshard/image/encode.h"
#include "libshard/image/raw_array.h"
#include "libshard/text_escape.h"

namespace shard_tool {

namespace convert = libshard::convert;
namespace image = libshard::image;
using libshard::DisplayText;
using libshard::Status;
using libshard::StatusOr;

// The exit code for a failed conversion. Converter's contract: a bad option
// or an unreadable input (listing, CSV, labels file, prefix, split names)
// is kInvalidArgument or kNotFound, returned before anything is written:
// those are usage errors; the rest (a full disk, --on-error fail) failures.
int ExitCodeFor(const Status& s) {
  const libshard::StatusCode c = s.code();
  return c == libshard::StatusCode::kInvalidArgument || c == libshard::StatusCode::kNotFound ? kExitUsage
                                                                                             : kExitFailure;
}

// What the records will hold, e.g. "jpeg quality 90, 3 channels (rgb)".
std::string OutputDescription(const convert::ConvertOptions& o) {
  std::string format = image::OutputFormatName(o.encode.format);
  if (o.encode.format == image::OutputFormat::kJpeg) {
    format += " quality " + std::to_string(o.encode.jpeg.quality);
    if (o.encode.reencode == image::ReencodeMode::kAuto) format += " (JPEGs needing no change copied)";
  } else if (o.encode.format == image::OutputFormat::kRaw) {
    format += o.encode.raw.zstd_level == 0
                  ? " (stored)"
                  : std::string(" (") + image::RawFormatName(image::RawCompressionFor(o.encode.raw)) + ", zstd level " +
                        std::to_string(o.encode.raw.zstd_level) + ")";
  }
  std::string channels;
  switch (o.encode.decode.channels) {
    case image::ChannelMode::kRgb:
      channels = "3 channels (rgb)";
      break;
    case image::ChannelMode::kGray:
      channels = "1 channel (gray)";
      break;
    case image::ChannelMode::kAuto:
      channels = "1 or 3 channels (auto: gray sources stay gray)";
      break;
  }
  if (o.encode.decode.alpha == image::AlphaMode::kKeep) channels += ", +1 alpha where the source has it";
  return format + ", " + channels;
}

std::string AnnotationCountsText(uint64_t matched, uint64_t unannotated, uint64_t missing, uint64_t boxes) {
  return std::to_string(matched) + " image(s) matched an annotation, " + std::to_string(unannotated) + " without, " +
         std::to_string(missing) + " named but missing; " + std::to_string(boxes) + " boxes";
}

int RunDryRun(const convert::ConvertOptions& o, bool json, bool verbose) {
  StatusOr<convert::DryRunReport> r = convert::DryRun(o);
  if (!r.ok()) {
    std::cerr << "shard convert: " << r.status().message() << "\n";
    return ExitCodeFor(r.status());
  }
  const convert::Listing& l = r->listing;
  const bool boxes = o.annotations.format != convert::AnnotationFormat::kNone;
  const convert::AnnotationSummary& a = l.annotations;
  // Annotations that no image matched (a wrong folder): a failure, as convert's.
  const int code = boxes && a.annotated_images == 0 ? kExitRejected : kExitOk;
  if (json) {
    JsonWriter w(std::cout);
    w.BeginObject();
    w.Field("input", l.root);
    w.Field("output", o.output);
    w.Field("output_format", image::OutputFormatName(o.encode.format));
    w.Field("output_description", OutputDescription(o));
    w.Field("samples", static_cast<uint64_t>(l.samples.size()));
    w.Field("layout", l.layout);
    w.Key("split_folders");
    w.BeginArray();
    for (const auto& [folder, split] : l.split_folders) {
      w.BeginObject();
      w.Field("folder", folder);
      w.Field("split", split);
      w.EndObject();
    }
    w.EndArray();
    w.Key("classes");
    w.BeginArray();
    for (const std::string& c : l.class_names) w.String(c);
    w.EndArray();
    w.Key("counts");
    w.BeginArray();
    for (const auto& c : r->counts) {
      w.BeginObject();
      w.Field("split", c.split);
      w.Field("class", c.class_name);
      w.Field("count", c.count);
      w.EndObject();
    }
    w.EndArray();
    w.Key("formats");
    w.BeginObject();
    for (const auto& c : r->formats) w.Field(c.name(), static_cast<uint64_t>(c.count()));
    w.EndObject();
    w.Key("shards");
    w.BeginArray();
    for (const auto& s : r->plan.shards) {
      w.BeginObject();
      w.Field("file", s.file);
      w.Field("split", s.split);
      w.Field("samples", static_cast<uint64_t>(s.samples.size()));
      w.EndObject();
    }
    w.EndArray();
    w.Key("risky");
    w.BeginArray();
    for (const auto& x : r->risky) {
      w.BeginObject();
      w.Field("path", x.path());
      w.Field("reason", x.reason());
      w.EndObject();
    }
    w.EndArray();
    w.Field("gray_expanded", r->gray_expanded);
    w.Key("skipped");
    w.BeginObject();
    w.Key("non_image");
    w.BeginObject();
    for (const auto& [ext, n] : l.skipped.non_image) w.Field(ext, n);
    w.EndObject();
    w.Field("excluded", l.skipped.excluded);
    w.Field("not_included", l.skipped.not_included);
    w.EndObject();
    w.Key("warnings");
    w.BeginArray();
    for (const std::string& x : l.warnings) w.String(x);
    w.EndArray();
    w.Key("rejects");
    w.BeginArray();
    for (const auto& x : l.rejects) {
      w.BeginObject();
      w.Field("path", x.path);
      w.Field("reason", x.reason);
      w.EndObject();
    }
    w.EndArray();
    if (boxes) {
      w.Key("annotations");
      w.BeginObject();
      w.Field("format", convert::AnnotationFormatName(o.annotations.format));
      w.Field("matched_images", a.annotated_images);
      w.Field("unannotated_images", a.unannotated_images);
      w.Field("missing_images", a.missing_images);
      w.Field("boxes", a.boxes);
      w.EndObject();
    }
    w.EndObject();
    std::cout << "\n";
    return code;
  }
  std::error_code ec;
  std::string input = std::filesystem::absolute(l.root, ec).lexically_normal().string();
  while (input.size() > 1 && input.back() == '/') input.pop_back();
  for (const std::string& w : l.warnings) std::fprintf(stderr, "shard convert: warning: %s\n", w.c_str());
  std::printf("dry run: %zu samples in %s, %zu classes; nothing written\n", l.samples.size(),
              (ec ? l.root : input).c_str(), l.class_names.size());
  std::printf("%s\n", convert::LayoutSummary(l).c_str());
  std::printf("output: %zu shards in %s; %s\n", r->plan.shards.size(), o.output.c_str(), OutputDescription(o).c_str());
  std::printf("%-12s %-24s %8s\n", "split", "class", "samples");
  for (const auto& c : r->counts) {
    std::printf("%-12s %-24s %8llu\n", DisplayText(c.split).c_str(),
                c.class_name.empty() ? "(unlabeled)" : DisplayText(c.class_name).c_str(),
                static_cast<unsigned long long>(c.count));
  }
  std::printf("formats:");
  for (const auto& c : r->formats)
    std::printf(" %s %llu", c.name().c_str(), static_cast<unsigned long long>(c.count()));
  std::map<std::string, int> per_split;
  for (const auto& s : r->plan.shards) ++per_split[s.split];
  std::printf("\nshards:");
  for (const auto& [split, n] : per_split) std::printf(" %s %d", split.c_str(), n);
  std::printf("\n");
  const size_t show = verbose ? r->risky.size() : std::min<size_t>(r->risky.size(), 20);
  std::printf("risky inputs: %zu\n", r->risky.size());
  for (size_t i = 0; i < show; ++i) {
    std::printf("  %s: %s\n", DisplayText(r->risky[i].path()).c_str(), DisplayText(r->risky[i].reason()).c_str());
  }
  if (show < r->risky.size()) std::printf("  ... %zu more (-v lists all)\n", r->risky.size() - show);
  if (r->gray_expanded > 0) {
    std::printf("gray sources: %llu will be stored as RGB (--channels auto keeps them gray)\n",
                static_cast<unsigned long long>(r->gray_expanded));
  }
  if (const std::string skips = convert::SkipSummary(l.skipped); !skips.empty()) std::printf("%s\n", skips.c_str());
  if (boxes) {
    std::printf("annotations (%s): %s\n", convert::AnnotationFormatName(o.annotations.format),
                AnnotationCountsText(a.annotated_images, a.unannotated_images, a.missing_images, a.boxes).c_str());
  }
  std::printf("rejected while listing: %zu\n", l.rejects.size());
  for (const auto& x : l.rejects) {
    std::printf("  %s: %s\n", DisplayText(x.path).c_str(), DisplayText(x.reason).c_str());
  }
  return code;
}

}  // namespace shard_tool
