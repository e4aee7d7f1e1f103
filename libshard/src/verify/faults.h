// The fault vocabulary inside the verifier: adding a fault under the
// per-file cap (VerifyOptions::max_faults_per_file), and which kinds are
// framing faults (those that stop a file's walk). The kinds and their names
// are public (verifier.h). Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_FAULTS_H_
#define LIBSHARD_SRC_VERIFY_FAULTS_H_

#include <cstdint>
#include <string>

#include "libshard/verify/verifier.h"

namespace libshard::verify::internal {

// Appends a fault to `r`, or counts it in faults_omitted beyond the cap.
void AddFault(FileResult* r, const VerifyOptions& options, uint64_t offset, uint64_t record, FaultKind kind,
              std::string message);

// Faults that stop the walk (or come instead of it).
bool IsFramingFault(FaultKind kind);
// True when `r` lists a framing fault.
bool HasFramingFault(const FileResult& r);

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_FAULTS_H_
