#include "libshard/example/schema_kind.h"

namespace libshard::example {

const char* SchemaKindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kBytes:
      return "bytes";
    case FeatureKind::kInt64:
      return "int64";
    case FeatureKind::kFloat:
      return "float";
    case FeatureKind::kNone:
      break;
  }
  return "none";
}

bool ParseSchemaKind(std::string_view name, FeatureKind* kind) {
  for (FeatureKind k : {FeatureKind::kBytes, FeatureKind::kInt64, FeatureKind::kFloat}) {
    if (name == SchemaKindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace libshard::example
