// One verify run as a typed call (verify_report.h): the request's paths
// expanded and checked as a set, the totals, and the one JSON document.
#include "libshard/verify/verify_report.h"

#include <chrono>
#include <filesystem>
#include <sstream>
#include <system_error>
#include <utility>

#include "libshard/io/shard_paths.h"
#include "libshard/util/json_writer.h"

namespace libshard::verify {

namespace {

// Set-level faults as a JSON array of {path, kind, message}.
void SetFaultsJson(const std::vector<SetFault>& faults, util::JsonWriter& j) {
  j.BeginArray();
  for (const SetFault& f : faults) {
    j.BeginObject();
    j.Field("path", f.path);
    j.Field("kind", FaultKindName(f.kind));
    j.Field("message", f.message);
    j.EndObject();
  }
  j.EndArray();
}

void FileJson(const FileResult& r, util::JsonWriter& j) {
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
  for (const Fault& f : r.faults) {
    j.BeginObject();
    j.Field("offset", f.offset);
    j.Field("record", f.record);
    j.Field("kind", FaultKindName(f.kind));
    j.Field("message", f.message);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

}  // namespace

VerifySummary Summarize(const SetResult& set, double seconds) {
  VerifySummary s;
  s.seconds = seconds;
  s.faults += set.name_set_faults.size();
  for (const ManifestResult& m : set.manifests) {
    s.faults += m.faults.size();
    for (const SetFault& f : m.faults) {
      if (f.kind == SetFaultKind::kManifestUnreadable) s.unreadable = true;
    }
  }
  for (const FileResult& r : set.files) {
    ++s.files;
    if (!r.ok()) ++s.files_with_faults;
    s.records += r.records;
    s.bytes += r.bytes;
    s.unchecked_bytes += r.unchecked_bytes.value_or(0);
    s.faults += r.fault_count();
    if (r.Has(FaultKind::kUnreadable)) s.unreadable = true;
  }
  return s;
}

StatusOr<VerifyReport> Verify(const VerifyRequest& request) {
  LIBSHARD_RETURN_IF_ERROR(ValidateOptions(request.options));
  if (request.paths.empty() && request.manifest.empty()) {
    return InvalidArgumentError("nothing to check: give PATHS or --manifest FILE");
  }
  std::vector<std::string> paths;
  if (!request.paths.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(paths, io::ExpandPaths(request.paths));
  }
  std::vector<std::string> manifests;
  if (!request.manifest.empty()) manifests.push_back(request.manifest);
  if (!request.no_manifest) {
    for (std::string& m : FindManifests(request.paths)) manifests.push_back(std::move(m));
  }
  const auto start = std::chrono::steady_clock::now();
  VerifyReport report;
  report.set = VerifySet(paths, manifests, request.options);
  if (report.set.no_manifest) {
    // The shard sets of folder arguments are checked by their names; a file
    // named on its own is not held to its siblings.
    std::vector<std::string> in_folders;
    for (const std::string& arg : request.paths) {
      std::error_code ec;
      if (!std::filesystem::is_directory(arg, ec)) continue;
      auto found = io::FindShardFiles(arg);
      if (found.ok()) in_folders.insert(in_folders.end(), found->begin(), found->end());
    }
    report.set.name_set_faults = CheckNumberedSets(in_folders);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.summary = Summarize(report.set, seconds);
  return report;
}

std::string VerifyReportJson(const VerifyReport& report) {
  const SetResult& set = report.set;
  const VerifySummary& s = report.summary;
  std::ostringstream out;
  util::JsonWriter j(out);
  j.BeginObject();
  j.Key("files");
  j.BeginArray();
  for (const FileResult& r : set.files) FileJson(r, j);
  j.EndArray();
  j.Key("manifests");
  j.BeginArray();
  for (const ManifestResult& m : set.manifests) {
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
  std::string text = out.str();
  text += "\n";
  return text;
}

void MapText(const std::function<std::string(const std::string&)>& map, VerifyReport* report) {
  for (FileResult& r : report->set.files) {
    r.path = map(r.path);
    for (Fault& f : r.faults) f.message = map(f.message);
  }
  auto fix = [&](std::vector<SetFault>& faults) {
    for (SetFault& f : faults) {
      f.path = map(f.path);
      f.message = map(f.message);
    }
  };
  for (ManifestResult& m : report->set.manifests) {
    m.path = map(m.path);
    fix(m.faults);
  }
  fix(report->set.name_set_faults);
}

}  // namespace libshard::verify
