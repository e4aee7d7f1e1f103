// The options of a conversion as its two faces take them: the flags of
// `shard convert` (tools/cmd_convert.cc registers its CLI11 options from this
// table) and the keyword arguments of Python's libshard.convert
// (python/py_tools.cc sets them through it, without CLI11). One entry per
// flag says its names, whether it takes a value, is positional or
// repeatable, its help text and --help group, the default --help shows, the
// check of its text and how the text sets the request; FinishConvertFlags
// then checks the flags together and fills the typed request (the
// conversion's ConvertOptions, and for -o s3:// the staging folder and
// --recheck). So a keyword argument means what the flag of the same name
// means, and a bad value is refused with the same message.
//
//   ConvertFlagValues v;
//   for (each NAME=TEXT given) {
//     const ConvertFlag* flag = FindConvertFlag(NAME);          // nullptr: not an option
//     LIBSHARD_RETURN_IF_ERROR(SetConvertFlag(*flag, TEXT, &v));  // "--quality: '0' is out of range (1..100)"
//   }
//   LIBSHARD_RETURN_IF_ERROR(FinishConvertFlags(&v));  // "--resize-mode letterbox needs --size"
//   remote::IsRemoteOutput(v.request.convert.output) ? remote::ConvertToObjectStore(v.request, progress)
//                                                    : convert::Convert(v.request.convert, progress);
//
// Errors: InvalidArgument (NotFound for a listing problem CheckOutputFolder
// finds) with the message `shard convert` prints, without its prefix: the
// program prints SetConvertFlag's after "shard: " (CLI11 refuses the value
// while parsing) and FinishConvertFlags' after "shard convert: ".
// Thread-safety: the table is immutable; a ConvertFlagValues is the caller's.
#ifndef LIBSHARD_REMOTE_CONVERT_FLAGS_H_
#define LIBSHARD_REMOTE_CONVERT_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/remote/remote_convert.h"
#include "libshard/status.h"

namespace libshard::remote {

// What the flags set. `request` is the typed call's input once
// FinishConvertFlags succeeded; the text fields before it are the flags
// checked together there. Defaults: the flags' (each as --help shows it).
struct ConvertFlagValues {
  RemoteConvertOptions request;  // .convert: the conversion; .staging, .recheck: -o s3:// only
  std::string size, shard_size = "128MiB", resize_mode, filter = "bilinear", format = "jpeg";
  std::string reencode = "auto", on_error = "skip", channels = "rgb", alpha = "composite";
  std::string unknown_color = "error", fill, raw_filter = "none", layout = "auto";
  std::string leaks = "warn", dedup;
  std::string coco, yolo, voc;        // detection annotations (at most one)
  std::vector<std::string> features;  // --feature COLUMN:TYPE
  int mask_ignore_index = 255, quality = 90, zstd_level = -5;
  uint64_t seed = 0;
  bool no_shuffle = false, no_sync = false;
  std::optional<uint32_t> num_tasks, task_index;
  // Only the program's output uses these (libshard.convert refuses them but
  // --report, which it ignores).
  bool dry_run = false, json = false, quiet = false, verbose = false, report = false;
  double progress_interval = 10;
  // Set by FinishConvertFlags when the task split came from the environment:
  // the variables that gave it ("SLURM_ARRAY_TASK_ID=3, ..."), for the
  // program's "task I of N" line; "" otherwise.
  std::string task_source;
};

// How a flag's text is checked before it is used (util/number_text.h).
struct FlagCheck {
  enum Kind {
    kNone,
    kInteger,      // a decimal integer in [lo, hi]
    kUint64,       // a decimal integer in [0, 2^64-1]
    kNumber,       // a decimal number in [lo, hi]
    kNonNegative,  // a decimal integer in [0, INT_MAX] (--help: NONNEGATIVE)
    kPrefix,       // not empty (--help: NAME)
  };
  Kind kind = kNone;
  double lo = 0, hi = 0;  // integers up to 2^32 are exact in a double
};

enum class FlagArity {
  kSwitch,      // no value: given or not ("--no-shuffle"; its text "true" or "false")
  kValue,       // one value, at most once
  kRepeated,    // one value per use, any number of uses (--feature, --include, --exclude)
  kPositional,  // the value without a name (the input)
};

struct ConvertFlag {
  const char* names;  // as CLI11 spells them: "-o,--output", "--size", "input"
  const char* name;   // the long name without "--" (Python's keyword, '-' written '_')
  FlagArity arity;
  bool required;
  const char* type;          // the value's kind in --help: "TEXT", "INT", "UINT", "FLOAT" ("" for a switch)
  const char* default_text;  // the default --help shows ("128MiB"), nullptr for none; it parses to the
                             // value a fresh ConvertFlagValues holds
  FlagCheck check;
  const char* group;  // the --help section
  const char* help;
  // Stores checked `text` in `v` (no cross-flag checks: FinishConvertFlags).
  void (*set)(ConvertFlagValues& v, const std::string& text);
};

// Every flag of `shard convert` but --help, in --help order (the sections
// appear in the order of their first flag).
const std::vector<ConvertFlag>& ConvertFlagTable();
// The flag whose long name (or positional name) is `name` ("output",
// "no-shuffle", "input"); nullptr when there is none.
const ConvertFlag* FindConvertFlag(std::string_view name);
// `flag`'s option name in messages: "--quality", "input".
std::string ConvertFlagOptionName(const ConvertFlag& flag);

// "" when `text` passes `check`, else why not ("'0' is out of range (1..100)").
std::string CheckFlagText(const FlagCheck& check, const std::string& text);
// The check as --help names it: "1..100", "0..2^64-1", "NONNEGATIVE", "NAME"; "" for none.
std::string FlagCheckDescription(const FlagCheck& check);

// Checks `text` and stores it for `flag` (a switch takes "true" or "false").
// InvalidArgument "--quality: '0' is out of range (1..100)".
Status SetConvertFlag(const ConvertFlag& flag, const std::string& text, ConvertFlagValues* v);

// After every flag is set: checks the flags together (the input and the files
// named readable, at most one of --coco/--yolo/--voc, --resize-mode needs
// --size, the task split with the environment's Slurm / Kubernetes variables
// filling in what the flags leave, ...) and fills v->request. Errors as the
// file comment says; nothing is written.
Status FinishConvertFlags(ConvertFlagValues* v);

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_CONVERT_FLAGS_H_
