// The report page: gathers what the manifest says, picks and decodes the
// thumbnails, and writes the page (page_parts.h draws the pieces).
#include "libshard/report/report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/image/encode.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/record_pixels.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/util/random.h"
#include "libshard/util/threads.h"
#include "libshard/verify/verifier.h"
#include "report/box_sections.h"
#include "report/dataset_sections.h"
#include "report/duplicate_section.h"
#include "report/mixture_section.h"
#include "report/page_parts.h"
#include "report/report_context.h"
#include "report/split_sections.h"
#include "report/thumbnails.h"

namespace libshard::report {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string Basename(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

const char* const kStyle = R"css(
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bar:#2f6fb3;--bg:#fff}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
main{max-width:1200px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0 .4em;overflow-wrap:anywhere}
h2{font-size:1.25em;margin:1.6em 0 .5em;padding-top:.6em;border-top:2px solid var(--line)}
h3{font-size:1.05em;margin:1.2em 0 .4em}
h4{font-size:.95em;margin:1em 0 .3em;overflow-wrap:anywhere}
p,li{overflow-wrap:anywhere}
.muted{color:var(--muted)}
nav a{margin-right:1em}
dl.totals{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:0}
dl.totals div{border:1px solid var(--line);border-radius:6px;padding:6px 10px}
dl.totals dt{color:var(--muted);font-size:.85em}
dl.totals dd{margin:0;font-size:1.15em;font-weight:600}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:16px}
svg.chart{display:block;overflow:visible}
svg.bars{overflow:hidden;max-width:900px}
svg.chart rect{fill:var(--bar)}
svg.chart text{font-size:12px;fill:var(--fg)}
svg.chart .value,svg.chart .caption{fill:var(--muted)}
svg.chart line{stroke:var(--muted)}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;font-size:.9em}
th,td{border-bottom:1px solid var(--line);padding:3px 10px 3px 0;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
td code{overflow-wrap:anywhere}
.swatch{display:inline-block;width:1.1em;height:1.1em;vertical-align:-.2em;margin-right:.4em;border:2px solid}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px}
.classes{display:grid;grid-template-columns:repeat(auto-fill,minmax(270px,1fr));gap:4px 24px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(80px,1fr));gap:6px}
figure{margin:0;min-width:0}
.thumb{position:relative;background:#eee;border:1px solid var(--line)}
.thumb img{display:block;width:100%;height:auto}
.thumb img.small{image-rendering:pixelated}
.thumb img.overlay{position:absolute;left:0;top:0;height:100%;opacity:.5}
.thumb svg.boxes{position:absolute;left:0;top:0;width:100%;height:100%;fill:none;stroke-width:2px;vector-effect:non-scaling-stroke}
.thumb svg.boxes rect{vector-effect:non-scaling-stroke}
.leak-pairs{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:10px 24px}
.leak-pair{display:grid;grid-template-columns:1fr 1fr;gap:4px}.leak-pair p{grid-column:1/3;margin:0;font-size:12px}
figcaption{font-size:11px;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
@media (max-width:480px){main{padding:10px}table{font-size:.8em}th,td{padding-right:6px}}
.ok{color:#116329;font-weight:600}
.bad{color:#a40e26;font-weight:600}
)css";

}  // namespace

Status ValidateReportOptions(const ReportOptions& o) {
  auto bad = [](const char* field, const char* range) {
    return InvalidArgumentError(std::string("report option ") + field + " must be in " + range);
  };
  if (o.thumbnails_per_class < 0 || o.thumbnails_per_class > 64) return bad("thumbnails_per_class", "0..64");
  if (o.max_classes < 1 || o.max_classes > 1000) return bad("max_classes", "1..1000");
  if (o.thumbnail_size < 16 || o.thumbnail_size > 512) return bad("thumbnail_size", "16..512");
  if (o.thumbnail_quality < 1 || o.thumbnail_quality > 100) return bad("thumbnail_quality", "1..100");
  if (o.max_scan_records < 1) return bad("max_scan_records", "1..2^64-1");
  if (o.threads < 0 || o.threads > util::kMaxThreads) {
    return bad("threads", ("0.." + std::to_string(util::kMaxThreads)).c_str());
  }
  if (o.verify_decode && !o.verify) return InvalidArgumentError("report option verify_decode needs verify");
  return Status::OK();
}

namespace {

StatusOr<std::string> ManifestPathFor(const std::string& source) {
  if (source.empty()) return InvalidArgumentError("report: no dataset folder or manifest given");
  return IsDirectory(source) ? manifest::ManifestInFolder(source) : source;
}

}  // namespace

// Where a split goes on the page: train, val, test, then any other.
int SplitRank(const std::string& name) {
  std::string l = name;
  for (char& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (l == "train" || l == "training") return 0;
  if (l == "val" || l == "valid" || l == "validation" || l == "dev" || l == "development") return 1;
  if (l == "test" || l == "testing") return 2;
  return 3;
}

// "7 classes", "12 mask classes" (segmentation by a colour map),
// "segmentation masks" (index masks) or "unlabeled".
std::string ClassesPhrase(const Manifest& m) {
  if (m.labels_size() > 0) return FormatCount(m.labels_size()) + " classes";
  if (m.mask_classes_size() > 0) return FormatCount(m.mask_classes_size()) + " mask classes";
  if (m.stats().mask_pixels_size() > 0) return "segmentation masks";
  return "unlabeled";
}

StatusOr<std::string> RenderReport(const std::string& source, const ReportOptions& options) {
  LIBSHARD_RETURN_IF_ERROR(ValidateReportOptions(options));
  if (std::optional<std::string> mixture = MixtureFileOf(source)) {  // mixture_section.h
    LIBSHARD_ASSIGN_OR_RETURN(std::string body, MixtureSection(*mixture, options.seed));
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           "<title>libshard report: mixture " +
           HtmlEscape(Basename(*mixture)) + "</title><style>" + kStyle +
           "</style></head><body><main><h1>Mixture report: " + HtmlEscape(Basename(*mixture)) +
           "</h1><p class=\"muted\">" + HtmlEscape(*mixture) + "</p>" + body + "</main></body></html>\n";
  }
  Context c;
  c.options = options;
  LIBSHARD_ASSIGN_OR_RETURN(c.manifest_path, ManifestPathFor(source));
  LIBSHARD_ASSIGN_OR_RETURN(Manifest m, manifest::ReadManifest(c.manifest_path));
  c.m = &m;
  c.dir = Dirname(c.manifest_path);
  for (const LabelEntry& l : m.labels()) c.class_names[l.label()] = l.name();
  for (const LabelEntry& l : m.object_labels()) c.object_names[l.label()] = l.name();
  c.ignore_index = m.options().mask_ignore_index();
  for (const MaskClass& mc : m.mask_classes()) {
    c.mask_colors[mc.index()] = {static_cast<uint8_t>(mc.r()), static_cast<uint8_t>(mc.g()),
                                 static_cast<uint8_t>(mc.b())};
    c.mask_names[mc.index()] = mc.name();
  }

  std::string name = Basename(c.dir == "." ? std::string(".") : c.dir);
  if (!m.options().prefix().empty()) name = m.options().prefix();
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>libshard report: " +
      HtmlEscape(name) + "</title><style>" + kStyle + "</style></head><body><main>";
  const DatasetStats& all = m.stats();
  html += "<h1>Dataset report: " + HtmlEscape(name) + "</h1><p class=\"muted\">" + HtmlEscape(c.manifest_path) +
          " &middot; " + FormatCount(all.converted()) + " samples in " + FormatCount(m.splits_size()) + " split(s), " +
          ClassesPhrase(m) + ", " + FormatCount(all.rejected()) + " rejected" +
          (m.complete() ? "" : " &middot; <span class=\"bad\">partial manifest (a task's)</span>") + "</p>";
  // train, val, test, then the others as the manifest has them.
  std::vector<const SplitEntry*> splits;
  for (const SplitEntry& s : m.splits()) splits.push_back(&s);
  std::stable_sort(splits.begin(), splits.end(), [](const SplitEntry* a, const SplitEntry* b) {
    return SplitRank(a->name()) < SplitRank(b->name());
  });
  html += "<nav>";
  for (const SplitEntry* sp : splits) {
    const SplitEntry& s = *sp;
    html += "<a href=\"#split-" + HtmlEscape(s.name()) + "\">" + HtmlEscape(s.name()) + "</a>";
  }
  html += "<a href=\"#rejects\">rejects</a>";
  if (options.verify) html += "<a href=\"#verify\">verification</a>";
  html += "<a href=\"#options\">options</a></nav>";

  for (const SplitEntry* sp : splits) {
    const SplitEntry& split = *sp;
    const DatasetStats& st = split.stats();
    html += "<section class=\"split\" id=\"split-" + HtmlEscape(split.name()) + "\" data-split=\"" +
            HtmlEscape(split.name()) + "\" data-records=\"" + std::to_string(split.records()) + "\"><h2>Split " +
            HtmlEscape(split.name()) + "</h2>";
    html += Totals(split);
    TopClasses top = PickTop(c, st, options.max_classes);
    if (st.labels_size() == 0 && split.records() > 0) top.shown.emplace_back(kUnlabeled, split.records());
    html += ClassBalanceSection(c, split, top);
    html += SizeSection(c, st);
    html += ChannelSection(st);
    html += MaskSection(c, st);
    std::set<int64_t> shown;
    for (const auto& [label, count] : top.shown) shown.insert(label);
    LIBSHARD_ASSIGN_OR_RETURN(SplitThumbs thumbs, PickThumbs(c, split, shown));
    html += ThumbSection(c, top, thumbs);
    html += BoxSection(c, thumbs);
    html += "</section>";
  }
  html += DuplicateSection(c);
  html += RejectSection(m);
  if (options.verify) html += VerifySection(c);
  html += OptionsSection(m);
  html += "</main></body></html>\n";
  return html;
}

StatusOr<std::string> WriteReportPage(const std::string& source, const std::string& output_path,
                                      const ReportOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string html, RenderReport(source, options));
  std::string path = output_path;
  if (path.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string manifest_path, ManifestPathFor(source));
    path = Dirname(manifest_path) + "/" + kReportName;
  }
  const std::string tmp = path + ".tmp";
  Status st = [&]() -> Status {
    LIBSHARD_ASSIGN_OR_RETURN(auto f, io::NewPosixWritableFile(tmp));
    LIBSHARD_RETURN_IF_ERROR(f->Append(html));
    LIBSHARD_RETURN_IF_ERROR(f->Close());
    return io::RenameFile(tmp, path, false);
  }();
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return path;
}

Status WriteReport(const std::string& source, const std::string& output_path, const ReportOptions& options,
                   std::string* written_path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string path, WriteReportPage(source, output_path, options));
  if (written_path) *written_path = path;
  return Status::OK();
}

}  // namespace libshard::report
