// The report's whole-set sections (dataset_sections.h).
#include "report/dataset_sections.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/image_record.h"
#include "libshard/image/encode.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/reader/record_pixels.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/util/random.h"
#include "libshard/verify/verifier.h"
#include "report/page_parts.h"

namespace libshard::report {
namespace {

// A reject reason with its file name and numbers taken out: rejects for the
// same cause group together.
std::string ReasonKind(const Reject& r) {
  std::string s = r.reason();
  for (const std::string& name : {r.path(), std::filesystem::path(r.path()).filename().string()}) {
    if (name.empty()) continue;
    for (size_t at; (at = s.find(name)) != std::string::npos;) s.replace(at, name.size(), "FILE");
  }
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      out += 'N';
      while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

std::string RejectSection(const Manifest& m) {
  std::string out = "<h2 id=\"rejects\">Rejected inputs</h2>";
  if (m.rejects_size() == 0) return out + "<p class=\"ok\" id=\"no-rejects\">No input was rejected.</p>";
  std::map<std::string, std::vector<const Reject*>> groups;
  for (const Reject& r : m.rejects()) groups[ReasonKind(r)].push_back(&r);
  std::vector<std::pair<std::string, std::vector<const Reject*>>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  out += "<p>" + FormatCount(m.rejects_size()) + " rejected in " + FormatCount(sorted.size()) +
         " group(s) by reason; <code>rejects.tsv</code> lists them all.</p>";
  constexpr size_t kGroups = 50, kFiles = 5;
  for (size_t g = 0; g < sorted.size() && g < kGroups; ++g) {
    const auto& [kind, list] = sorted[g];
    out += "<div class=\"reject-group\" data-count=\"" + std::to_string(list.size()) + "\"><h4>" + HtmlEscape(kind) +
           " <span class=\"muted\">(" + FormatCount(list.size()) + ")</span></h4><ul>";
    for (size_t i = 0; i < list.size() && i < kFiles; ++i) {
      out += "<li><code>" + HtmlEscape(list[i]->path()) + "</code>: " + HtmlEscape(list[i]->reason()) + "</li>";
    }
    if (list.size() > kFiles) out += "<li class=\"more\">and " + FormatCount(list.size() - kFiles) + " more</li>";
    out += "</ul></div>";
  }
  if (sorted.size() > kGroups)
    out += "<p class=\"more\">and " + FormatCount(sorted.size() - kGroups) + " more groups</p>";
  return out;
}

std::string OptionsSection(const Manifest& m) {
  std::string out = "<h2 id=\"options\">Conversion options</h2><div class=\"table-wrap\"><table class=\"options\">";
  const google::protobuf::Message& o = m.options();
  const auto* d = o.GetDescriptor();
  const auto* r = o.GetReflection();
  using FD = google::protobuf::FieldDescriptor;
  for (int i = 0; i < d->field_count(); ++i) {
    const FD* f = d->field(i);
    std::string v;
    if (f->is_repeated()) {  // ConversionOptions' repeated fields are strings (features)
      if (f->cpp_type() != FD::CPPTYPE_STRING || r->FieldSize(o, f) == 0) continue;
      for (int k = 0; k < r->FieldSize(o, f); ++k) v += (k ? ", " : "") + r->GetRepeatedString(o, f, k);
      out += "<tr><th>" + HtmlEscape(f->name()) + "</th><td><code>" + HtmlEscape(v) + "</code></td></tr>";
      continue;
    }
    switch (f->cpp_type()) {
      case FD::CPPTYPE_STRING:
        v = r->GetString(o, f);
        break;
      case FD::CPPTYPE_BOOL:
        v = r->GetBool(o, f) ? "true" : "false";
        break;
      case FD::CPPTYPE_INT32:
        v = std::to_string(r->GetInt32(o, f));
        break;
      case FD::CPPTYPE_INT64:
        v = std::to_string(r->GetInt64(o, f));
        break;
      case FD::CPPTYPE_UINT32:
        v = std::to_string(r->GetUInt32(o, f));
        break;
      case FD::CPPTYPE_UINT64:
        v = std::to_string(r->GetUInt64(o, f));
        break;
      case FD::CPPTYPE_DOUBLE: {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%g", r->GetDouble(o, f));
        v = buf;
        break;
      }
      default:
        continue;
    }
    out += "<tr><th>" + HtmlEscape(f->name()) + "</th><td><code>" + HtmlEscape(v) + "</code></td></tr>";
  }
  out += "</table></div>";
  const RunInfo& run = m.run();
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", run.seconds());
  out += "<p class=\"muted\">libshard " + HtmlEscape(m.tool_version()) + "; run started " + HtmlEscape(run.started()) +
         ", " + buf + " s, " + std::to_string(run.threads()) + " threads" +
         (run.num_tasks() > 1 ? ", " + std::to_string(run.num_tasks()) + " tasks merged" : std::string()) + ".</p>";
  return out;
}

std::string VerifySection(const Context& c) {
  verify::VerifyOptions vo;
  vo.decode_images = c.options.verify_decode;
  vo.threads = c.options.threads;
  // Every listed shard is verified, and unlisted shards in the folder found.
  verify::SetResult r = verify::VerifySet({}, {c.manifest_path}, vo);
  uint64_t records = 0;
  std::vector<std::string> rows;
  for (const auto& f : r.files) {
    records += f.records;
    for (const auto& x : f.faults) {
      rows.push_back("<tr><td><code>" + HtmlEscape(f.path) + "</code></td><td class=\"num\">" +
                     std::to_string(x.offset) + "</td><td class=\"num\">" + std::to_string(x.record) + "</td><td>" +
                     verify::FaultKindName(x.kind) + "</td><td>" + HtmlEscape(x.message) + "</td></tr>");
    }
  }
  for (const auto& mr : r.manifests) {
    for (const auto& x : mr.faults) {
      rows.push_back("<tr><td><code>" + HtmlEscape(x.path) + "</code></td><td></td><td></td><td>" +
                     verify::FaultKindName(x.kind) + "</td><td>" + HtmlEscape(x.message) + "</td></tr>");
    }
  }
  std::string out = "<h2 id=\"verify\">Verification</h2>";
  const uint64_t faults = r.fault_count();
  if (faults == 0) {
    return out + "<p class=\"ok\" id=\"verify-result\" data-faults=\"0\">verified: " + FormatCount(r.files.size()) +
           " files, " + FormatCount(records) + " records, no faults (framing, CRCs, Examples, indexes, manifest" +
           (c.options.verify_decode ? ", every image decoded" : "") + ").</p>";
  }
  out += "<p class=\"bad\" id=\"verify-result\" data-faults=\"" + std::to_string(faults) + "\">" + FormatCount(faults) +
         " fault(s) found by shard verify.</p><div class=\"table-wrap\"><table class=\"faults\"><tr><th>file</th>"
         "<th>offset</th><th>record</th><th>kind</th><th>what</th></tr>";
  constexpr size_t kRows = 200;
  for (size_t i = 0; i < rows.size() && i < kRows; ++i) out += rows[i];
  out += "</table></div>";
  if (faults > std::min(rows.size(), kRows)) {
    out += "<p class=\"more\">and " + FormatCount(faults - std::min(rows.size(), kRows)) + " more</p>";
  }
  return out;
}

}  // namespace libshard::report
