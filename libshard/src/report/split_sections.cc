// The sections of one split on the report page (split_sections.h).
#include "report/split_sections.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
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

std::string ClassBalanceSection(const Context& c, const SplitEntry& split, const TopClasses& top) {
  const DatasetStats& st = split.stats();
  std::string html;
  const bool labeled = !(st.labels_size() == 1 && st.labels(0).label() == kUnlabeled) && st.labels_size() > 0;
  if (labeled) {
    std::vector<Bar> bars;
    for (const auto& [label, count] : top.shown) bars.push_back({ClassName(c, label), count, "", ClassName(c, label)});
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
  return html;
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
      out += "</div><figcaption>" +
             HtmlEscape(th.file.empty() ? "" : std::filesystem::path(th.file).filename().string()) +
             "</figcaption></figure>";
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

}  // namespace libshard::report
