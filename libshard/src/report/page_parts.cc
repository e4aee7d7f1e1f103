#include "report/page_parts.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "libshard/text_escape.h"

namespace libshard::report {

std::string HtmlEscape(std::string_view text) {
  // Invalid UTF-8 and hidden controls (a U+202E in "rtl\u202egpj.exe" would
  // show it as "rtlexe.jpg") are written as EscapeText's visible escapes.
  return MarkupEscape(DisplayText(text));
}

std::string DataUrl(std::string_view mime, std::string_view bytes) {
  std::string out = "data:" + std::string(mime) + ";base64,";
  const size_t start = out.size();
  out.resize(start + 4 * ((bytes.size() + 2) / 3) + 1);
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(&out[start]),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(start + static_cast<size_t>(n));
  return out;
}

std::string FormatCount(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof(buf), v < 10 ? "%.2f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string CssColor(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

double RelativeLuminance(const Rgb& c) {
  auto lin = [](uint8_t v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
}

double ContrastRatio(const Rgb& a, const Rgb& b) {
  const double la = RelativeLuminance(a), lb = RelativeLuminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

namespace {

Rgb FromHsl(double h, double s, double l) {
  auto f = [&](double n) {
    const double k = std::fmod(n + h / 30.0, 12.0);
    const double a = s * std::min(l, 1 - l);
    const double v = l - a * std::max(-1.0, std::min({k - 3, 9 - k, 1.0}));
    return static_cast<uint8_t>(std::lround(std::clamp(v, 0.0, 1.0) * 255));
  };
  return {f(0), f(8), f(4)};
}

}  // namespace

Rgb PaletteColor(int index) {
  const Rgb white = {255, 255, 255};
  const double hue = std::fmod(20.0 + 137.508 * index, 360.0);
  const double sat = index % 2 == 0 ? 0.85 : 0.65;
  double light = (index / 2) % 3 == 1 ? 0.38 : 0.46;
  Rgb c = FromHsl(hue, sat, light);
  while (ContrastRatio(c, white) < 3.0 && light > 0.05) {
    light -= 0.02;
    c = FromHsl(hue, sat, light);
  }
  return c;
}

Rgb BorderFor(const Rgb& c) {
  const Rgb black = {0, 0, 0}, white = {255, 255, 255};
  return ContrastRatio(c, black) >= ContrastRatio(c, white) ? black : white;
}

std::string HorizontalBarChart(std::string_view title, const std::vector<Bar>& bars, uint64_t total) {
  constexpr int kRow = 34;  // label line + bar
  uint64_t max = 1;
  for (const Bar& b : bars) max = std::max(max, b.value);
  std::string out;
  out += "<svg class=\"chart bars\" role=\"img\" width=\"100%\" height=\"" + std::to_string(kRow * bars.size() + 6) +
         "\"><title>" + HtmlEscape(title) + "</title>";
  char buf[64];
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const int y = static_cast<int>(i) * kRow;
    const double pct = 100.0 * static_cast<double>(b.value) / static_cast<double>(max);
    std::string value = FormatCount(b.value);
    if (total > 0) {
      char p[32];
      std::snprintf(p, sizeof(p), " (%.1f%%)", 100.0 * static_cast<double>(b.value) / static_cast<double>(total));
      value += p;
    }
    // The name and the number on one line above the bar: nothing is drawn
    // right of the bar, so nothing runs off a narrow screen; a name too long
    // for the width is cut at the chart's edge, and whole in the tooltip.
    out += "<g class=\"bar\" data-key=\"" + HtmlEscape(b.data_key) + "\" data-count=\"" + std::to_string(b.value) +
           "\"><title>" + HtmlEscape(b.label) + ": " + value + "</title>";
    out += "<text x=\"0\" y=\"" + std::to_string(y + 12) + "\"><tspan class=\"name\">" + HtmlEscape(b.label) +
           "</tspan><tspan class=\"value\" dx=\"8\">" + value + "</tspan></text>";
    std::snprintf(buf, sizeof(buf), "%.3f%%", std::max(pct, 0.2));
    out += "<rect x=\"0\" y=\"" + std::to_string(y + 16) + "\" height=\"14\" width=\"" + buf + "\"" +
           (b.fill.empty() ? std::string() : " style=\"fill:" + b.fill + "\"") + "/></g>";
  }
  out += "</svg>";
  return out;
}

std::string Histogram(std::string_view title, std::string_view x_caption, const std::vector<Bin>& bins) {
  constexpr int kPlot = 120, kTop = 18, kHeight = kTop + kPlot + 40;
  uint64_t max = 1;
  for (const Bin& b : bins) max = std::max(max, b.count);
  std::string out = "<svg class=\"chart hist\" role=\"img\" width=\"100%\" height=\"" + std::to_string(kHeight) +
                    "\"><title>" + HtmlEscape(title) + "</title>";
  out += "<text x=\"0\" y=\"12\" class=\"value\">max " + FormatCount(max) + "</text>";
  const size_t n = std::max<size_t>(bins.size(), 1);
  const double slot = 100.0 / static_cast<double>(n);
  char buf[160];
  for (size_t i = 0; i < bins.size(); ++i) {
    const int h = static_cast<int>(std::lround(kPlot * static_cast<double>(bins[i].count) / static_cast<double>(max)));
    std::snprintf(buf, sizeof(buf), "<rect x=\"%.3f%%\" width=\"%.3f%%\" y=\"%d\" height=\"%d\">",
                  slot * i + slot * 0.08, slot * 0.84, kTop + kPlot - std::max(h, bins[i].count > 0 ? 1 : 0),
                  std::max(h, bins[i].count > 0 ? 1 : 0));
    out += buf;
    out += "<title>" + HtmlEscape(bins[i].label) + ": " + FormatCount(bins[i].count) + "</title></rect>";
  }
  std::snprintf(buf, sizeof(buf), "<line x1=\"0\" x2=\"100%%\" y1=\"%d\" y2=\"%d\"/>", kTop + kPlot, kTop + kPlot);
  out += buf;
  // Labels at the first, middle and last bins: they never overlap at 400 px.
  std::vector<size_t> labelled;
  if (bins.size() <= 4) {
    for (size_t i = 0; i < bins.size(); ++i) labelled.push_back(i);
  } else {
    labelled = {0, bins.size() / 2, bins.size() - 1};
  }
  for (size_t i : labelled) {
    const char* anchor =
        labelled.size() > 1 && i == 0 ? "start" : (i + 1 == bins.size() && bins.size() > 1 ? "end" : "middle");
    const double x = anchor[0] == 's' ? slot * i : anchor[0] == 'e' ? slot * (i + 1) : slot * (i + 0.5);
    std::snprintf(buf, sizeof(buf), "<text x=\"%.3f%%\" y=\"%d\" text-anchor=\"%s\" class=\"label\">", x,
                  kTop + kPlot + 14, anchor);
    out += buf + HtmlEscape(bins[i].label) + "</text>";
  }
  std::snprintf(buf, sizeof(buf), "<text x=\"50%%\" y=\"%d\" text-anchor=\"middle\" class=\"caption\">", kHeight - 6);
  out += buf + HtmlEscape(x_caption) + "</text></svg>";
  return out;
}

}  // namespace libshard::report
