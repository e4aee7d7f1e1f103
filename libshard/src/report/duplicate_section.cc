// The report's duplicates section (duplicate_section.h).
#include "report/duplicate_section.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/io/open_file.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/text_escape.h"
#include "report/page_parts.h"
#include "report/thumbnails.h"

namespace libshard::report {
namespace {

constexpr uint64_t kMaxTsvBytes = uint64_t{256} << 20;

// One line of duplicates.tsv (kind, distance, split_a, file_a, split_b, file_b).
struct TsvPair {
  std::string kind, distance, split_a, file_a, split_b, file_b;
};

// The leaks (split_a != split_b) of the list, the first `keep` of them kept;
// *total counts them all. Lines of another shape are skipped: the list is
// a file from outside.
std::vector<TsvPair> ReadLeaks(const std::string& text, size_t keep, uint64_t* total) {
  std::vector<TsvPair> out;
  *total = 0;
  size_t pos = text.find('\n');  // past the header
  while (pos != std::string::npos && pos + 1 < text.size()) {
    const size_t end = text.find('\n', pos + 1);
    const std::string line = text.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    pos = end;
    std::vector<std::string> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
      if (tab == std::string::npos) break;
      at = tab + 1;
    }
    if (f.size() != 6 || f[2] == f[4]) continue;
    ++*total;
    if (out.size() < keep) out.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
  }
  return out;
}

// Thumbnails of the wanted files (escaped names, as duplicates.tsv has them)
// of one split, found by looking through its records in order.
void FindThumbs(const Context& c, const SplitEntry& split, std::map<std::string, Thumb>* wanted,
                std::string* first_error) {
  size_t left = wanted->size();
  uint64_t scanned = 0;
  reader::RecordBuffer buf;
  const reader::ShardReaderOptions scan = ScanReaderOptions(nullptr);  // one shard open at a time
  for (const ShardEntry& s : split.shards()) {
    if (left == 0 || scanned >= kMaxDuplicateScan) return;
    const std::string path = c.dir + "/" + s.file();
    StatusOr<std::unique_ptr<reader::ShardReader>> r = reader::ShardReader::Open(path, scan);
    if (!r.ok()) {
      if (first_error->empty()) *first_error = r.status().message();
      continue;
    }
    for (size_t i = 0; i < (*r)->size() && left > 0 && scanned < kMaxDuplicateScan; ++i, ++scanned) {
      std::string_view rec;
      if (!(*r)->ReadCopy(i, &buf, &rec).ok()) continue;
      StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec);
      example::FeatureView f;
      if (!ex.ok() || !ex->Find(keys::kFilename, &f) || f.kind() != example::FeatureKind::kBytes || f.size() == 0) {
        continue;
      }
      auto it = wanted->find(EscapeText(f.bytes(0)));
      if (it == wanted->end() || !it->second.image_url.empty()) continue;
      const Status st = MakeThumb(c, rec, &it->second);
      if (!st.ok() && first_error->empty()) *first_error = path + ": record " + std::to_string(i) + ": " + st.message();
      --left;
    }
  }
}

std::string Figure(const Context& c, const std::string& split, const std::string& file, const Thumb* th) {
  const std::string name = HtmlEscape(file);
  std::string out = "<figure data-split=\"" + HtmlEscape(split) + "\" data-file=\"" + name + "\" title=\"" +
                    HtmlEscape(split) + ": " + name + "\"><div class=\"thumb\">";
  if (th != nullptr && !th->image_url.empty()) {
    out += "<img class=\"image" + std::string(std::max(th->width, th->height) < 64 ? " small" : "") + "\" width=\"" +
           std::to_string(th->width) + "\" height=\"" + std::to_string(th->height) + "\" alt=\"" + HtmlEscape(split) +
           ": " + name + "\" src=\"" + th->image_url + "\">";
  } else {
    out += "<p class=\"muted\">not found in its split</p>";
  }
  // The whole path (class folders included: two pairs from different
  // classes must not look alike), a break allowed after each '/'.
  std::string path;
  for (size_t at = 0; at <= file.size();) {
    const size_t slash = file.find('/', at);
    const size_t end = slash == std::string::npos ? file.size() : slash + 1;
    path += HtmlEscape(file.substr(at, end - at));
    if (slash == std::string::npos) break;
    path += "<wbr>";
    at = end;
  }
  return out + "</div><figcaption><b>" + HtmlEscape(split) + "</b> <span class=\"path\">" + path +
         "</span></figcaption></figure>";
}

