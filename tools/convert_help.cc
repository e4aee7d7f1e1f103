#include "convert_help.h"

#include <string>
#include <utility>
#include <vector>

namespace shard_tool {

void GroupConvertOptions(CLI::App* cmd) {
  const std::vector<std::pair<const char*, std::vector<const char*>>> groups = {
      {"Input (a folder, or a CSV manifest's columns)",
       {"--labels", "--label-offset", "--layout", "--split", "--val-fraction", "--include", "--exclude",
        "--keep-empty-classes", "--image-root", "--path-col", "--label-col", "--mask-col", "--split-col", "--feature"}},
      {"Masks and detection boxes",
       {"--masks", "--mask-suffix", "--mask-labels", "--unknown-color", "--mask-ignore-index", "--coco", "--yolo",
        "--voc", "--box-min-visible"}},
      {"Output",
       {"--output", "--prefix", "--shard-size", "--records-per-shard", "--seed", "--no-shuffle", "--no-sync",
        "--report", "--json"}},
      {"Image (decode, resize, encode)",
       {"--size", "--resize-mode", "--fill", "--filter", "--format", "--quality", "--zstd-level", "--raw-filter",
        "--reencode", "--channels", "--alpha", "--tiff-page"}},
      {"Leak check and duplicates", {"--leaks", "--leak-distance", "--dedup"}},
      {"Object storage (-o s3://BUCKET/PREFIX)", {"--staging", "--recheck"}},
      {"Tasks and threads", {"--num-tasks", "--task-index", "--threads"}},
      {"Run", {"--on-error", "--dry-run", "--quiet", "--verbose", "--progress-interval"}},
  };
  for (const auto& [group, names] : groups) {
    for (const char* name : names) {
      for (CLI::Option* o : cmd->get_options()) {
        if (o->check_lname(std::string(name).substr(2))) o->group(group);
      }
    }
  }
}

}  // namespace shard_tool
