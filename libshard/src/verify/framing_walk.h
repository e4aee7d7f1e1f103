// The framing walks: a file's records from byte 0 to the end or the first
// framing fault, each intact record handed to the record sink. Plain files
// are walked through a read window (read_window.h), compressed ones through
// the record module's stream reader. A framing fault stops the walk and is
// recorded with the bytes left unchecked. Private to the verifier.
#ifndef LIBSHARD_SRC_VERIFY_FRAMING_WALK_H_
#define LIBSHARD_SRC_VERIFY_FRAMING_WALK_H_

#include "libshard/record/record_reader.h"
#include "libshard/record/stream_reader.h"
#include "libshard/verify/verifier.h"
#include "read_window.h"
#include "record_sink.h"

namespace libshard::verify::internal {

// The record module's options for a verify run.
record::ReaderOptions ReaderOptionsFor(const VerifyOptions& options);

// Walks plain framing from byte 0. Returns after the last record or the
// first framing fault (recorded, with unchecked_bytes).
void WalkPlain(Window* window, const VerifyOptions& options, RecordSink* sink, FileResult* r);

// Walks a compressed stream to its end or its first fault (unchecked_bytes
// unknown then). `reader` is opened without a name (an empty one): its
// messages become the faults' as they are.
void WalkStream(record::RecordStreamReader* reader, const VerifyOptions& options, RecordSink* sink, FileResult* r);

// An empty_file fault when the walk found nothing to check (unless allowed,
// or listed empty). `no_bytes`: the file itself is empty.
void AddEmptyFault(FileResult* r, const VerifyOptions& options, const FileChecks& checks, bool no_bytes);

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_FRAMING_WALK_H_
