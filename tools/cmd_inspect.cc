// `shard inspect FILE`: what a TFRecord file holds — record count, the
// feature keys with their kinds and value counts, and the first records.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <sstream>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "json_writer.h"
#include "libshard/example/example_view.h"
#include "libshard/image/probe.h"
#include "libshard/record/stream_reader.h"
#include "libshard/remote/staging.h"
#include "libshard/store/object_store.h"

namespace shard_tool {
namespace {

using libshard::Status;
using libshard::StatusCode;
using libshard::example::ExampleView;
using libshard::example::FeatureKind;
using libshard::example::FeatureKindName;
using libshard::example::FeatureView;

struct KeyStats {
  FeatureKind kind = FeatureKind::kNone;
  bool mixed_kinds = false;
  uint64_t records = 0;
  uint64_t min_values = UINT64_MAX;
  uint64_t max_values = 0;
};

struct FeatureSummary {
  std::string key;
  FeatureKind kind;
  size_t count;
  std::string preview;
};

struct RecordSummary {
  uint64_t offset;
  uint64_t size;
  bool is_example;
  std::vector<FeatureSummary> features;
  std::string raw_preview;  // for non-Example records
};

// Printable rendering of bytes: what they look like (image::DescribeContent:
// an image format, zstd data), else printable text quoted, else hex.
std::string PreviewBytes(std::string_view b) {
  const char* what = libshard::image::DescribeContent(b);
  if (what != nullptr && std::strcmp(what, "text") != 0) return what + (", " + std::to_string(b.size()) + " bytes");
  bool text = std::all_of(b.begin(), b.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (text) {
    std::string s = "\"" + std::string(b.substr(0, 48)) + (b.size() > 48 ? "...\"" : "\"");
    return s;
  }
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

struct InspectOptions {
  std::string file;
  bool json = false;
  size_t show = 3;
  std::string compression = "auto";
};

int RunInspect(const InspectOptions& opt_in, std::ostream& out, std::ostream& err) {
  auto compression = libshard::record::ParseCompression(opt_in.compression);
  if (!compression.ok()) {
    err << "shard inspect: " << compression.status().message() << "\n";
    return kExitUsage;
  }
  // s3:// and https://: the object is downloaded once into a temporary
  // folder (removed at the end) and read there; the report names the URL.
  InspectOptions opt = opt_in;
  std::unique_ptr<libshard::remote::StagedObjects> staged;
  auto named = [&](const std::string& text) { return staged ? staged->ToUrl(text) : text; };
  if (libshard::store::IsObjectUrl(opt.file)) {
    auto st = libshard::remote::StagedObjects::Stage(opt.file);
    if (!st.ok()) {
      err << "shard inspect: " << st.status().message() << "\n";
      return StagingExitCode(st.status());
    }
    staged = std::move(*st);
    opt.file = staged->local();
  }
  auto reader = libshard::record::RecordStreamReader::Open(opt.file, *compression);
  if (!reader.ok()) {
    err << "shard inspect: " << named(reader.status().message()) << "\n";
    return kExitUsage;
  }
  std::map<std::string, KeyStats> keys;
  std::vector<RecordSummary> first;
  uint64_t records = 0, examples = 0, bytes = 0;
  libshard::record::RecordView rec;
  Status s;
  while ((s = (*reader)->Next(&rec)).ok()) {
    ++records;
    bytes += rec.framed_size();
    auto ex = ExampleView::Parse(rec.data);
    RecordSummary summary{rec.offset, rec.framed_size(), ex.ok(), {}, {}};
    if (ex.ok()) {
      ++examples;
      ex->ForEachFeature([&](std::string_view key, const FeatureView& f) {
        KeyStats& k = keys[std::string(key)];
        if (k.records > 0 && k.kind != f.kind()) k.mixed_kinds = true;
        k.kind = f.kind();
        ++k.records;
        k.min_values = std::min<uint64_t>(k.min_values, f.size());
        k.max_values = std::max<uint64_t>(k.max_values, f.size());
        if (first.size() < opt.show) {
          summary.features.push_back({std::string(key), f.kind(), f.size(), PreviewFeature(f)});
        }
      });
    } else if (first.size() < opt.show) {
      summary.raw_preview = PreviewBytes(rec.data);
    }
    if (first.size() < opt.show) first.push_back(std::move(summary));
  }
  const bool damaged = s.code() != StatusCode::kOutOfRange;
  const char* comp = libshard::record::CompressionName((*reader)->compression());

  if (opt.json) {
    JsonWriter j(out);
    j.BeginObject();
    j.Field("file", opt_in.file);
    j.Field("compression", comp);
    j.Field("records", records);
    j.Field("examples", examples);
    j.Field("bytes", bytes);
    j.Key("features");
    j.BeginArray();
    for (const auto& [key, k] : keys) {
      j.BeginObject();
      j.Field("key", key);
      j.Field("kind", k.mixed_kinds ? "mixed" : FeatureKindName(k.kind));
      j.Field("records", k.records);
      j.Field("min_values", k.min_values);
      j.Field("max_values", k.max_values);
      j.EndObject();
    }
    j.EndArray();
    j.Key("first_records");
    j.BeginArray();
    for (size_t i = 0; i < first.size(); ++i) {
      const RecordSummary& r = first[i];
      j.BeginObject();
      j.Field("index", static_cast<uint64_t>(i));
      j.Field("offset", r.offset);
      j.Field("size", r.size);
      j.Field("example", r.is_example);
      if (!r.is_example) j.Field("preview", r.raw_preview);
      j.Key("features");
      j.BeginArray();
      for (const auto& f : r.features) {
        j.BeginObject();
        j.Field("key", f.key);
        j.Field("kind", FeatureKindName(f.kind));
        j.Field("count", static_cast<uint64_t>(f.count));
        j.Field("preview", f.preview);
        j.EndObject();
      }
      j.EndArray();
      j.EndObject();
    }
    j.EndArray();
    j.Key("error");
    if (damaged)
      j.String(named(s.message()));
    else
      j.Null();
    j.EndObject();
  } else {
    out << opt_in.file << ": " << records << " records (" << examples << " tf.Example), " << bytes
        << " bytes, compression " << comp << "\n";
    if (!keys.empty()) {
      out << "features:\n";
      for (const auto& [key, k] : keys) {
        out << "  " << key << "  " << (k.mixed_kinds ? "mixed" : FeatureKindName(k.kind)) << "  in " << k.records
            << " records, values " << k.min_values;
        if (k.max_values != k.min_values) out << ".." << k.max_values;
        out << "\n";
      }
    }
    for (size_t i = 0; i < first.size(); ++i) {
      const RecordSummary& r = first[i];
      out << "record " << i << " at byte " << r.offset << " (" << r.size << " bytes)";
      if (!r.is_example) out << ": not a tf.Example: " << r.raw_preview;
      out << "\n";
      for (const auto& f : r.features) {
        out << "  " << f.key << ": " << FeatureKindName(f.kind) << "[" << f.count << "] " << f.preview << "\n";
      }
    }
  }
  if (damaged) {
    err << "shard inspect: " << named(s.message()) << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void RegisterInspect(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
  auto opt = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarize a TFRecord file: record count, feature keys with kinds and value counts, first records.\n"
      "Exit codes: 0 read to the end, 1 the file is truncated or corrupt (the summary covers the records "
      "before the damage), 2 usage or unreadable file.");
  cmd->add_option("file", opt->file,
                  "TFRecord file (plain, GZIP or ZLIB), or an s3:// or https:// object (downloaded once into a "
                  "temporary folder under $TMPDIR, removed after)")
      ->required();
  cmd->add_flag("--json", opt->json, "Print one JSON document (includes \"records\": N)");
  cmd->add_option("-n,--show", opt->show, "How many of the first records to summarize, 0..1000000")
      ->check(IntegerIn(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--compression", opt->compression, "auto, none, gzip or zlib")->capture_default_str();
  cmd->callback([opt, exit_code, &out, &err] {
    try {
      *exit_code = RunInspect(*opt, out, err);
    } catch (const std::bad_alloc&) {  // a record larger than the memory left
      err << "shard inspect: " << opt->file << ": out of memory reading its records\n";
      *exit_code = kExitFailure;
    }
  });
}

}  // namespace shard_tool
