// The report's detection boxes (box_sections.h).
#include "report/box_sections.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "libshard/example/box_record.h"
#include "libshard/example/image_keys.h"

namespace libshard::report {
namespace {

// sqrt(area) bin edges in pixels of the stored image; COCO's small / medium /
// large split at 32 and 96.
constexpr double kBoxSizeEdges[] = {8, 16, 32, 64, 96, 128, 256, 512};
constexpr size_t kBoxSizeBins = sizeof(kBoxSizeEdges) / sizeof(kBoxSizeEdges[0]) + 1;

int64_t FirstInt(const example::ExampleView& ex, const char* key) {
  example::FeatureView f;
  if (!ex.Find(key, &f) || f.kind() != example::FeatureKind::kInt64 || f.size() == 0) return 0;
  return f.int64(0);
}

// The manifest's object label map first, then the records' class/text.
std::string BoxClassName(const Context& c, const SplitThumbs& t, int64_t label) {
  auto named = c.object_names.find(label);
  if (named != c.object_names.end()) return named->second;
  auto it = t.boxes.class_names.find(label);
  return it != t.boxes.class_names.end() ? it->second : "class " + std::to_string(label);
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

void AddBoxes(const example::ExampleView& ex, BoxStats* s) {
  if (!example::HasBoxKeys(ex)) return;
  thread_local example::BoxRecord rec;
  if (!example::ReadBoxes(ex, &rec).ok()) {
    ++s->invalid;
    return;
  }
  if (s->size_bins.empty()) s->size_bins.assign(kBoxSizeBins, 0);
  ++s->records;
  s->boxes += rec.boxes.size();
  const int64_t w = FirstInt(ex, keys::kWidth), h = FirstInt(ex, keys::kHeight);
  example::FeatureView text;
  const bool has_text = ex.Find(keys::kObjectText, &text) && text.kind() == example::FeatureKind::kBytes &&
                        text.size() == rec.boxes.size();
  for (size_t i = 0; i < rec.boxes.size(); ++i) {
    ++s->per_class[rec.labels[i]];
    if (has_text && !s->class_names.count(rec.labels[i])) s->class_names[rec.labels[i]] = std::string(text.bytes(i));
    if (w <= 0 || h <= 0) continue;
    const image::Box& b = rec.boxes[i];
    const double side = std::sqrt((b.xmax - b.xmin) * static_cast<double>(w) * (b.ymax - b.ymin) * h);
    size_t bin = 0;
    while (bin + 1 < kBoxSizeBins && side >= kBoxSizeEdges[bin]) ++bin;
    ++s->size_bins[bin];
  }
}

Rgb BoxColor(int64_t label) { return PaletteColor(static_cast<int>(label % 4096)); }

std::string BoxOverlay(const Context& c, const SplitThumbs& split, const Thumb& t) {
  if (t.boxes.empty()) return "";
  std::string out = "<svg class=\"boxes\" viewBox=\"0 0 1 1\" preserveAspectRatio=\"none\" aria-hidden=\"true\">";
  for (size_t i = 0; i < t.boxes.size(); ++i) {
    const image::Box& b = t.boxes[i];
    out += "<rect x=\"" + Num(b.xmin) + "\" y=\"" + Num(b.ymin) + "\" width=\"" + Num(b.xmax - b.xmin) +
           "\" height=\"" + Num(b.ymax - b.ymin) + "\" stroke=\"" + CssColor(BoxColor(t.box_labels[i])) +
           "\" data-label=\"" + std::to_string(t.box_labels[i]) + "\"><title>" +
           HtmlEscape(BoxClassName(c, split, t.box_labels[i])) + "</title></rect>";
  }
  return out + "</svg>";
}

std::string BoxSection(const Context& c, const SplitThumbs& t) {
  const BoxStats& s = t.boxes;
  if (s.records == 0 && s.invalid == 0) return "";
  std::string out = "<h3>Detection boxes</h3><p class=\"muted\">" + FormatCount(s.boxes) + " boxes in " +
                    FormatCount(s.records) + " of the " + FormatCount(t.visited) + " records looked at.</p>";
  if (s.invalid) {
    out += "<p class=\"bad\">" + FormatCount(s.invalid) +
           " record(s) with malformed box keys (shard verify names them: box_invalid)</p>";
  }
  std::vector<Bar> bars;
  for (const auto& [label, n] : s.per_class) {
    Bar b;
    b.label = BoxClassName(c, t, label) + " (" + std::to_string(label) + ")";
    b.value = n;
    b.fill = CssColor(BoxColor(label));
    b.data_key = std::to_string(label);
    bars.push_back(std::move(b));
  }
  out += "<div class=\"chart\" data-chart=\"boxes-per-class\">" + HorizontalBarChart("Boxes per class", bars, s.boxes) +
         "</div>";
  std::vector<Bin> bins;
  for (size_t i = 0; i < s.size_bins.size(); ++i) {
    const std::string lo = i == 0 ? "0" : Num(kBoxSizeEdges[i - 1]);
    bins.push_back({i + 1 < s.size_bins.size() ? lo + "-" + Num(kBoxSizeEdges[i]) : ">=" + lo, s.size_bins[i]});
  }
  out += "<div class=\"chart\" data-chart=\"box-sizes\">" +
         Histogram("Box sizes", "sqrt(box area) in pixels of the stored image (COCO: small < 32, large >= 96)", bins) +
         "</div>";
  return out;
}

}  // namespace libshard::report
