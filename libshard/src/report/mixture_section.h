// The report of a mixture file (manifest/mixture_json.h): its sources and
// the realised proportions of one epoch against the weights.
//
// Thread-safety: pure functions apart from the named files.
#ifndef LIBSHARD_SRC_REPORT_MIXTURE_SECTION_H_
#define LIBSHARD_SRC_REPORT_MIXTURE_SECTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "libshard/status.h"

namespace libshard::report {

// The mixture file `source` names (a .json whose format is a mixture's, or a
// folder holding mixture.json and no manifest.json); nullopt when it names
// none.
std::optional<std::string> MixtureFileOf(const std::string& source);

// The page body of mixture file `path`: a table per source (its path,
// samples, weight, the picks of epoch 0 in a shuffled order under `seed`,
// their share and the passes they make) and a bar chart of the picks. The
// sources are opened as the loader opens them (a source with several splits:
// its "train" split). Errors: Dataset::Open()'s, naming the file.
StatusOr<std::string> MixtureSection(const std::string& path, uint64_t seed);

}  // namespace libshard::report

#endif  // LIBSHARD_SRC_REPORT_MIXTURE_SECTION_H_
