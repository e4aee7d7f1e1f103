// YOLO label folders (annotations.h): class names from data.yaml's `names:`
// (a flow list, a block list or an index mapping; nothing else of YAML is
// read) or classes.txt, one `class cx cy w h` line per object (or a polygon
// `class x1 y1 x2 y2 ...`, ultralytics' segment format, taken as its
// bounding box).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "convert/annotations_internal.h"
#include "libshard/io/open_file.h"
#include "libshard/text_escape.h"
#include "libshard/util/strings.h"

namespace libshard::convert::internal {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxClasses = 100000;
// How far past the image edge a normalised corner may reach and be clamped
// (about a pixel of a 1000-pixel image): more is a box outside the image.
constexpr double kSlack = 1e-3;

// code_point as UTF-8; false for a surrogate or past U+10FFFF.
bool AppendUtf8(uint32_t cp, std::string* out) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return true;
}

// The escape at s[i] (the byte after a backslash in a double-quoted scalar,
// YAML 1.2 section 5.7) onto *out, *i past it; "" or why it is refused.
std::string DecodeEscape(const std::string& s, size_t* i, std::string* out) {
  const char c = s[*i];
  ++*i;
  static const std::string kSimple = "0abt\tnvfre \"/\\";
  static const char kValue[] = {'\0', '\a', '\b', '\t', '\t', '\n', '\v', '\f', '\r', '\x1b', ' ', '"', '/', '\\'};
  if (const size_t k = kSimple.find(c); k != std::string::npos) {
    *out += kValue[k];
    return "";
  }
  static const std::map<char, uint32_t> kNamed = {{'N', 0x85}, {'_', 0xA0}, {'L', 0x2028}, {'P', 0x2029}};
  if (auto it = kNamed.find(c); it != kNamed.end()) {
    AppendUtf8(it->second, out);
    return "";
  }
  const size_t digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
  if (digits == 0) return std::string("unknown escape \\") + EscapeText(std::string(1, c));
  if (*i + digits > s.size()) return std::string("escape \\") + c + " needs " + std::to_string(digits) + " hex digits";
  uint32_t cp = 0;
  for (size_t k = 0; k < digits; ++k) {
    const char h = s[*i + k];
    const int v = h >= '0' && h <= '9'   ? h - '0'
                  : h >= 'a' && h <= 'f' ? h - 'a' + 10
                  : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                         : -1;
    if (v < 0) return std::string("escape \\") + c + " needs " + std::to_string(digits) + " hex digits";
    cp = cp * 16 + static_cast<uint32_t>(v);
  }
  *i += digits;
  if (!AppendUtf8(cp, out)) return std::string("escape \\") + c + " names no Unicode character";
  return "";
}

// A YAML scalar as written: a quoted one decoded ('' inside single quotes is
// one quote; double quotes take YAML's backslash escapes), a plain one
// without a trailing " # comment". "" or why it is refused.
std::string Scalar(const std::string& raw, std::string* out) {
  const std::string s = TrimSpace(raw);
  out->clear();
  if (s.empty() || (s[0] != '\'' && s[0] != '"')) {
    *out = s;
    if (const size_t hash = s.find(" #"); hash != std::string::npos) *out = TrimSpace(s.substr(0, hash));
    return "";
  }
  const char quote = s[0];
  size_t i = 1;
  for (;;) {
    if (i >= s.size()) return std::string("a ") + (quote == '"' ? "double" : "single") + "-quoted name is never closed";
    const char c = s[i];
    if (c == quote && quote == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
      *out += '\'';
      i += 2;
    } else if (c == quote) {
      ++i;
      break;
    } else if (c == '\\' && quote == '"') {
      if (++i >= s.size()) return "a double-quoted name is never closed";
      if (std::string why = DecodeEscape(s, &i, out); !why.empty()) return why;
    } else {
      *out += c;
      ++i;
    }
  }
  const std::string rest = TrimSpace(s.substr(i));
  if (!rest.empty() && rest[0] != '#') return "text after a quoted name: '" + EscapeText(rest) + "'";
  return "";
}

