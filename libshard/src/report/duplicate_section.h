// The report's duplicates section: the leak check's counts (manifest.json's
// `duplicates`) and the first leaked pairs of duplicates.tsv side by side,
// each with both thumbnails, its splits, file names, kind and distance.
// A missing or unreadable list, or an image not found in its split, is said
// on the page, never fatal.
#ifndef LIBSHARD_REPORT_DUPLICATE_SECTION_H_
#define LIBSHARD_REPORT_DUPLICATE_SECTION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "report/report_context.h"

namespace libshard::report {

// Leaked pairs shown with thumbnails; the rest are counted ("and N more").
inline constexpr size_t kShownLeaks = 24;
// Records of a split looked through for the shown pairs' images.
inline constexpr uint64_t kMaxDuplicateScan = 2'000'000;

std::string DuplicateSection(const Context& c);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_DUPLICATE_SECTION_H_
