// The report's thumbnails: records of a split visited in a seeded order,
// the first ReportOptions::thumbnails_per_class of each shown class decoded,
// resized and re-encoded as data: URLs (with a mask overlay when the set has
// masks). Unreadable records are counted, not fatal.
#ifndef LIBSHARD_REPORT_THUMBNAILS_H_
#define LIBSHARD_REPORT_THUMBNAILS_H_

#include <cstdint>
#include <set>
#include <string_view>

#include "libshard/status.h"
#include "report/report_context.h"

namespace libshard::report {

// One record's thumbnail (its file name, label, pixels as a data: URL and
// mask overlay); errors of parsing or decoding the record.
Status MakeThumb(const Context& c, std::string_view record, Thumb* out);

StatusOr<SplitThumbs> PickThumbs(const Context& c, const SplitEntry& split, const std::set<int64_t>& shown);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_THUMBNAILS_H_
