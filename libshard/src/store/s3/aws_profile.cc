#include "store/s3/aws_profile.h"

#include "libshard/io/open_file.h"

namespace libshard::store {
namespace {

// The largest profile file read (real ones are a few KiB).
constexpr uint64_t kMaxProfileBytes = 1 << 20;

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

AwsProfileFile ParseAwsProfile(std::string_view text) {
  AwsProfileFile ini;
  std::string section, parent;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    const std::string_view t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = std::string(Trim(t.substr(1, t.size() - 2)));
      parent.clear();
      ini[section];
      continue;
    }
    const size_t eq = t.find('=');
    if (eq == std::string_view::npos || section.empty()) continue;
    const std::string key(Trim(t.substr(0, eq))), value(Trim(t.substr(eq + 1)));
    if (indented && !parent.empty()) {
      ini[section][parent + "." + key] = value;
      continue;
    }
    parent = value.empty() ? key : "";
    ini[section][key] = value;
  }
  return ini;
}

StatusOr<AwsProfileFile> ReadAwsProfile(const std::string& path, const std::string& what) {
  StatusOr<std::string> text = io::ReadFileToString(path, kMaxProfileBytes);
  if (text.status().code() == StatusCode::kNotFound) return AwsProfileFile();
  if (!text.ok()) return InvalidArgumentError(what + ": " + text.status().message());
  return ParseAwsProfile(*text);
}

}  // namespace libshard::store
