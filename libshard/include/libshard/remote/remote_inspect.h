// `shard inspect` of a local file or of one object as one call: a local
// path goes straight to reader::InspectFile (reader/inspect.h); an s3:// or
// https:// object is staged first (staging.h: downloaded once into a
// temporary folder, removed before the call returns) and inspected there,
// its summary and messages naming the URL, never the folder.
//
//   LIBSHARD_ASSIGN_OR_RETURN(reader::Inspection in,
//                             remote::InspectObject("s3://bkt/ds/train-00000-of-00004.tfrecord", {}));
//
// Errors: staging's (staging.h: a bad URL, nothing there, the store's errors
// naming the object, a full $TMPDIR) and InspectFile's, named by the URL.
// Damage is no error: it is in `error`. Thread-safety: as staging.h and
// reader/inspect.h (reentrant).
#ifndef LIBSHARD_REMOTE_REMOTE_INSPECT_H_
#define LIBSHARD_REMOTE_REMOTE_INSPECT_H_

#include <string>

#include "libshard/reader/inspect.h"
#include "libshard/status.h"

namespace libshard::remote {

// The summary of `file` (a path, or an s3:// / https:// object); its
// `file` field is `file` as given.
StatusOr<reader::Inspection> InspectObject(const std::string& file, const reader::InspectOptions& options = {});

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_REMOTE_INSPECT_H_
