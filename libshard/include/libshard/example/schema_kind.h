// The schema's words for feature kinds: manifest.json's `schema[].kind`
// (proto/libshard/manifest.proto FeatureSpec.kind) is "bytes", "int64" or
// "float", one per example::FeatureKind. The converter writes them and the
// verifier reads them back, both through here.
//
//   spec.set_kind(example::SchemaKindName(example::FeatureKind::kInt64));  // "int64"
//   example::FeatureKind kind;
//   if (!example::ParseSchemaKind(spec.kind(), &kind)) ...  // not bytes, int64 or float
//
// (FeatureKindName, example_view.h, gives the tf.Example words, "int64_list".)
// Thread-safety: pure functions.
#ifndef LIBSHARD_EXAMPLE_SCHEMA_KIND_H_
#define LIBSHARD_EXAMPLE_SCHEMA_KIND_H_

#include <string_view>

#include "libshard/example/example_view.h"

namespace libshard::example {

// "bytes", "int64", "float"; "none" for kNone (never written).
const char* SchemaKindName(FeatureKind kind);
// The kind a schema word names (exactly "bytes", "int64" or "float"); false,
// `*kind` untouched, for anything else.
bool ParseSchemaKind(std::string_view name, FeatureKind* kind);

}  // namespace libshard::example

#endif  // LIBSHARD_EXAMPLE_SCHEMA_KIND_H_
