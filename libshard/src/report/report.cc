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
#include "libshard/verify/verifier.h"
#include "report/page_parts.h"

namespace libshard::report {
namespace {

constexpr int64_t kUnlabeled = -1;

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

struct Thumb {
  std::string file;
  int64_t label = kUnlabeled;
  int width = 0, height = 0;
  std::string image_url;    // data: JPEG
  std::string overlay_url;  // data: PNG, empty without a mask
};

struct SplitThumbs {
  std::map<int64_t, std::vector<Thumb>> by_label;
  uint64_t visited = 0;
  uint64_t unreadable = 0;
  std::string first_error;
};

// What the page needs to know about the set as a whole.
struct Context {
  const Manifest* m = nullptr;
  std::string dir;  // the manifest's folder
  std::string manifest_path;
  ReportOptions options;
  std::map<int64_t, std::string> class_names;
  bool has_masks = false;
  int ignore_index = 255;
  std::map<int, Rgb> mask_colors;  // by index
  std::map<int, std::string> mask_names;
};

std::string ClassName(const Context& c, int64_t label) {
  if (label == kUnlabeled) return "(unlabeled)";
  auto it = c.class_names.find(label);
  return it != c.class_names.end() ? it->second : "label " + std::to_string(label);
}

Rgb MaskColor(const Context& c, int index) {
  auto it = c.mask_colors.find(index);
  return it != c.mask_colors.end() ? it->second : PaletteColor(index);
}

std::string MaskName(const Context& c, int index) {
  if (index == c.ignore_index) return "ignore";
  auto it = c.mask_names.find(index);
  return it != c.mask_names.end() ? it->second : "index " + std::to_string(index);
}

// The classes shown: the largest `max` by count (ties by label), then the rest
// summed.
struct TopClasses {
  std::vector<std::pair<int64_t, uint64_t>> shown;  // label, count, largest first
  uint64_t more_classes = 0, more_samples = 0;
  uint64_t classes = 0, smallest = 0;  // of all, shown or not
};

// Every class of the manifest's label map is one: a class without samples in
// this split gets a zero bar (the header's class count and the bars agree).
TopClasses PickTop(const Context& c, const DatasetStats& st, int max) {
  TopClasses t;
  std::map<int64_t, uint64_t> counts;
  for (const LabelCount& l : st.labels()) counts[l.label()] += l.count();
  if (!counts.empty() && counts.count(kUnlabeled) == 0) {
    for (const auto& [label, name] : c.class_names) counts.emplace(label, 0);
  }
  for (const auto& [label, count] : counts) t.shown.emplace_back(label, count);
  t.classes = t.shown.size();
  std::stable_sort(t.shown.begin(), t.shown.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (!t.shown.empty()) t.smallest = t.shown.back().second;
  while (t.shown.size() > static_cast<size_t>(max)) {
    ++t.more_classes;
    t.more_samples += t.shown.back().second;
    t.shown.pop_back();
  }
  return t;
}

Status MakeThumb(const Context& c, std::string_view record, Thumb* out) {
  LIBSHARD_ASSIGN_OR_RETURN(example::ExampleView ex, example::ExampleView::Parse(record));
  example::ImageRecordKeys keys;
  LIBSHARD_ASSIGN_OR_RETURN(example::ImageRecord rec, example::ParseImageRecord(ex, keys, {}));
  example::FeatureView f;
  if (ex.Find(keys::kFilename, &f) && f.kind() == example::FeatureKind::kBytes && f.size() > 0) {
    out->file = std::string(f.bytes(0));
  }
  out->label = rec.has_label ? rec.label : kUnlabeled;
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
  reader::RecordBuffer buf;
  size_t wanted = shown.size() * static_cast<size_t>(o.thumbnails_per_class);
  for (uint64_t r : order) {
    if (wanted == 0) break;
    const size_t s = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), r) - starts.begin() - 1);
    const std::string shard_path = c.dir + "/" + split.shards(s).file();
    if (!readers[s] && !failed[s]) {
      StatusOr<std::unique_ptr<reader::ShardReader>> opened = reader::ShardReader::Open(shard_path, {});
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
    }
    Thumb thumb;
    if (st.ok()) {
      if (!shown.count(label) || t.by_label[label].size() >= static_cast<size_t>(o.thumbnails_per_class)) continue;
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
figcaption{font-size:11px;color:var(--muted);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
@media (max-width:480px){main{padding:10px}table{font-size:.8em}th,td{padding-right:6px}}
.ok{color:#116329;font-weight:600}
.bad{color:#a40e26;font-weight:600}
)css";

std::string Totals(const SplitEntry& split) {
  uint64_t bytes = 0, min = UINT64_MAX, max = 0;
  for (const ShardEntry& s : split.shards()) {
    bytes += s.bytes();
    min = std::min<uint64_t>(min, s.records());
    max = std::max<uint64_t>(max, s.records());
  }
  if (split.shards_size() == 0) min = 0;
  auto item = [](const std::string& k, const std::string& v, const std::string& cls) {
    return "<div><dt>" + k + "</dt><dd class=\"" + cls + "\">" + v + "</dd></div>";
  };
  std::string rps = min == max ? FormatCount(min) : FormatCount(min) + "&ndash;" + FormatCount(max);
  char avg[32];
  std::snprintf(avg, sizeof(avg), "%.1f",
                split.shard_count() ? static_cast<double>(split.records()) / split.shard_count() : 0.0);
  return "<dl class=\"totals\">" + item("samples", FormatCount(split.records()), "t-samples") +
         item("shards", FormatCount(split.shard_count()), "t-shards") + item("bytes", FormatBytes(bytes), "t-bytes") +
         item("records per shard", rps + " <span class=\"muted\">(avg " + avg + ")</span>", "t-rps") +
         item("rejected", FormatCount(split.stats().rejected()), "t-rejected") + "</dl>";
}

// Source width and aspect histograms, when the sizes vary.
std::string SizeSection(const Context& c, const DatasetStats& st) {
  std::vector<std::pair<int, int>> sizes;  // w, h
  std::vector<uint64_t> counts;
  for (const NamedCount& nc : st.source_sizes()) {
    int w = 0, h = 0;
    if (std::sscanf(nc.name().c_str(), "%dx%d", &w, &h) != 2 || w <= 0 || h <= 0) continue;
    sizes.emplace_back(w, h);
    counts.push_back(nc.count());
  }
  const ConversionOptions& o = c.m->options();
  std::string stored = o.width() > 0 ? " Stored as " + std::to_string(o.width()) + "&times;" +
                                           std::to_string(o.height()) + " (" + HtmlEscape(o.resize_mode()) + ")."
                                     : " Stored at their source size.";
  std::string out = "<h3>Image sizes</h3>";
  if (sizes.empty()) return out + "<p class=\"muted\">No source sizes recorded.</p>";
  if (sizes.size() == 1) {
    return out + "<p>Every source image is " + std::to_string(sizes[0].first) + "&times;" +
           std::to_string(sizes[0].second) + "." + stored + "</p>";
  }
  constexpr int kBins = 12;
  auto bin = [&](const std::string& title, const std::string& caption, auto value, bool log_scale, int precision) {
    double lo = 1e300, hi = -1e300;
    for (const auto& s : sizes) {
      lo = std::min(lo, value(s));
      hi = std::max(hi, value(s));
    }
    auto tr = [&](double v) { return log_scale ? std::log(v) : v; };
    const double a = tr(lo), b = tr(hi);
    const int n = hi > lo ? kBins : 1;
    std::vector<Bin> bins(n);
    for (int i = 0; i < n; ++i) {
      const double from = log_scale ? std::exp(a + (b - a) * i / n) : a + (b - a) * i / n;
      const double to = log_scale ? std::exp(a + (b - a) * (i + 1) / n) : a + (b - a) * (i + 1) / n;
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%.*f-%.*f", precision, from, precision, to);
      bins[i].label = buf;
    }
    for (size_t k = 0; k < sizes.size(); ++k) {
      int i = n == 1 ? 0 : static_cast<int>((tr(value(sizes[k])) - a) / (b - a) * n);
      bins[std::clamp(i, 0, n - 1)].count += counts[k];
    }
    return Histogram(title, caption, bins);
  };
  out += "<p>" + FormatCount(sizes.size()) + " distinct source sizes." + stored + "</p><div class=\"cols\"><div>";
  out += bin(
      "Source image widths", "width (pixels)", [](const std::pair<int, int>& s) { return double(s.first); }, false, 0);
  out += "</div><div>";
  out += bin(
      "Source aspect ratios (width / height)", "aspect ratio (width / height)",
      [](const std::pair<int, int>& s) { return double(s.first) / s.second; }, true, 2);
  return out + "</div></div>";
}

std::string ChannelSection(const DatasetStats& st) {
  if (st.channels_size() == 0) return "";
  static const char* const kNames[] = {"red", "green", "blue", "alpha"};
  std::string out =
      "<h3>Per-channel statistics</h3><div class=\"table-wrap\"><table class=\"channels\"><tr><th>channel</th>"
      "<th>mean</th><th>std</th><th>mean / 255</th><th>std / 255</th><th>samples</th></tr>";
  for (int i = 0; i < st.channels_size(); ++i) {
    const ChannelStats& ch = st.channels(i);
    char buf[256];
    std::snprintf(buf, sizeof(buf),
                  "<td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.4f</td><td "
                  "class=\"num\">%.4f</td>",
                  ch.mean(), ch.std(), ch.mean() / 255, ch.std() / 255);
    out += std::string("<tr><td>") + (st.channels_size() == 1 ? "gray" : kNames[std::min(i, 3)]) + "</td>" + buf +
           "<td class=\"num\">" + FormatCount(ch.count()) + "</td></tr>";
  }
  return out + "</table></div>";
}

std::string MaskSection(const Context& c, const DatasetStats& st) {
  if (st.mask_pixels_size() == 0) return "";
  std::string out = "<h3>Mask classes</h3><ul class=\"legend\">";
  std::vector<Bar> bars;
  uint64_t total = 0;
  // Every class of the colour map is listed, one without pixels too.
  std::map<int, uint64_t> pixels;
  for (const auto& [index, name] : c.mask_names) pixels[index] = 0;
  for (const LabelCount& lc : st.mask_pixels()) {
    total += lc.count();
    pixels[static_cast<int>(lc.label())] += lc.count();
  }
  for (const auto& [index, count] : pixels) {
    const std::string name = MaskName(c, index);
    if (index == c.ignore_index) {
      out +=
          "<li class=\"legend-ignore\"><span class=\"swatch\" style=\"background:repeating-linear-gradient(45deg,#fff "
          "0 3px,#999 3px 6px);border-color:#000\"></span>" +
          std::to_string(index) + " ignore (not drawn)</li>";
      bars.push_back({std::to_string(index) + " ignore", count, "#8c959f", "ignore"});
      continue;
    }
    const Rgb col = MaskColor(c, index);
    out += "<li class=\"legend-item\" data-index=\"" + std::to_string(index) + "\" data-color=\"" + CssColor(col) +
           "\"><span class=\"swatch\" style=\"background:" + CssColor(col) +
           ";border-color:" + CssColor(BorderFor(col)) + "\"></span>" + std::to_string(index) + " " + HtmlEscape(name) +
           "</li>";
    bars.push_back({std::to_string(index) + " " + name, count, CssColor(col), std::to_string(index)});
  }
  out += "</ul><p class=\"muted\">Overlays show each mask pixel in its class colour at half opacity.</p>";
  std::vector<Bar> top = bars;
  std::stable_sort(top.begin(), top.end(), [](const Bar& a, const Bar& b) { return a.value > b.value; });
  uint64_t more = 0;
  size_t more_n = 0;
  while (top.size() > static_cast<size_t>(c.options.max_classes)) {
    more += top.back().value;
    ++more_n;
    top.pop_back();
  }
  out += "<h3>Mask pixels per class</h3>" + HorizontalBarChart("Mask pixels per class", top, total);
  if (more_n)
    out += "<p class=\"more\">and " + FormatCount(more_n) + " more classes (" + FormatCount(more) + " pixels)</p>";
  return out;
}

std::string ThumbSection(const Context& c, const TopClasses& top, const SplitThumbs& t) {
  if (c.options.thumbnails_per_class == 0) return "";
  std::string out = "<h3>Samples</h3><p class=\"muted\">Up to " + std::to_string(c.options.thumbnails_per_class) +
                    " per class, chosen by seed " + std::to_string(c.options.seed) + " among " +
                    FormatCount(t.visited) + " records looked at; hover for the file name.</p>";
  if (t.unreadable) {
    out += "<p class=\"bad\">" + FormatCount(t.unreadable) +
           " record(s) or shard(s) could not be shown; the first: " + HtmlEscape(t.first_error) + "</p>";
  }
  out += "<div class=\"classes\">";
  for (const auto& [label, count] : top.shown) {
    auto it = t.by_label.find(label);
    out += "<div class=\"class-thumbs\"><h4>" + HtmlEscape(ClassName(c, label)) + " <span class=\"muted\">(" +
           FormatCount(count) + ")</span></h4>";
    if (it == t.by_label.end() || it->second.empty()) {
      out += "<p class=\"muted\">none among the records looked at</p></div>";
      continue;
    }
    out += "<div class=\"grid\" data-class=\"" + HtmlEscape(ClassName(c, label)) + "\">";
    for (const Thumb& th : it->second) {
      const std::string name = HtmlEscape(th.file.empty() ? "(no file name)" : th.file);
      const std::string dims =
          "width=\"" + std::to_string(th.width) + "\" height=\"" + std::to_string(th.height) + "\"";
      // Small images (Fashion-MNIST's 28x28) are drawn larger, with crisp pixels.
      out += "<figure title=\"" + name + "\" data-file=\"" + name + "\"><div class=\"thumb\"><img class=\"image" +
             (std::max(th.width, th.height) < 64 ? " small" : "") + "\" " + dims + " alt=\"" +
             HtmlEscape(ClassName(c, label)) + ": " + name + "\" src=\"" + th.image_url + "\">";
      if (!th.overlay_url.empty()) {
        out += "<img class=\"overlay\" " + dims + " alt=\"mask of " + name + "\" src=\"" + th.overlay_url + "\">";
      }
      out += "</div><figcaption>" + HtmlEscape(th.file.empty() ? "" : Basename(th.file)) + "</figcaption></figure>";
    }
    out += "</div></div>";
  }
  out += "</div>";
  if (top.more_classes) {
    out += "<p class=\"more\">and " + FormatCount(top.more_classes) + " more classes (" +
           FormatCount(top.more_samples) + " samples) without thumbnails</p>";
  }
  return out;
}

// A reject reason with its file name and numbers taken out: rejects for the
// same cause group together.
std::string ReasonKind(const Reject& r) {
  std::string s = r.reason();
  for (const std::string& name : {r.path(), Basename(r.path())}) {
    if (name.empty()) continue;
    for (size_t at; (at = s.find(name)) != std::string::npos;) s.replace(at, name.size(), "FILE");
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += 'N';
      while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string RejectSection(const Manifest& m) {
  std::string out = "<h2 id=\"rejects\">Rejected inputs</h2>";
  if (m.rejects_size() == 0) return out + "<p class=\"ok\" id=\"no-rejects\">No input was rejected.</p>";
  std::map<std::string, std::vector<const Reject*>> groups;
  for (const Reject& r : m.rejects()) groups[ReasonKind(r)].push_back(&r);
  std::vector<std::pair<std::string, std::vector<const Reject*>>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  out += "<p>" + FormatCount(m.rejects_size()) + " rejected in " + FormatCount(sorted.size()) +
         " group(s) by reason; <code>rejects.tsv</code> lists them all.</p>";
  constexpr size_t kGroups = 50, kFiles = 5;
  for (size_t g = 0; g < sorted.size() && g < kGroups; ++g) {
    const auto& [kind, list] = sorted[g];
    out += "<div class=\"reject-group\" data-count=\"" + std::to_string(list.size()) + "\"><h4>" + HtmlEscape(kind) +
           " <span class=\"muted\">(" + FormatCount(list.size()) + ")</span></h4><ul>";
    for (size_t i = 0; i < list.size() && i < kFiles; ++i) {
      out += "<li><code>" + HtmlEscape(list[i]->path()) + "</code>: " + HtmlEscape(list[i]->reason()) + "</li>";
    }
    if (list.size() > kFiles) out += "<li class=\"more\">and " + FormatCount(list.size() - kFiles) + " more</li>";
    out += "</ul></div>";
  }
  if (sorted.size() > kGroups)
    out += "<p class=\"more\">and " + FormatCount(sorted.size() - kGroups) + " more groups</p>";
  return out;
}

std::string OptionsSection(const Manifest& m) {
  std::string out = "<h2 id=\"options\">Conversion options</h2><div class=\"table-wrap\"><table class=\"options\">";
  const google::protobuf::Message& o = m.options();
  const auto* d = o.GetDescriptor();
  const auto* r = o.GetReflection();
  using FD = google::protobuf::FieldDescriptor;
  for (int i = 0; i < d->field_count(); ++i) {
    const FD* f = d->field(i);
    std::string v;
    switch (f->cpp_type()) {
      case FD::CPPTYPE_STRING:
        v = r->GetString(o, f);
        break;
      case FD::CPPTYPE_BOOL:
        v = r->GetBool(o, f) ? "true" : "false";
        break;
      case FD::CPPTYPE_INT32:
        v = std::to_string(r->GetInt32(o, f));
        break;
      case FD::CPPTYPE_INT64:
        v = std::to_string(r->GetInt64(o, f));
        break;
      case FD::CPPTYPE_UINT32:
        v = std::to_string(r->GetUInt32(o, f));
        break;
      case FD::CPPTYPE_UINT64:
        v = std::to_string(r->GetUInt64(o, f));
        break;
      case FD::CPPTYPE_DOUBLE: {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", r->GetDouble(o, f));
        v = buf;
        break;
      }
      default:
        continue;
    }
    out += "<tr><th>" + HtmlEscape(f->name()) + "</th><td><code>" + HtmlEscape(v) + "</code></td></tr>";
  }
  out += "</table></div>";
  const RunInfo& run = m.run();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", run.seconds());
  out += "<p class=\"muted\">libshard " + HtmlEscape(m.tool_version()) + "; run started " + HtmlEscape(run.started()) +
         ", " + buf + " s, " + std::to_string(run.threads()) + " threads" +
         (run.num_tasks() > 1 ? ", " + std::to_string(run.num_tasks()) + " tasks merged" : std::string()) + ".</p>";
  return out;
}

std::string VerifySection(const Context& c) {
  verify::VerifyOptions vo;
  vo.decode_images = c.options.verify_decode;
  vo.threads = c.options.threads;
  // Every listed shard is verified, and unlisted shards in the folder found.
  verify::SetResult r = verify::VerifySet({}, {c.manifest_path}, vo);
  uint64_t records = 0;
  std::vector<std::string> rows;
  for (const auto& f : r.files) {
    records += f.records;
    for (const auto& x : f.faults) {
      rows.push_back("<tr><td><code>" + HtmlEscape(f.path) + "</code></td><td class=\"num\">" +
                     std::to_string(x.offset) + "</td><td class=\"num\">" + std::to_string(x.record) + "</td><td>" +
                     verify::FaultKindName(x.kind) + "</td><td>" + HtmlEscape(x.message) + "</td></tr>");
    }
  }
  for (const auto& mr : r.manifests) {
    for (const auto& x : mr.faults) {
      rows.push_back("<tr><td><code>" + HtmlEscape(x.path) + "</code></td><td></td><td></td><td>" +
                     verify::FaultKindName(x.kind) + "</td><td>" + HtmlEscape(x.message) + "</td></tr>");
    }
  }
  std::string out = "<h2 id=\"verify\">Verification</h2>";
  const uint64_t faults = r.fault_count();
  if (faults == 0) {
    return out + "<p class=\"ok\" id=\"verify-result\" data-faults=\"0\">verified: " + FormatCount(r.files.size()) +
           " files, " + FormatCount(records) + " records, no faults (framing, CRCs, Examples, indexes, manifest" +
           (c.options.verify_decode ? ", every image decoded" : "") + ").</p>";
  }
  out += "<p class=\"bad\" id=\"verify-result\" data-faults=\"" + std::to_string(faults) + "\">" + FormatCount(faults) +
         " fault(s) found by shard verify.</p><div class=\"table-wrap\"><table class=\"faults\"><tr><th>file</th>"
         "<th>offset</th><th>record</th><th>kind</th><th>what</th></tr>";
  constexpr size_t kRows = 200;
  for (size_t i = 0; i < rows.size() && i < kRows; ++i) out += rows[i];
  out += "</table></div>";
  if (faults > std::min(rows.size(), kRows)) {
    out += "<p class=\"more\">and " + FormatCount(faults - std::min(rows.size(), kRows)) + " more</p>";
  }
  return out;
}

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
  if (o.threads < 0 || o.threads > 256) return bad("threads", "0..256");
  if (o.verify_decode && !o.verify) return InvalidArgumentError("report option verify_decode needs verify");
  return Status::OK();
}

namespace {

StatusOr<std::string> ManifestPathFor(const std::string& source) {
  if (source.empty()) return InvalidArgumentError("report: no dataset folder or manifest given");
  if (IsDirectory(source)) {
    std::string dir = source;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return dir + "/manifest.json";
  }
  return source;
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
  Context c;
  c.options = options;
  LIBSHARD_ASSIGN_OR_RETURN(c.manifest_path, ManifestPathFor(source));
  LIBSHARD_ASSIGN_OR_RETURN(Manifest m, manifest::ReadManifest(c.manifest_path));
  c.m = &m;
  c.dir = Dirname(c.manifest_path);
  for (const LabelEntry& l : m.labels()) c.class_names[l.label()] = l.name();
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
    const bool labeled = !(st.labels_size() == 1 && st.labels(0).label() == kUnlabeled) && st.labels_size() > 0;
    if (labeled) {
      std::vector<Bar> bars;
      for (const auto& [label, count] : top.shown)
        bars.push_back({ClassName(c, label), count, "", ClassName(c, label)});
      html += "<h3>Class balance</h3><p class=\"muted\">" + FormatCount(top.classes) + " classes";
      if (!top.shown.empty()) {
        html += "; largest " + FormatCount(top.shown.front().second) + ", smallest " + FormatCount(top.smallest);
      }
      html += ".</p><div class=\"class-balance\">" +
              HorizontalBarChart("Samples per class in split " + split.name(), bars, split.records()) + "</div>";
      if (top.more_classes) {
        html += "<p class=\"more\">and " + FormatCount(top.more_classes) + " more classes (" +
                FormatCount(top.more_samples) + " samples)</p>";
      }
    } else {
      html += "<p class=\"muted\">Unlabeled: no class balance to show.</p>";
    }
    html += SizeSection(c, st);
    html += ChannelSection(st);
    html += MaskSection(c, st);
    std::set<int64_t> shown;
    for (const auto& [label, count] : top.shown) shown.insert(label);
    LIBSHARD_ASSIGN_OR_RETURN(SplitThumbs thumbs, PickThumbs(c, split, shown));
    html += ThumbSection(c, top, thumbs);
    html += "</section>";
  }
  html += RejectSection(m);
  if (options.verify) html += VerifySection(c);
  html += OptionsSection(m);
  html += "</main></body></html>\n";
  return html;
}

Status WriteReport(const std::string& source, const std::string& output_path, const ReportOptions& options,
                   std::string* written_path) {
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
  if (written_path) *written_path = path;
  return Status::OK();
}

}  // namespace libshard::report
