// `shard verify [OPTIONS] PATHS...`: the CI gate for shards. Checks every
// record's framing and CRCs, that each payload is a tf.Example, and a
// `<shard>.idx` and `<shard>.labels` beside a plain shard; with a manifest.json (--manifest, or
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
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "commands.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/manifest/mixture_json.h"
#include "libshard/remote/remote_verify.h"
#include "libshard/store/object_store.h"
#include "libshard/text_escape.h"
#include "libshard/verify/verifier.h"
#include "libshard/verify/verify_report.h"

namespace shard_tool {
namespace {

namespace verify = libshard::verify;
namespace record = libshard::record;
using libshard::DisplayText;
using libshard::StatusOr;

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

void PrintHuman(const verify::VerifyReport& report, bool quiet, std::ostream& out) {
  const verify::SetResult& set = report.set;
  const verify::VerifySummary& s = report.summary;
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
          << " left unchecked";
      if (r.frames_after_fault.has_value()) {
        out << " (the damaged record, then " << *r.frames_after_fault << " records whose framing holds)";
      }
      out << "\n";
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

int RunVerify(const VerifyCliOptions& cli, std::ostream& out, std::ostream& err);

// A mixture file (manifest/mixture_json.h) named alone: each of its sources
// checked in turn as if named on its own; the worst exit code. nullopt when
// `cli` names no mixture.
std::optional<int> VerifyMixture(const VerifyCliOptions& cli, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  if (cli.paths.size() != 1 || !cli.manifest.empty() || libshard::store::IsObjectUrl(cli.paths[0])) return std::nullopt;
  std::error_code ec;
  std::string file = cli.paths[0];
  if (fs::is_directory(file, ec) && !fs::exists(fs::path(file) / libshard::manifest::kManifestName, ec)) {
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

int RunVerify(const VerifyCliOptions& cli, std::ostream& out, std::ostream& err) {
  if (std::optional<int> rc = VerifyMixture(cli, out, err)) return *rc;
  verify::VerifyRequest request;
  auto compression = record::ParseCompression(cli.compression);
  if (!compression.ok()) {
    err << "shard verify: " << compression.status().message() << "\n";
    return kExitUsage;
  }
  verify::VerifyOptions& options = request.options;
  options.compression = *compression;
  options.check_examples = !cli.records_only;
  options.check_index = !cli.no_index;
  options.allow_empty = cli.allow_empty;
  options.threads = cli.threads;
  options.max_record_length = cli.max_record_length;
  options.decode_images = cli.decode;
  options.max_pixels = cli.max_pixels;
  request.paths = cli.paths;
  request.manifest = cli.manifest;
  request.no_manifest = cli.no_manifest;
  // s3:// and https:// are staged and checked there (remote/remote_verify.h).
  StatusOr<libshard::remote::VerifyOutcome> v = libshard::remote::VerifyLocation(request);
  if (!v.ok()) {
    err << "shard verify: " << v.status().message() << "\n";
    return StagingExitCode(v.status());
  }
  if (cli.json) {
    out << verify::VerifyReportJson(v->report);
  } else {
    PrintHuman(v->report, cli.quiet, out);
  }
  out.flush();
  if (v->remote && v->report.summary.faults > 0 && !cli.quiet) {
    err << "shard verify: an object damaged after its upload is kept by a rerun of `shard convert -o "
           "s3://...`, which trusts the CRC-32C recorded at upload: rerun it with --recheck to read the kept "
           "objects back and redo the damaged ones\n";
  }
  return v->exit_code;
}

}  // namespace

void RegisterVerify(CLI::App& app, int* exit_code, std::ostream& out, std::ostream& err) {
  auto opt = std::make_shared<VerifyCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Check TFRecord shards: framing, both CRCs of every record, that each payload is a tf.Example,\n"
      "and FILE.idx and FILE.labels beside a plain shard. PATHS are files, folders (searched recursively\n"
      "for *.tfrecord, *.tfrecords, *.tfrecord.gz and names ending in -NNNNN-of-NNNNN) or glob patterns.\n"
      "A manifest.json (--manifest, or found directly inside a folder argument) is checked too: every\n"
      "listed shard present with its record count, size and CRC-32C, no unlisted shard in its folder,\n"
      "labels in its label map, its schema in every record. --decode decodes every image, raw array and\n"
      "mask. Every fault is printed on stdout as \"shard verify: FILE: at byte OFFSET (record N): KIND:\n"
      "MESSAGE\" (set-level manifest faults as \"shard verify: FILE: KIND: MESSAGE\"), then a summary.\n"
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
  cmd->add_flag("--no-index", opt->no_index, "Do not compare FILE.idx and FILE.labels with the shard");
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
