// Box record (example/box_record.h): the Object Detection API's box keys.
#include "libshard/example/box_record.h"

#include <cstdio>
#include <string>

namespace libshard::example {
namespace {

constexpr const char* kCoordKeys[4] = {keys::kObjectXmin, keys::kObjectYmin, keys::kObjectXmax, keys::kObjectYmax};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A present optional list must have one value per box, of its kind.
Status CheckOptional(const ExampleView& ex, const char* key, FeatureKind kind, size_t n) {
  FeatureView f;
  if (!ex.Find(key, &f)) return Status::OK();
  if (f.kind() != kind && !(f.size() == 0 && n == 0)) {
    return DataLossError(std::string(key) + " has the wrong type (expected " +
                         (kind == FeatureKind::kFloat   ? "float"
                          : kind == FeatureKind::kInt64 ? "int64"
                                                        : "bytes") +
                         ")");
  }
  if (f.size() != n) {
    return DataLossError(std::string(key) + " has " + std::to_string(f.size()) + " values for " + std::to_string(n) +
                         " boxes");
  }
  return Status::OK();
}

}  // namespace

bool HasBoxKeys(const ExampleView& ex) {
  FeatureView f;
  for (const char* k : kCoordKeys)
    if (ex.Find(k, &f)) return true;
  return ex.Find(keys::kObjectLabel, &f);
}

Status ReadBoxes(const ExampleView& ex, BoxRecord* out) {
  out->boxes.clear();
  out->labels.clear();
  if (!HasBoxKeys(ex)) return Status::OK();
  FeatureView coord[4];
  for (int k = 0; k < 4; ++k) {
    if (!ex.Find(kCoordKeys[k], &coord[k])) {
      return DataLossError(std::string("box keys without ") + kCoordKeys[k]);
    }
  }
  const size_t n = coord[0].size();
  for (int k = 0; k < 4; ++k) {
    if (coord[k].size() != n) {
      return DataLossError(std::string("unequal box lists: ") + kCoordKeys[0] + " has " + std::to_string(n) +
                           " values, " + kCoordKeys[k] + " has " + std::to_string(coord[k].size()));
    }
    if (n > 0 && coord[k].kind() != FeatureKind::kFloat) {
      return DataLossError(std::string(kCoordKeys[k]) + " has the wrong type (expected float)");
    }
  }
  FeatureView label;
  if (!ex.Find(keys::kObjectLabel, &label)) {
    if (n > 0) return DataLossError(std::to_string(n) + " boxes without " + keys::kObjectLabel);
  } else {
    if (label.size() != n) {
      return DataLossError(std::string(keys::kObjectLabel) + " has " + std::to_string(label.size()) + " values for " +
                           std::to_string(n) + " boxes");
    }
    if (n > 0 && label.kind() != FeatureKind::kInt64) {
      return DataLossError(std::string(keys::kObjectLabel) + " has the wrong type (expected int64)");
    }
  }
  LIBSHARD_RETURN_IF_ERROR(CheckOptional(ex, keys::kObjectText, FeatureKind::kBytes, n));
  LIBSHARD_RETURN_IF_ERROR(CheckOptional(ex, keys::kObjectArea, FeatureKind::kFloat, n));
  LIBSHARD_RETURN_IF_ERROR(CheckOptional(ex, keys::kObjectIsCrowd, FeatureKind::kInt64, n));
  LIBSHARD_RETURN_IF_ERROR(CheckOptional(ex, keys::kObjectDifficult, FeatureKind::kInt64, n));
  LIBSHARD_RETURN_IF_ERROR(CheckOptional(ex, keys::kObjectTruncated, FeatureKind::kInt64, n));
  out->boxes.resize(n);
  out->labels.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const float v[4] = {coord[0].float_value(i), coord[1].float_value(i), coord[2].float_value(i),
                        coord[3].float_value(i)};
    for (int k = 0; k < 4; ++k) {
      if (!(v[k] >= 0.0f && v[k] <= 1.0f)) {  // NaN fails too
        return DataLossError("box " + std::to_string(i) + ": " + kCoordKeys[k] + " " + Num(v[k]) + " is not in [0, 1]");
      }
    }
    if (v[0] > v[2] || v[1] > v[3]) {
      return DataLossError("box " + std::to_string(i) + ": min > max (xmin " + Num(v[0]) + ", xmax " + Num(v[2]) +
                           ", ymin " + Num(v[1]) + ", ymax " + Num(v[3]) + ")");
    }
    out->boxes[i] = image::Box{v[0], v[1], v[2], v[3]};
    out->labels[i] = label.int64(i);
    if (out->labels[i] < 0) {
      return DataLossError("box " + std::to_string(i) + ": " + keys::kObjectLabel + " " +
                           std::to_string(out->labels[i]) + " is negative");
    }
  }
  return Status::OK();
}

}  // namespace libshard::example
