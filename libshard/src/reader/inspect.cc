// reader::InspectFile: one pass over a TFRecord file (reader/inspect.h).
#include "libshard/reader/inspect.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <new>
#include <sstream>
#include <utility>

#include "libshard/example/example_view.h"
#include "libshard/image/probe.h"
#include "libshard/util/json_writer.h"

namespace libshard::reader {
namespace {

using example::ExampleView;
using example::FeatureKind;
using example::FeatureKindName;
using example::FeatureView;

// Printable rendering of bytes: what they look like (image::DescribeContent:
// an image format, zstd data), else printable text quoted, else hex.
std::string PreviewBytes(std::string_view b) {
  const char* what = image::DescribeContent(b);
  if (what != nullptr && std::strcmp(what, "text") != 0) return what + (", " + std::to_string(b.size()) + " bytes");
  const bool text = std::all_of(b.begin(), b.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (text) return "\"" + std::string(b.substr(0, 48)) + (b.size() > 48 ? "...\"" : "\"");
  static const char* kHex = "0123456789abcdef";
  std::string s = std::to_string(b.size()) + " bytes: ";
  for (size_t i = 0; i < std::min<size_t>(b.size(), 16); ++i) {
    s += kHex[static_cast<unsigned char>(b[i]) >> 4];
    s += kHex[static_cast<unsigned char>(b[i]) & 15];
  }
  if (b.size() > 16) s += "...";
  return s;
}

std::string PreviewFeature(const FeatureView& f) {
  std::ostringstream os;
  constexpr size_t kMax = 8;
  switch (f.kind()) {
    case FeatureKind::kBytes:
      for (size_t i = 0; i < std::min(f.size(), size_t{3}); ++i) os << (i ? ", " : "") << PreviewBytes(f.bytes(i));
      if (f.size() > 3) os << ", ...";
      break;
    case FeatureKind::kInt64:
      for (size_t i = 0; i < std::min(f.size(), kMax); ++i) os << (i ? ", " : "") << f.int64(i);
      if (f.size() > kMax) os << ", ...";
      break;
    case FeatureKind::kFloat:
      for (size_t i = 0; i < std::min(f.size(), kMax); ++i) os << (i ? ", " : "") << f.float_value(i);
      if (f.size() > kMax) os << ", ...";
      break;
    case FeatureKind::kNone:
      break;
  }
  return os.str();
}

// The pass itself; may throw std::bad_alloc (a record larger than the memory left).
StatusOr<Inspection> Inspect(const std::string& path, const InspectOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(auto reader, record::RecordStreamReader::Open(path, options.compression));
  Inspection in;
  in.file = path;
  std::map<std::string, FeatureStats> keys;
  record::RecordView rec;
  Status s;
  while ((s = reader->Next(&rec)).ok()) {
    ++in.records;
    in.bytes += rec.framed_size();
    const bool show = in.first_records.size() < options.show;
    StatusOr<ExampleView> ex = ExampleView::Parse(rec.data);
    RecordSummary summary{rec.offset, rec.framed_size(), ex.ok(), {}, {}};
    if (ex.ok()) {
      ++in.examples;
      ex->ForEachFeature([&](std::string_view key, const FeatureView& f) {
        FeatureStats& k = keys[std::string(key)];
        if (k.records > 0 && k.kind != f.kind()) k.mixed_kinds = true;
        k.kind = f.kind();
        k.min_values = k.records == 0 ? f.size() : std::min<uint64_t>(k.min_values, f.size());
        k.max_values = std::max<uint64_t>(k.max_values, f.size());
        ++k.records;
        if (show) summary.features.push_back({std::string(key), f.kind(), f.size(), PreviewFeature(f)});
      });
    } else if (show) {
      summary.raw_preview = PreviewBytes(rec.data);
    }
    if (show) in.first_records.push_back(std::move(summary));
  }
  if (s.code() != StatusCode::kOutOfRange) in.error = s.message();
  in.compression = reader->compression();
  for (auto& [key, k] : keys) {
    k.key = key;
    in.features.push_back(std::move(k));
  }
  return in;
}

}  // namespace

const char* FeatureStats::KindName() const { return mixed_kinds ? "mixed" : FeatureKindName(kind); }

Status ValidateInspectOptions(const InspectOptions& options) {
  if (options.show > kMaxInspectShow) {
    return Status(StatusCode::kInvalidArgument,
                  "show: " + std::to_string(options.show) + " is not in 0.." + std::to_string(kMaxInspectShow));
  }
  return Status::OK();
}

StatusOr<Inspection> InspectFile(const std::string& path, const InspectOptions& options) {
  LIBSHARD_RETURN_IF_ERROR(ValidateInspectOptions(options));
  try {
    return Inspect(path, options);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kResourceExhausted, path + ": out of memory reading its records");
  }
}

std::string InspectionJson(const Inspection& in) {
  std::ostringstream out;
  util::JsonWriter j(out);
  j.BeginObject();
  j.Field("file", in.file);
  j.Field("compression", record::CompressionName(in.compression));
  j.Field("records", in.records);
  j.Field("examples", in.examples);
  j.Field("bytes", in.bytes);
  j.Key("features");
  j.BeginArray();
  for (const FeatureStats& k : in.features) {
    j.BeginObject();
    j.Field("key", k.key);
    j.Field("kind", k.KindName());
    j.Field("records", k.records);
    j.Field("min_values", k.min_values);
    j.Field("max_values", k.max_values);
    j.EndObject();
  }
  j.EndArray();
  j.Key("first_records");
  j.BeginArray();
  for (size_t i = 0; i < in.first_records.size(); ++i) {
    const RecordSummary& r = in.first_records[i];
    j.BeginObject();
    j.Field("index", static_cast<uint64_t>(i));
    j.Field("offset", r.offset);
    j.Field("size", r.size);
    j.Field("example", r.is_example);
    if (!r.is_example) j.Field("preview", r.raw_preview);
    j.Key("features");
    j.BeginArray();
    for (const FeaturePreview& f : r.features) {
      j.BeginObject();
      j.Field("key", f.key);
      j.Field("kind", FeatureKindName(f.kind));
      j.Field("count", f.count);
      j.Field("preview", f.preview);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.Key("error");
  if (in.error.empty())
    j.Null();
  else
    j.String(in.error);
  j.EndObject();
  return out.str();
}

void MapText(const std::function<std::string(const std::string&)>& map, Inspection* in) {
  in->file = map(in->file);
  if (!in->error.empty()) in->error = map(in->error);
}

}  // namespace libshard::reader
