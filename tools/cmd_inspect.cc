// `shard inspect FILE`: what a TFRecord file holds — record count, the
// feature keys with their kinds and value counts, and the first records.
// The work is remote::InspectObject (libshard/remote/remote_inspect.h: an
// s3:// / https:// object staged first) over reader::InspectFile
// (libshard/reader/inspect.h); this file parses the flags and prints.
#include <iostream>
#include <memory>
#include <string>

#include "cli_checks.h"
#include "commands.h"
#include "libshard/reader/inspect.h"
#include "libshard/remote/remote_inspect.h"
#include "libshard/store/object_store.h"

namespace shard_tool {
namespace {

using libshard::example::FeatureKindName;
using libshard::reader::Inspection;

struct InspectFlags {
  std::string file;
  bool json = false;
  size_t show = 3;
  std::string compression = "auto";
};

void PrintText(const Inspection& in, std::ostream& out) {
  out << in.file << ": " << in.records << " records (" << in.examples << " tf.Example), " << in.bytes
      << " bytes, compression " << libshard::record::CompressionName(in.compression) << "\n";
  if (!in.features.empty()) {
    out << "features:\n";
    for (const libshard::reader::FeatureStats& k : in.features) {
      out << "  " << k.key << "  " << k.KindName() << "  in " << k.records << " records, values " << k.min_values;
      if (k.max_values != k.min_values) out << ".." << k.max_values;
      out << "\n";
    }
  }
  for (size_t i = 0; i < in.first_records.size(); ++i) {
    const libshard::reader::RecordSummary& r = in.first_records[i];
    out << "record " << i << " at byte " << r.offset << " (" << r.size << " bytes)";
    if (!r.is_example) out << ": not a tf.Example: " << r.raw_preview;
    out << "\n";
    for (const libshard::reader::FeaturePreview& f : r.features) {
      out << "  " << f.key << ": " << FeatureKindName(f.kind) << "[" << f.count << "] " << f.preview << "\n";
    }
  }
}

int RunInspect(const InspectFlags& f, std::ostream& out, std::ostream& err) {
  libshard::reader::InspectOptions options;
  options.show = f.show;
  auto compression = libshard::record::ParseCompression(f.compression);
  if (!compression.ok()) {
    err << "shard inspect: " << compression.status().message() << "\n";
    return kExitUsage;
  }
  options.compression = *compression;
  libshard::StatusOr<Inspection> in = libshard::remote::InspectObject(f.file, options);
  if (!in.ok()) {
    err << "shard inspect: " << in.status().message() << "\n";
    if (libshard::store::IsObjectUrl(f.file)) return StagingExitCode(in.status());
    return in.status().code() == libshard::StatusCode::kResourceExhausted ? kExitFailure : kExitUsage;
  }
  if (f.json)
    out << libshard::reader::InspectionJson(*in);
  else
    PrintText(*in, out);
  if (!in->error.empty()) {
    err << "shard inspect: " << in->error << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void RegisterInspect(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
  auto flags = std::make_shared<InspectFlags>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "Summarize a TFRecord file: record count, feature keys with kinds and value counts, first records.\n"
      "Exit codes: 0 read to the end, 1 the file is truncated or corrupt (the summary covers the records "
      "before the damage), 2 usage or unreadable file.");
  cmd->add_option("file", flags->file,
                  "TFRecord file (plain, GZIP or ZLIB), or an s3:// or https:// object (downloaded once into a "
                  "temporary folder under $TMPDIR, removed after)")
      ->required();
  cmd->add_flag("--json", flags->json, "Print one JSON document (includes \"records\": N)");
  cmd->add_option("-n,--show", flags->show, "How many of the first records to summarize, 0..1000000")
      ->check(IntegerIn(0, static_cast<int64_t>(libshard::reader::kMaxInspectShow)))
      ->capture_default_str();
  cmd->add_option("--compression", flags->compression, "auto, none, gzip or zlib")->capture_default_str();
  cmd->callback([flags, exit_code, &out, &err] { *exit_code = RunInspect(*flags, out, err); });
}

}  // namespace shard_tool
