// mixture.json (manifest/mixture_json.h).
#include "libshard/manifest/mixture_json.h"

#include <cmath>
#include <filesystem>
#include <string>

#include "libshard/io/open_file.h"
#include "libshard/manifest/manifest_json.h"

namespace libshard::manifest {

StatusOr<bool> IsMixtureFile(const std::string& path) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string text, io::ReadFileToString(path, kMaxBytes));
  // A manifest (perhaps large) is not parsed twice: only a text that holds
  // the format's words can be a mixture.
  if (text.find("libshard.mixture/") == std::string::npos) return false;
  Mixture m;  // a manifest's fields are unknown to it, and ignored
  LIBSHARD_RETURN_IF_ERROR(FromJson(text, &m).WithContext(path));
  return m.format() == kMixtureFormat;
}

StatusOr<Mixture> ReadMixture(const std::string& path) {
  Mixture m;
  LIBSHARD_RETURN_IF_ERROR(ReadJsonFile(path, &m));
  auto bad = [&](const std::string& what) { return InvalidArgumentError(path + ": " + what); };
  if (m.format() != kMixtureFormat) {
    return bad("mixture format \"" + m.format() + "\", expected \"" + kMixtureFormat + "\"");
  }
  if (m.sources_size() == 0) return bad("a mixture with no sources");
  const std::string& lm = m.label_maps();
  if (!lm.empty() && lm != "error" && lm != "merge" && lm != "keep") {
    return bad("label_maps \"" + lm + "\", expected \"error\", \"merge\" or \"keep\"");
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (int i = 0; i < m.sources_size(); ++i) {
    MixtureSource* s = m.mutable_sources(i);
    const std::string at = "sources[" + std::to_string(i) + "]";
    if (s->path().empty()) return bad(at + " has no path");
    if (!std::isfinite(s->weight()) || s->weight() < 0) {
      return bad(at + " (" + s->path() + ") has weight " + std::to_string(s->weight()) +
                 " (weights are finite and >= 0)");
    }
    const bool url = s->path().find("://") != std::string::npos;
    if (!url && !std::filesystem::path(s->path()).is_absolute()) s->set_path((dir / s->path()).string());
  }
  return m;
}

}  // namespace libshard::manifest