// ": K images have a copy in another split (SPLIT K1, ...)", or "".
std::string LeakedImages(const DuplicateCounts& d) {
  if (d.leaks() == 0) return "";
  const std::map<std::string, uint32_t> by_split(d.leaked_by_split().begin(), d.leaked_by_split().end());
  std::string out = ": <b id=\"leaked-images\" data-images=\"" + std::to_string(d.leaked_images()) + "\">" +
                    FormatCount(d.leaked_images()) + " image(s)</b> have a copy in another split (";
  bool first = true;
  for (const auto& [split, n] : by_split) {
    out += (first ? "" : ", ") + HtmlEscape(split) + " " + FormatCount(n);
    first = false;
  }
  return out + ")";
}

// The largest groups of copies ("N copies of FILE") and the search's bound.
std::string GroupsAndBounds(const DuplicateCounts& d) {
  std::string out;
  if (d.largest_groups_size() > 0) {
    out += "<p id=\"largest-groups\">The largest groups of copies:";
    for (const CopyGroupEntry& g : d.largest_groups()) {
      out += " <span class=\"group\" data-copies=\"" + std::to_string(g.copies()) + "\">" + FormatCount(g.copies()) +
             " copies of <b>" + HtmlEscape(g.split()) + "</b> " + HtmlEscape(g.file()) + "</span>;";
    }
    out.back() = '.';
    out += "</p>";
  }
  if (d.incomplete()) {
    out += "<p class=\"bad\" id=\"search-cut\">The search stopped at its bound on the pairs held: the counts are "
           "lower bounds.</p>";
  }
  return out;
}

}  // namespace

std::string DuplicateSection(const Context& c) {
  std::string out = "<section id=\"duplicates\"><h2>Duplicates and leaks</h2>";
  const Manifest& m = *c.m;
  if (!m.has_duplicates()) {
    return out +
           "<p class=\"muted\" id=\"no-leak-check\">No leak check in this set (converted with <code>--leaks "
           "off</code>, by an older libshard, or a task's partial manifest).</p></section>";
  }
  const uint64_t within = m.duplicates().within(), leaks = m.duplicates().leaks();
  out += "<p id=\"duplicate-counts\" data-within=\"" + std::to_string(within) + "\" data-leaks=\"" +
         std::to_string(leaks) + "\">" + FormatCount(within) + " pair(s) of duplicates within a split, <span class=\"" +
         (leaks > 0 ? "bad" : "ok") + "\">" + FormatCount(leaks) + " across splits (leaks)</span>" +
         LeakedImages(m.duplicates()) + "; <code>duplicates.tsv</code> lists " +
         (m.duplicates().truncated() ? "the first of them (a million)" : "them all") +
         ".</p>" + GroupsAndBounds(m.duplicates());
  if (leaks == 0) return out + "</section>";
  StatusOr<std::string> text = io::ReadFileToString(c.dir + "/duplicates.tsv", kMaxTsvBytes);
  if (!text.ok()) return out + "<p class=\"bad\">" + HtmlEscape(text.status().message()) + "</p></section>";
  uint64_t total = 0;
  const std::vector<TsvPair> shown = ReadLeaks(*text, kShownLeaks, &total);
  std::map<std::string, std::map<std::string, Thumb>> wanted;  // split -> escaped file -> thumbnail
  for (const TsvPair& p : shown) {
    wanted[p.split_a][p.file_a];
    wanted[p.split_b][p.file_b];
  }
  std::string first_error;
  for (const SplitEntry& split : m.splits()) {
    auto it = wanted.find(split.name());
    if (it != wanted.end()) FindThumbs(c, split, &it->second, &first_error);
  }
  out += "<div class=\"leak-pairs\">";
  for (const TsvPair& p : shown) {
    const Thumb& a = wanted[p.split_a][p.file_a];
    const Thumb& b = wanted[p.split_b][p.file_b];
    out += "<div class=\"leak-pair\" data-kind=\"" + HtmlEscape(p.kind) + "\" data-distance=\"" +
           HtmlEscape(p.distance) + "\">" + Figure(c, p.split_a, p.file_a, &a) + Figure(c, p.split_b, p.file_b, &b) +
           "<p class=\"muted\">" + HtmlEscape(p.kind) +
           (p.kind == "exact" ? ": equal pixels" : ": hashes " + HtmlEscape(p.distance) + " bits apart") + "</p></div>";
  }
  out += "</div>";
  if (total > shown.size()) {
    out += "<p class=\"more\">and " + FormatCount(total - shown.size()) + " more leaked pair(s)</p>";
  }
  if (!first_error.empty()) out += "<p class=\"bad\">" + HtmlEscape(first_error) + "</p>";
  return out + "</section>";
}

}  // namespace libshard::report
