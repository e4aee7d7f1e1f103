// CSV columns stored as record features (source_listing.h CsvFeature): the
// `COLUMN:TYPE` spec, a field's value, and writing the values into a record.
#include <charconv>
#include <cmath>

#include "convert/listing_internal.h"
#include "libshard/convert/source_listing.h"
#include "libshard/example/example_builder.h"
#include "libshard/util/strings.h"

namespace libshard::convert {
namespace {

constexpr std::pair<FeatureType, const char*> kTypeNames[] = {
    {FeatureType::kInt, "int"},          {FeatureType::kFloat, "float"},          {FeatureType::kBytes, "bytes"},
    {FeatureType::kIntList, "int_list"}, {FeatureType::kFloatList, "float_list"},
};

const char* TypeName(FeatureType t) {
  for (const auto& [type, name] : kTypeNames) {
    if (type == t) return name;
  }
  return "bytes";
}

// One int64 or finite float spelled exactly (no spaces, no '+', no hex).
bool ParseOne(std::string_view s, int64_t* v) {
  if (s.empty() || s[0] == '+') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}
bool ParseOne(std::string_view s, float* v) {
  if (s.empty() || s[0] == '+') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, std::chars_format::general);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(*v);
}

// Space-separated values of one kind into *out; false names the bad one.
template <typename T>
bool ParseList(const std::string& field, std::vector<T>* out, std::string* bad) {
  for (size_t pos = 0; pos < field.size();) {
    if (field[pos] == ' ') {
      ++pos;
      continue;
    }
    const size_t end = std::min(field.find(' ', pos), field.size());
    T v{};
    if (!ParseOne(std::string_view(field).substr(pos, end - pos), &v)) {
      *bad = field.substr(pos, end - pos);
      return false;
    }
    out->push_back(v);
    pos = end;
  }
  return true;
}

}  // namespace

StatusOr<CsvFeature> ParseCsvFeature(std::string_view spec) {
  const size_t colon = spec.rfind(':');
  const std::string text(spec);
  if (colon == std::string_view::npos) {
    return InvalidArgumentError("--feature " + text +
                                ": give COLUMN:TYPE (TYPE int, float, bytes, int_list or "
                                "float_list)");
  }
  CsvFeature f;
  f.column = std::string(spec.substr(0, colon));
  const std::string_view type = spec.substr(colon + 1);
  bool known = false;
  for (const auto& [t, name] : kTypeNames) {
    if (type == name) {
      f.type = t;
      known = true;
    }
  }
  if (!known) {
    return InvalidArgumentError("--feature " + text + ": unknown type '" + std::string(type) +
                                "' (int, float, bytes, int_list or float_list)");
  }
  if (f.column.empty()) return InvalidArgumentError("--feature " + text + ": the column name is empty");
  if (!example::IsValidFeatureKey(f.column)) {
    return InvalidArgumentError("--feature " + text + ": the column name is not UTF-8");
  }
  if (util::StartsWith(f.column, "image/")) {
    return InvalidArgumentError("--feature " + text + ": keys under image/ are the converter's own; rename the column");
  }
  return f;
}

std::string CsvFeatureText(const CsvFeature& feature) { return feature.column + ":" + TypeName(feature.type); }

namespace internal {

std::string ParseFeatureValue(const CsvFeature& f, const std::string& field, FeatureValue* out) {
  const std::string column = "column '" + f.column + "': ";
  std::string bad;
  switch (f.type) {
    case FeatureType::kBytes:
      out->bytes = field;
      return "";
    case FeatureType::kInt:
    case FeatureType::kFloat: {
      const bool is_int = f.type == FeatureType::kInt;
      if (field.empty()) return column + "empty (" + (is_int ? "an int" : "a float") + " is required)";
      const bool ok = is_int ? ParseList(field, &out->ints, &bad) : ParseList(field, &out->floats, &bad);
      if (!ok || out->ints.size() + out->floats.size() != 1) {
        return column + "'" + field + "' is not " + (is_int ? "an int (64-bit)" : "a finite float") +
               (ok ? " (one value; --feature " + f.column + ":" + (is_int ? "int_list" : "float_list") +
                         " reads several)"
                   : "");
      }
      return "";
    }
    case FeatureType::kIntList:
      if (!ParseList(field, &out->ints, &bad)) return column + "'" + bad + "' is not an int (64-bit)";
      return "";
    case FeatureType::kFloatList:
      if (!ParseList(field, &out->floats, &bad)) return column + "'" + bad + "' is not a finite float";
      return "";
  }
  return "";
}

void AddFeatures(const std::vector<CsvFeature>& features, const std::vector<FeatureValue>& values,
                 example::ExampleBuilder* b) {
  for (size_t i = 0; i < features.size() && i < values.size(); ++i) {
    const FeatureValue& v = values[i];
    switch (features[i].type) {
      case FeatureType::kBytes:
        b->AddBytes(features[i].column, v.bytes);
        break;
      case FeatureType::kInt:
      case FeatureType::kIntList:
        b->AddInt64List(features[i].column, v.ints.data(), v.ints.size());
        break;
      case FeatureType::kFloat:
      case FeatureType::kFloatList:
        b->AddFloatList(features[i].column, v.floats.data(), v.floats.size());
        break;
    }
  }
}

}  // namespace internal
}  // namespace libshard::convert
