// The sections of one split on the report page: totals, class balance,
// image sizes, channels, masks and thumbnails. Each returns HTML text.
#ifndef LIBSHARD_REPORT_SPLIT_SECTIONS_H_
#define LIBSHARD_REPORT_SPLIT_SECTIONS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "report/report_context.h"

namespace libshard::report {

// The classes shown: the largest `max` by count (ties by label), then the rest
// summed.
struct TopClasses {
  std::vector<std::pair<int64_t, uint64_t>> shown;  // label, count, largest first
  uint64_t more_classes = 0, more_samples = 0;
  uint64_t classes = 0, smallest = 0;  // of all, shown or not
};

// Every class of the manifest's label map is one: a class without samples in
// this split gets a zero bar (the header's class count and the bars agree).
TopClasses PickTop(const Context& c, const DatasetStats& st, int max);

std::string Totals(const SplitEntry& split);
// The class-balance bars, or a line saying the split is unlabeled.
std::string ClassBalanceSection(const Context& c, const SplitEntry& split, const TopClasses& top);
// Source width and aspect histograms, when the sizes vary.
std::string SizeSection(const Context& c, const DatasetStats& st);
std::string ChannelSection(const DatasetStats& st);
std::string MaskSection(const Context& c, const DatasetStats& st);
std::string ThumbSection(const Context& c, const TopClasses& top, const SplitThumbs& t);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_SPLIT_SECTIONS_H_