// Splits a flow list's inside at commas outside quotes (a backslash in
// double quotes escapes the next byte); the items as written.
std::vector<std::string> FlowItems(const std::string& inside) {
  std::vector<std::string> items;
  std::string cur;
  char quote = 0;
  for (size_t i = 0; i < inside.size(); ++i) {
    const char c = inside[i];
    if (quote) {
      if (quote == '"' && c == '\\' && i + 1 < inside.size()) {
        cur += c;
        cur += inside[++i];
        continue;
      }
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      items.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!TrimSpace(cur).empty()) items.push_back(cur);
  return items;
}

bool ParseIndex(const std::string& s, size_t* v) {
  if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *v = std::stoul(s);
  return true;
}

StatusOr<std::vector<std::string>> NamesFromYaml(const std::string& path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, kMaxLabelFileBytes));
  std::vector<std::string> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!util::StartsWith(lines[i], "names:")) continue;
    const std::string where = path + ":" + std::to_string(i + 1);
    std::string value = TrimSpace(lines[i].substr(6));
    std::vector<std::string> names;
    if (!value.empty() && value[0] == '[') {  // flow list, maybe over several lines
      for (size_t j = i + 1; value.find(']') == std::string::npos && j < lines.size(); ++j) value += lines[j];
      const size_t close = value.rfind(']');
      if (close == std::string::npos) return InvalidArgumentError(where + ": names: [ is never closed");
      for (const std::string& item : FlowItems(value.substr(1, close - 1))) {
        std::string name;
        if (std::string why = Scalar(item, &name); !why.empty()) return InvalidArgumentError(where + ": " + why);
        names.push_back(std::move(name));
      }
    } else if (!value.empty() && value[0] == '{') {
      const size_t close = value.rfind('}');
      if (close == std::string::npos) return InvalidArgumentError(where + ": names: { is never closed");
      value = value.substr(1, close - 1);
      std::map<size_t, std::string> by_index;
      for (const std::string& item : FlowItems(value)) {
        const size_t colon = item.find(':');
        size_t k;
        if (colon == std::string::npos || !ParseIndex(TrimSpace(item.substr(0, colon)), &k)) {
          return InvalidArgumentError(where + ": expected INDEX: NAME, got '" + EscapeText(item) + "'");
        }
        if (std::string why = Scalar(item.substr(colon + 1), &by_index[k]); !why.empty()) {
          return InvalidArgumentError(where + ": " + why);
        }
      }
      for (auto& [k, name] : by_index) {
        if (k != names.size())
          return InvalidArgumentError(where + ": class " + std::to_string(names.size()) + " has no name");
        names.push_back(name);
      }
    } else if (!value.empty()) {
      return InvalidArgumentError(where + ": names: expects a list or an index mapping");
    } else {  // block list or mapping on the indented lines below
      std::map<size_t, std::string> by_index;
      for (size_t j = i + 1; j < lines.size(); ++j) {
        const std::string line = lines[j];
        const std::string t = TrimSpace(line);
        if (t.empty() || t[0] == '#') continue;
        if (line[0] != ' ' && line[0] != '\t' && line[0] != '-') break;
        const std::string lw = path + ":" + std::to_string(j + 1);
        std::string name;
        if (t[0] == '-') {
          if (std::string why = Scalar(t.substr(1), &name); !why.empty()) return InvalidArgumentError(lw + ": " + why);
          names.push_back(std::move(name));
          continue;
        }
        const size_t colon = t.find(':');
        size_t k;
        if (colon == std::string::npos || !ParseIndex(TrimSpace(t.substr(0, colon)), &k)) {
          return InvalidArgumentError(lw + ": expected '- NAME' or 'INDEX: NAME' under names:");
        }
        if (std::string why = Scalar(t.substr(colon + 1), &name); !why.empty()) {
          return InvalidArgumentError(lw + ": " + why);
        }
        if (!by_index.emplace(k, std::move(name)).second) {
          return InvalidArgumentError(lw + ": class " + std::to_string(k) + " named twice");
        }
      }
      if (!names.empty() && !by_index.empty())
        return InvalidArgumentError(where + ": names: mixes a list and a mapping");
      for (auto& [k, name] : by_index) {
        if (k != names.size())
          return InvalidArgumentError(where + ": class " + std::to_string(names.size()) + " has no name");
        names.push_back(name);
      }
    }
    if (names.empty()) return InvalidArgumentError(where + ": names: lists no class");
    if (names.size() > kMaxClasses) return InvalidArgumentError(where + ": more than 100000 classes");
    // The label map is looked up by name (the OD API's get_label_map_dict):
    // two classes of one name would be one.
    std::map<std::string, size_t> first;
    for (size_t k = 0; k < names.size(); ++k) {
      if (names[k].empty()) return InvalidArgumentError(where + ": class " + std::to_string(k) + " has an empty name");
      if (auto [it, fresh] = first.emplace(names[k], k); !fresh) {
        return InvalidArgumentError(where + ": classes " + std::to_string(it->second) + " and " + std::to_string(k) +
                                    " are both named '" + EscapeText(names[k]) + "'");
      }
    }
    return names;
  }
  return InvalidArgumentError(path + ": no 'names:' key at the start of a line");
}

// The label file of an image (ultralytics' img2label_paths), and the folder
// it must stay in: the ".../labels" folder that took the place of the last
// ".../images", else the image's own folder.
std::string LabelPathOf(const std::string& image, std::string* folder) {
  std::string p = image;
  const size_t dot = p.rfind('.');
  const size_t slash = p.rfind('/');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) p.erase(dot);
  p += ".txt";
  std::string probe = "/" + p;  // a leading "images/" counts too
  const size_t at = probe.rfind("/images/");
  if (at == std::string::npos) {
    *folder = slash == std::string::npos ? "." : p.substr(0, slash);
    return p;
  }
  probe.replace(at, 8, "/labels/");
  *folder = probe.substr(1, at + 6);
  return probe.substr(1);
}

