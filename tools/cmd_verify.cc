// `shard verify [OPTIONS] PATHS...`: the CI gate for shards. Checks every
// record's framing and CRCs, that each payload is a tf.Example, and a
// `<shard>.idx` beside a plain shard; with a manifest.json (--manifest, or
// found in a folder argument) the set against it; with --decode every image.
// Reports every fault with its file, byte offset and record number, then a
// summary. Files, folders (searched for shards recursively) and glob patterns
// are accepted. docs/verify.md describes the output, the JSON schema, the
// fault kinds and the exit codes.
//
// Output: fault lines, per-file notes and the summary go to stdout (they are
// the report; with --json one JSON document is all stdout holds); usage
// errors go to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "commands.h"
#include "json_writer.h"
#include "libshard/io/shard_paths.h"
#include "libshard/manifest/mixture_json.h"
#include "libshard/remote/staging.h"
#include "libshard/store/object_store.h"
#include "libshard/text_escape.h"
#include "libshard/verify/verifier.h"

namespace shard_tool {
namespace {

namespace verify = libshard::verify;
namespace io = libshard::io;
namespace record = libshard::record;
using libshard::DisplayText;

struct VerifyCliOptions {
  std::vector<std::string> paths;
  std::string manifest;
  bool no_manifest = false;
  bool decode = false;
  uint64_t max_pixels = 100'000'000;
  bool json = false;
  bool quiet = false;
  bool records_only = false;
  bool no_index = false;
  bool allow_empty = false;
  std::string compression = "auto";
  int threads = 0;
  uint64_t max_record_length = record::kDefaultMaxRecordLength;
};

struct Summary {
  uint64_t files = 0;
  uint64_t files_with_faults = 0;
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t unchecked_bytes = 0;
  uint64_t faults = 0;
  bool unreadable = false;
  double seconds = 0;
  double mb_per_s() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
};

Summary Summarize(const verify::SetResult& set, double seconds) {
  const std::vector<verify::FileResult>& results = set.files;
  Summary s;
  s.seconds = seconds;
  s.faults += set.name_set_faults.size();
  for (const auto& m : set.manifests) {
    s.faults += m.faults.size();
    for (const auto& f : m.faults) {
      if (f.kind == verify::SetFaultKind::kManifestUnreadable) s.unreadable = true;
    }
  }
  for (const auto& r : results) {
    ++s.files;
    if (!r.ok()) ++s.files_with_faults;
    s.records += r.records;
    s.bytes += r.bytes;
    s.unchecked_bytes += r.unchecked_bytes.value_or(0);
    s.faults += r.fault_count();
    if (r.Has(verify::FaultKind::kUnreadable)) s.unreadable = true;
  }
  return s;
}

void PrintHuman(const verify::SetResult& set, const Summary& s, bool quiet, std::ostream& out) {
  const std::vector<verify::FileResult>& results = set.files;
  // Names are shown as they are, hidden controls escaped (text_escape.h).
  for (const auto& r : results) {
    for (const auto& f : r.faults) {
      out << "shard verify: " << DisplayText(r.path) << ": at byte " << f.offset << " (record " << f.record
          << "): " << verify::FaultKindName(f.kind) << ": " << DisplayText(f.message) << "\n";
    }
    if (r.faults_omitted > 0) {
      out << "shard verify: " << DisplayText(r.path) << ": " << r.faults_omitted << " more faults not listed\n";
    }
    if (!r.unchecked_bytes.has_value()) {
      if (r.Has(verify::FaultKind::kUnreadable)) continue;  // nothing was read
      out << "shard verify: " << DisplayText(r.path) << ": the rest of the " << record::CompressionName(r.compression)
          << " stream after byte " << r.bytes << " left unchecked\n";
    } else if (*r.unchecked_bytes > 0) {
      out << "shard verify: " << DisplayText(r.path) << ": " << *r.unchecked_bytes << " bytes after byte " << r.bytes
          << " left unchecked\n";
    }
  }
  for (const auto& m : set.manifests) {
    for (const auto& f : m.faults) {
      out << "shard verify: " << DisplayText(f.path) << ": " << verify::FaultKindName(f.kind) << ": "
          << DisplayText(f.message);
      if (f.path != m.path) out << " (" << DisplayText(m.path) << ")";
      out << "\n";
    }
  }
  for (const auto& f : set.name_set_faults) {
    out << "shard verify: " << DisplayText(f.path) << ": " << verify::FaultKindName(f.kind) << ": "
        << DisplayText(f.message) << "\n";
  }
  if (quiet) return;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f", s.mb_per_s());
  out << "shard verify: " << s.files << (s.files == 1 ? " file" : " files") << " (" << s.files_with_faults
      << " with faults), " << s.records << " records, " << s.bytes << " bytes checked";
  if (s.unchecked_bytes > 0) out << ", " << s.unchecked_bytes << " bytes unchecked";
  out << ", " << s.faults << (s.faults == 1 ? " fault" : " faults");
  if (!set.manifests.empty()) {
    out << " (manifest" << (set.manifests.size() == 1 ? " " : "s ");
    for (size_t i = 0; i < set.manifests.size(); ++i) out << (i ? ", " : "") << set.manifests[i].path;
    out << ")";
  }
  out << ", " << rate << " MB/s\n";
  if (set.no_manifest) {
    out << "shard verify: no manifest.json given or found: sets checked by their -NNNNN-of-MMMMM names only\n";
  }
}

// Set-level faults as a JSON array of {path, kind, message}.
void SetFaultsJson(const std::vector<verify::SetFault>& faults, JsonWriter& j) {
  j.BeginArray();
  for (const auto& f : faults) {
    j.BeginObject();
    j.Field("path", f.path);
    j.Field("kind", verify::FaultKindName(f.kind));
    j.Field("message", f.message);
    j.EndObject();
  }
  j.EndArray();
}

void PrintJson(const verify::SetResult& set, const Summary& s, std::ostream& out) {
  const std::vector<verify::FileResult>& results = set.files;
  JsonWriter j(out);
  j.BeginObject();
  j.Key("files");
  j.BeginArray();
  for (const auto& r : results) {
    j.BeginObject();
    j.Field("path", r.path);
    j.Field("compression", record::CompressionName(r.compression));
    j.Field("records", r.records);
    j.Field("bytes", r.bytes);
    j.Key("unchecked_bytes");
    if (r.unchecked_bytes.has_value()) {
      j.Uint(*r.unchecked_bytes);
    } else {
      j.Null();
    }
    j.Field("faults_omitted", r.faults_omitted);
    j.Key("faults");
    j.BeginArray();
    for (const auto& f : r.faults) {
      j.BeginObject();
      j.Field("offset", f.offset);
      j.Field("record", f.record);
      j.Field("kind", verify::FaultKindName(f.kind));
      j.Field("message", f.message);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.Key("manifests");
  j.BeginArray();
  for (const auto& m : set.manifests) {
    j.BeginObject();
    j.Field("path", m.path);
    j.Field("shards", m.shards);
    j.Key("faults");
    SetFaultsJson(m.faults, j);
    j.EndObject();
  }
  j.EndArray();
  j.Key("summary");
  j.BeginObject();
  j.Field("files", s.files);
  j.Field("files_with_faults", s.files_with_faults);
  j.Field("records", s.records);
  j.Field("bytes", s.bytes);
  j.Field("unchecked_bytes", s.unchecked_bytes);
  j.Field("faults", s.faults);
  j.Field("seconds", s.seconds);
  j.Field("mb_per_s", s.mb_per_s());
  j.EndObject();
  j.Field("no_manifest", set.no_manifest);
  j.Key("sets");
  SetFaultsJson(set.name_set_faults, j);
  j.EndObject();
  out << "\n";
}

// The report's paths and messages with the staging folder named by its URL.
void ToUrls(const libshard::remote::StagedObjects& staged, verify::SetResult* set) {
  for (auto& r : set->files) {
    r.path = staged.ToUrl(r.path);
    for (auto& f : r.faults) f.message = staged.ToUrl(f.message);
  }
  auto fix = [&](std::vector<verify::SetFault>& faults) {
    for (auto& f : faults) {
      f.path = staged.ToUrl(f.path);
      f.message = staged.ToUrl(f.message);
    }
  };
  for (auto& m : set->manifests) {
    m.path = staged.ToUrl(m.path);
    fix(m.faults);
  }
  fix(set->name_set_faults);
}

int RunVerify(const VerifyCliOptions& cli_in, std::ostream& out, std::ostream& err);

// A mixture file (manifest/mixture_json.h) named alone: each of its sources
// checked in turn as if named on its own; the worst exit code. nullopt when
// `cli` names no mixture.
std::optional<int> VerifyMixture(const VerifyCliOptions& cli, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  if (cli.paths.size() != 1 || !cli.manifest.empty() || libshard::store::IsObjectUrl(cli.paths[0])) return std::nullopt;
  std::error_code ec;
  std::string file = cli.paths[0];
  if (fs::is_directory(file, ec) && !fs::exists(fs::path(file) / "manifest.json", ec)) {
    file = (fs::path(file) / "mixture.json").string();
  }
  if (file.size() < 5 || file.compare(file.size() - 5, 5, ".json") != 0 || !fs::is_regular_file(file, ec)) {
    return std::nullopt;
  }
  auto is_mixture = libshard::manifest::IsMixtureFile(file);
  if (!is_mixture.ok() || !*is_mixture) return std::nullopt;  // a manifest: the set's own checks say what is wrong
  auto mixture = libshard::manifest::ReadMixture(file);
  if (!mixture.ok()) {
    err << "shard verify: " << mixture.status().message() << "\n";
    return kExitUsage;
  }
  if (cli.json) {
    err << "shard verify: " << file << ": --json takes one dataset; verify the mixture's sources one by one\n";
    return kExitUsage;
  }
  int worst = kExitOk;
  for (int i = 0; i < mixture->sources_size(); ++i) {
    const std::string& path = mixture->sources(i).path();
    if (!cli.quiet)
      out << "shard verify: mixture " << DisplayText(file) << ": source " << i << " (" << DisplayText(path) << ")\n";
    VerifyCliOptions one = cli;
    one.paths = {path};
    if (!libshard::store::IsObjectUrl(path) && path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
      one.paths = {fs::path(path).parent_path().string()};  // a manifest: its folder, held to it
      if (one.paths[0].empty()) one.paths[0] = ".";
      one.manifest = path;
      one.no_manifest = true;
    }
    const int rc = RunVerify(one, out, err);
    worst = std::max(worst, rc);  // 2 (usage, unreadable) > 1 (faults) > 0
  }
  return worst;
}

int RunVerify(const VerifyCliOptions& cli_in, std::ostream& out, std::ostream& err) {
  if (std::optional<int> rc = VerifyMixture(cli_in, out, err)) return *rc;
  // s3:// and https://: downloaded once into a temporary folder (each listed
  // shard checked against its manifest size and CRC as it streams in), then
  // checked there; the report names the objects.
  VerifyCliOptions cli = cli_in;
  std::unique_ptr<libshard::remote::StagedObjects> staged;
  for (const std::string& p : cli_in.paths) {
    if (!libshard::store::IsObjectUrl(p)) continue;
    if (cli_in.paths.size() != 1 || !cli_in.manifest.empty()) {
      err << "shard verify: " << p << ": an s3:// or https:// location is checked on its own (one path, "
          << "no --manifest)\n";
      return kExitUsage;
    }
    auto s = libshard::remote::StagedObjects::Stage(p);
    if (!s.ok()) {
      err << "shard verify: " << s.status().message() << "\n";
      return StagingExitCode(s.status());
    }
    staged = std::move(*s);
    cli.paths = {staged->local()};
  }
  verify::VerifyOptions options;
  auto compression = record::ParseCompression(cli.compression);
  if (!compression.ok()) {
    err << "shard verify: " << compression.status().message() << "\n";
    return kExitUsage;
  }
  options.compression = *compression;
  options.check_examples = !cli.records_only;
  options.check_index = !cli.no_index;
  options.allow_empty = cli.allow_empty;
  options.threads = cli.threads;
  options.max_record_length = cli.max_record_length;
  options.decode_images = cli.decode;
  options.max_pixels = cli.max_pixels;
  if (libshard::Status s = verify::ValidateOptions(options); !s.ok()) {
    err << "shard verify: " << s.message() << "\n";
    return kExitUsage;
  }
  if (cli.paths.empty() && cli.manifest.empty()) {
    err << "shard verify: nothing to check: give PATHS or --manifest FILE\n";
    return kExitUsage;
  }
  std::vector<std::string> paths;
  if (!cli.paths.empty()) {
    auto expanded = io::ExpandPaths(cli.paths);
    if (!expanded.ok()) {
      err << "shard verify: " << expanded.status().message() << "\n";
      return kExitUsage;
    }
    paths = std::move(*expanded);
  }
  std::vector<std::string> manifests;
  if (!cli.manifest.empty()) manifests.push_back(cli.manifest);
  if (!cli.no_manifest) {
    for (std::string& m : verify::FindManifests(cli.paths)) manifests.push_back(std::move(m));
  }
  auto start = std::chrono::steady_clock::now();
  verify::SetResult set = verify::VerifySet(paths, manifests, options);
  if (set.no_manifest) {
    // The shard sets of folder arguments are checked by their names; a file
    // named on its own is not held to its siblings.
    std::vector<std::string> in_folders;
    for (const std::string& arg : cli.paths) {
      std::error_code ec;
      if (!std::filesystem::is_directory(arg, ec)) continue;
      auto found = io::FindShardFiles(arg);
      if (found.ok()) in_folders.insert(in_folders.end(), found->begin(), found->end());
    }
    set.name_set_faults = verify::CheckNumberedSets(in_folders);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (staged) ToUrls(*staged, &set);
  Summary s = Summarize(set, seconds);
  if (cli.json) {
    PrintJson(set, s, out);
  } else {
    PrintHuman(set, s, cli.quiet, out);
  }
  out.flush();
  if (staged && s.faults > 0 && !cli.quiet) {
    err << "shard verify: an object damaged after its upload is kept by a rerun of `shard convert -o "
           "s3://...`, which trusts the CRC-32C recorded at upload: rerun it with --recheck to read the kept "
           "objects back and redo the damaged ones\n";
  }
  if (s.unreadable) return kExitUsage;
  return s.faults > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void RegisterVerify(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
  auto opt = std::make_shared<VerifyCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check TFRecord shards: framing, both CRCs of every record, that each payload is a tf.Example,\n"
      "and FILE.idx beside a plain shard. PATHS are files, folders (searched recursively for *.tfrecord,\n"
      "*.tfrecords, *.tfrecord.gz and names ending in -NNNNN-of-NNNNN) or glob patterns. A manifest.json (--manifest, "
      "or\n"
      "found directly inside a folder argument) is checked too: every listed shard present with its record\n"
      "count, size and CRC-32C, no unlisted shard in its folder, labels in its label map, its schema in\n"
      "every record. --decode decodes every image, raw array and mask. Every fault is printed on stdout\n"
      "as \"shard verify: FILE: at byte OFFSET (record N): KIND: MESSAGE\" (set-level manifest faults as\n"
      "\"shard verify: FILE: KIND: MESSAGE\"), then a summary.\n"
      "A path may be s3://BUCKET/PREFIX (the folder of a manifest.json; every object under it is listed and\n"
      "downloaded once into a temporary folder under $TMPDIR, each listed shard checked against its size and\n"
      "CRC-32C as it streams in) or one s3:// / https:// shard; faults then name the objects.\n"
      "A mixture.json (format libshard.mixture/1, or a folder holding one) named alone: each of its\n"
      "sources is checked in turn; the exit code is the worst.\n"
      "Exit codes: 0 no fault, 1 faults found, 2 usage error or an unreadable file or manifest.");
  cmd->add_option("paths", opt->paths, "Shard files, folders or glob patterns (optional with --manifest)");
  cmd->add_option("--manifest", opt->manifest,
                  "manifest.json of the shard set: listed shards not among PATHS are checked too");
  cmd->add_flag("--no-manifest", opt->no_manifest, "Do not use a manifest.json found in a folder argument");
  auto* decode = cmd->add_flag("--decode", opt->decode,
                               "Decode every image (JPEG, PNG, raw array) and mask; compare with image/height, "
                               "image/width, image/channels");
  cmd->add_option("--max-pixels", opt->max_pixels, "With --decode: larger images (width*height) are faults")
      ->check(IntegerIn(1, int64_t{1} << 62))
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "Print one JSON document instead (schema: docs/verify.md)");
  cmd->add_option("--compression", opt->compression, "auto (detect per file), none, gzip or zlib")
      ->check(CLI::IsMember({"auto", "none", "gzip", "zlib"}))
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "Files checked at once, 0..256 (0 = one per core)")
      ->check(IntegerIn(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_flag("--records-only", opt->records_only,
                "Check framing and CRCs only, not that payloads are tf.Examples (e.g. raw-record files)")
      ->excludes(decode);
  cmd->add_flag("--no-index", opt->no_index, "Do not compare FILE.idx with the shard");
  cmd->add_flag(
      "--allow-empty", opt->allow_empty,
      "Accept files with no records and manifests that list none (default: an empty_file / manifest_empty fault)");
  cmd->add_option("--max-record-length", opt->max_record_length, "Longer records are length_too_large faults")
      ->check(IntegerIn(1, int64_t{1} << 62))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", opt->quiet, "Print only faults, no summary");
  cmd->callback([opt, exit_code, &out, &err] { *exit_code = RunVerify(*opt, out, err); });
}

}  // namespace shard_tool
