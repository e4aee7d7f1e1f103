// mixture.json: a weighted mixture of datasets named in a file (the
// libshard.Mixture message of manifest.proto, read as manifest_json.h reads
// every file of the project: unknown fields ignored, `format` checked).
//
//   {"format": "libshard.mixture/1",
//    "sources": [{"path": "photos", "weight": 0.7}, {"path": "s3://b/rare", "weight": 0.3}],
//    "samples_per_epoch": 100000, "label_maps": "merge"}
//
// Thread-safety: pure functions apart from the named file.
#ifndef LIBSHARD_MANIFEST_MIXTURE_JSON_H_
#define LIBSHARD_MANIFEST_MIXTURE_JSON_H_

#include <string>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::manifest {

// mixture.json's `format`.
inline constexpr char kMixtureFormat[] = "libshard.mixture/1";

// Whether the JSON file `path` says it is a mixture (its `format` is
// kMixtureFormat); a text without the words "libshard.mixture/" is not
// parsed (false). Errors: those of reading it, and of parsing a text that
// holds those words, naming it.
StatusOr<bool> IsMixtureFile(const std::string& path);

// Reads a mixture file: InvalidArgument naming the file for another format,
// no sources, a source without a path, a weight that is negative or not
// finite, or a label_maps word other than "", "error", "merge" and "keep".
// Relative source paths are returned joined to the file's folder (URLs and
// absolute paths as they are).
StatusOr<Mixture> ReadMixture(const std::string& path);

}  // namespace libshard::manifest

#endif  // LIBSHARD_MANIFEST_MIXTURE_JSON_H_