// One label file's objects, or why it is bad (naming the line).
std::string ParseLabels(const std::string& file, const std::string& text, size_t classes, SampleObjects* out) {
  int line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    std::vector<std::string> f;
    for (size_t i = 0; i < line.size();) {
      const size_t b = line.find_first_not_of(" \t\r", i);
      if (b == std::string::npos) break;
      size_t e = line.find_first_of(" \t\r", b);
      if (e == std::string::npos) e = line.size();
      f.push_back(line.substr(b, e - b));
      i = e;
    }
    if (f.empty()) continue;
    const std::string where = file + ":" + std::to_string(line_no);
    if (out->objects.size() >= kMaxObjectsPerImage) return where + ": more than 100000 objects";
    std::vector<double> v(f.size());
    for (size_t k = 0; k < f.size(); ++k) {
      if (!ParseFiniteNumber(f[k], &v[k])) return where + ": '" + EscapeText(f[k]) + "' is not a number";
    }
    if (v[0] != std::floor(v[0]) || v[0] < 0 || v[0] >= double(classes)) {
      return where + ": unknown class " + EscapeText(f[0]) + " (" + std::to_string(classes) + " classes)";
    }
    ObjectBox b;
    b.label = static_cast<int64_t>(v[0]) + 1;
    if (f.size() == 5) {
      if (v[3] < 0 || v[4] < 0) return where + ": box has a negative size";
      b.xmin = v[1] - v[3] / 2;
      b.xmax = v[1] + v[3] / 2;
      b.ymin = v[2] - v[4] / 2;
      b.ymax = v[2] + v[4] / 2;
    } else if (f.size() >= 7 && f.size() % 2 == 1) {  // a polygon: its bounding box
      b.xmin = b.ymin = 1e300;
      b.xmax = b.ymax = -1e300;
      for (size_t k = 1; k < f.size(); k += 2) {
        b.xmin = std::min(b.xmin, v[k]);
        b.xmax = std::max(b.xmax, v[k]);
        b.ymin = std::min(b.ymin, v[k + 1]);
        b.ymax = std::max(b.ymax, v[k + 1]);
      }
    } else {
      return where + ": expected 'class cx cy w h' (or a polygon), got " + std::to_string(f.size()) + " fields";
    }
    if (std::string why = CheckAndClamp(&b, 1.0, 1.0, kSlack); !why.empty()) return where + ": " + why;
    out->objects.push_back(b);
  }
  return "";
}

// The *.txt files (not classes.txt) in the folders of `label_files` that
// are not among them: label files no listed image has. A folder that cannot
// be read counts none (the labels that were read are what matters).
uint64_t UnmatchedLabelFiles(const std::set<std::string>& label_files) {
  std::set<std::string> folders;
  for (const std::string& f : label_files) {
    const size_t slash = f.rfind('/');
    folders.insert(slash == std::string::npos ? "." : f.substr(0, slash));
  }
  uint64_t unmatched = 0;
  for (const std::string& folder : folders) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!util::EndsWith(name, ".txt") || name == "classes.txt" || !it->is_regular_file(ec)) continue;
      const std::string path = folder == "." ? name : folder + "/" + name;
      unmatched += label_files.count(path) == 0;
    }
  }
  return unmatched;
}

}  // namespace

Status ReadYolo(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out) {
  std::vector<std::string> names;
  if (util::EndsWith(o.source, ".yaml") || util::EndsWith(o.source, ".yml")) {
    LIBSHARD_ASSIGN_OR_RETURN(names, NamesFromYaml(o.source));
  } else {
    LIBSHARD_ASSIGN_OR_RETURN(names, ReadClassList(o.source));
  }
  out->classes = NumberedClasses(names);
  std::set<std::string> label_files;
  AnnotationFiles reader(kMaxLabelFileBytes);
  for (size_t i = 0; i < listing.samples.size(); ++i) {
    std::string folder;
    const std::string label_file = LabelPathOf(SourceFilePath(listing.root, listing.samples[i].path), &folder);
    label_files.insert(label_file);
    if (i == 0) out->lookup_example = "the labels of " + listing.samples[i].path + " would be " + label_file;
    const AnnotationFile file = reader.Read(label_file, folder);
    if (!file.exists) continue;  // no label file: an image without objects, counted
    if (!file.why.empty()) {
      out->bad[i] = file.why;
      continue;
    }
    auto objects = std::make_shared<SampleObjects>();
    objects->normalised = true;
    objects->origin = label_file;
    if (std::string why = ParseLabels(label_file, file.text, names.size(), objects.get()); !why.empty()) {
      out->bad[i] = why;
      continue;
    }
    out->objects[i] = std::move(objects);
  }
  out->unmatched = UnmatchedLabelFiles(label_files);
  return Status::OK();
}

}  // namespace libshard::convert::internal
