#include <glob.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <system_error>
#include <tuple>

#include "libshard/io/shard_paths.h"
#include "libshard/util/strings.h"

namespace libshard::io {

namespace fs = std::filesystem;

namespace {

using util::EndsWith;

}  // namespace

StatusOr<std::vector<std::string>> FindShardFiles(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {  // hidden: e.g. the converter's .libshard/ state
      if (it->is_directory(type_ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(type_ec) && LooksLikeShardName(name)) {
      found.push_back(it->path().string());
    }
  }
  if (ec) return IOError("cannot list " + dir + ": " + ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

namespace {

// Appends the shards under `dir`, sorted by path.
Status AddFolder(const std::string& dir, std::vector<std::string>* out) {
  std::error_code ec;
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<std::string> found, FindShardFiles(dir));
  // A folder with a manifest but no shards is for the manifest checks to judge.
  if (found.empty() && !fs::is_regular_file(fs::path(dir) / "manifest.json", ec)) {
    return InvalidArgumentError(dir + ": no TFRecord files in this folder");
  }
  out->insert(out->end(), found.begin(), found.end());
  return Status::OK();
}

Status AddPath(const std::string& path, std::vector<std::string>* out) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) return AddFolder(path, out);
  if (fs::exists(st)) {
    out->push_back(path);  // a file named explicitly is checked whatever its name
    return Status::OK();
  }
  return NotFoundError(path + ": no such file or folder");
}

Status AddGlob(const std::string& pattern, std::vector<std::string>* out) {
  glob_t g{};
  int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
  std::vector<std::string> matches;
  if (rc == 0) matches.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);  // sorted by glob(3)
  globfree(&g);
  if (rc == GLOB_NOMATCH || (rc == 0 && matches.empty())) {
    return NotFoundError(pattern + ": no file matches");
  }
  if (rc != 0) return IOError(pattern + ": glob failed");
  for (const std::string& m : matches) LIBSHARD_RETURN_IF_ERROR(AddPath(m, out));
  return Status::OK();
}

}  // namespace

std::optional<ShardNumbering> ParseShardNumbering(std::string_view name) {
  auto digits = [&](size_t pos) {
    size_t n = 0;
    while (pos + n < name.size() && name[pos + n] >= '0' && name[pos + n] <= '9') ++n;
    return n;
  };
  // The last numbering: scan the dashes from the right.
  for (size_t pos = name.rfind('-'); pos != std::string_view::npos;
       pos = pos == 0 ? name.npos : name.rfind('-', pos - 1)) {
    const size_t a = digits(pos + 1);
    if (a < 5 || name.substr(pos + 1 + a, 4) != "-of-") continue;
    const size_t b = digits(pos + 1 + a + 4);
    if (b < 5) continue;
    ShardNumbering n;
    n.head = name.substr(0, pos);
    n.index = name.substr(pos + 1, a);
    n.count = name.substr(pos + 1 + a + 4, b);
    n.tail = name.substr(pos + 1 + a + 4 + b);
    return n;
  }
  return std::nullopt;
}

bool LooksLikeShardName(std::string_view name) {
  if (EndsWith(name, ".idx")) return false;
  for (std::string_view suffix : {".tfrecord", ".tfrecords", ".tfrecord.gz", ".tfrecords.gz"}) {
    if (EndsWith(name, suffix)) return true;
  }
  // Numbered names with another suffix (a task manifest
  // "manifest.task-00000-of-00003.json", a ".partial") are not shards.
  const std::optional<ShardNumbering> n = ParseShardNumbering(name);
  return n.has_value() && (n->tail.empty() || n->tail == ".gz");
}

StatusOr<std::vector<std::string>> ExpandPaths(const std::vector<std::string>& args) {
  std::vector<std::string> all;
  for (const std::string& arg : args) {
    std::error_code ec;
    // A file whose name holds glob characters is taken literally.
    if (arg.find_first_of("*?[") != std::string::npos && !fs::exists(arg, ec)) {
      LIBSHARD_RETURN_IF_ERROR(AddGlob(arg, &all));
    } else {
      LIBSHARD_RETURN_IF_ERROR(AddPath(arg, &all));
    }
  }
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (std::string& p : all) {
    if (seen.insert(p).second) unique.push_back(std::move(p));
  }
  return unique;
}

std::vector<NumberedSetGap> FindIncompleteNumberedSets(const std::vector<std::string>& paths) {
  struct Set {
    std::string width;  // MMMMM as written
    std::set<uint64_t> numbers;
  };
  // (folder, HEAD, TAIL) -> MMMMM -> numbers present
  std::map<std::tuple<std::string, std::string, std::string>, std::map<uint64_t, Set>> sets;
  std::vector<NumberedSetGap> faults;
  for (const std::string& path : paths) {
    const fs::path p(path);
    const std::string name = p.filename().string();
    const std::optional<ShardNumbering> m = ParseShardNumbering(name);
    if (!m || m->index.size() > 18 || m->count.size() > 18) continue;
    const std::string index(m->index), width(m->count);
    const uint64_t n = std::stoull(index), count = std::stoull(width);
    Set& set = sets[{p.parent_path().string(), std::string(m->head), std::string(m->tail)}][count];
    set.width = width;
    set.numbers.insert(n);
    if (n >= count) {
      faults.push_back({path, "shard number " + index + " is beyond its set of " + width +
                                  " (numbers run from 0 to M-1); no manifest.json to say more"});
    }
  }
  for (const auto& [key, by_count] : sets) {
    const auto& [dir, head, tail] = key;
    const std::string in_dir = dir.empty() ? "" : dir + "/";
    if (by_count.size() > 1) {
      std::string counts;
      for (const auto& [count, set] : by_count) counts += (counts.empty() ? "" : " and ") + set.width;
      faults.push_back({in_dir + head + "-*-of-*" + tail,
                        "shards of sets of different sizes (" + counts +
                            ") under one name: shards of two conversions; no manifest.json to say which is current"});
    }
    for (const auto& [count, set] : by_count) {
      // Bounded work whatever MMMMM says: the first ten missing numbers lie
      // within the present ones plus ten.
      const uint64_t present =
          static_cast<uint64_t>(std::distance(set.numbers.begin(), set.numbers.lower_bound(count)));
      if (present == count) continue;
      const uint64_t missing = count - present;
      std::string list;
      char buf[32];
      int listed = 0;
      for (uint64_t i = 0; i < count && listed < 10; ++i) {
        if (set.numbers.count(i)) continue;
        std::snprintf(buf, sizeof buf, "%0*llu", static_cast<int>(set.width.size()),
                      static_cast<unsigned long long>(i));
        list += (listed++ ? ", " : "") + std::string(buf);
      }
      if (missing > 10) list += ", ...";
      faults.push_back(
          {in_dir + head + "-*-of-" + set.width + tail, std::to_string(present) + " of the " + std::to_string(count) +
                                                            " shards of this set are here; " + std::to_string(missing) +
                                                            " missing (" + list + "); no manifest.json to say more"});
    }
  }
  std::sort(faults.begin(), faults.end(),
            [](const NumberedSetGap& a, const NumberedSetGap& b) { return a.path < b.path; });
  return faults;
}

}  // namespace libshard::io
