// Pieces of the report page that know nothing about datasets: HTML escaping,
// data: URLs, the SVG charts (written as text) and the colour rules of the
// mask overlays. Kept apart so that tests can hold each to its contract.
//
// Charts are sized in percent of their container horizontally and in pixels
// vertically, with text at a fixed pixel size: they reflow from 400 to 1280
// px without scaling the labels down to nothing. Each chart is an
// `<svg role="img">` with a `<title>` and visible text labels.
//
// Thread-safety: pure functions.
#ifndef LIBSHARD_REPORT_PAGE_PARTS_H_
#define LIBSHARD_REPORT_PAGE_PARTS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libshard::report {

// Text for HTML element content and attribute values: & < > " ' escaped;
// bytes that are not valid UTF-8 and hidden controls (bidirectional
// overrides: text_escape.h IsHiddenControl) are shown as \xHH / \uHHHH.
std::string HtmlEscape(std::string_view text);
// "data:MIME;base64,...".
std::string DataUrl(std::string_view mime, std::string_view bytes);
// 12345678 -> "12,345,678"; bytes -> "1.5 MB".
std::string FormatCount(uint64_t n);
std::string FormatBytes(uint64_t bytes);

using Rgb = std::array<uint8_t, 3>;
// "#rrggbb".
std::string CssColor(const Rgb& c);
// WCAG 2 relative luminance and contrast ratio (1..21).
double RelativeLuminance(const Rgb& c);
double ContrastRatio(const Rgb& a, const Rgb& b);
// Colour `index` of the index-mask palette: distinct hues (golden-angle
// steps), each darkened until its contrast with white is at least 3:1.
Rgb PaletteColor(int index);
// Black or white, whichever contrasts more with `c` (at least 4.58:1).
Rgb BorderFor(const Rgb& c);

struct Bar {
  std::string label;     // shown left of / above the bar
  uint64_t value = 0;    // bar length and the number shown after it
  std::string fill;      // CSS colour; empty: the chart colour
  std::string data_key;  // data-key attribute of the bar's group (for tests, links)
};

// Horizontal bars, one row per entry: the label and the value on a line
// above the bar (the longest bar spans the width). `total` (when > 0) adds a
// percentage after each value.
std::string HorizontalBarChart(std::string_view title, const std::vector<Bar>& bars, uint64_t total);

struct Bin {
  std::string label;  // the bin's range, e.g. "224-256"
  uint64_t count = 0;
};
// Vertical bars over `bins`, labelled at the first, middle and last bins (all
// of them when there are few), with an x-axis caption and the largest count.
std::string Histogram(std::string_view title, std::string_view x_caption, const std::vector<Bin>& bins);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_PAGE_PARTS_H_
