// The sections about the set as a whole at the end of the report page:
// rejects grouped by cause, the verification result and the conversion's
// options. Each returns HTML text.
#ifndef LIBSHARD_REPORT_DATASET_SECTIONS_H_
#define LIBSHARD_REPORT_DATASET_SECTIONS_H_

#include <string>

#include "report/report_context.h"

namespace libshard::report {

std::string RejectSection(const Manifest& m);
// Runs the verifier over the manifest's shards (ReportOptions::verify_decode
// decodes every image too) and shows its result.
std::string VerifySection(const Context& c);
std::string OptionsSection(const Manifest& m);

}  // namespace libshard::report

#endif  // LIBSHARD_REPORT_DATASET_SECTIONS_H_
