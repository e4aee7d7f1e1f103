// The tools' --json output is written by the library's JSON writer
// (libshard/util/json_writer.h), the one verify's report uses too.
#ifndef LIBSHARD_TOOLS_JSON_WRITER_H_
#define LIBSHARD_TOOLS_JSON_WRITER_H_

#include "libshard/util/json_writer.h"

namespace shard_tool {

using libshard::util::JsonWriter;

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_JSON_WRITER_H_
