// FinishConvertFlags (remote/convert_flags.h): the checks of `shard
// convert`'s flags together, and the request they build. The messages are the
// program's (tests/tools/shard_cli_test.cc, python/tests/test_tools.py).
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <tuple>

#include "libshard/convert/annotations.h"
#include "libshard/convert/converter.h"
#include "libshard/remote/convert_flags.h"
#include "libshard/remote/object_input.h"
#include "libshard/store/object_store.h"
#include "libshard/util/byte_size.h"
#include "libshard/util/strings.h"

namespace libshard::remote {
namespace {

namespace image = libshard::image;

// A library parse error with the flag that gave the text: "--size: ...".
template <typename X>
StatusOr<X> ForFlag(const std::string& flag, StatusOr<X> parsed) {
  if (!parsed.ok()) return InvalidArgumentError(flag + ": " + parsed.status().message());
  return parsed;
}

// A path argument the conversion reads: it must exist and be readable, else
// the run is a usage error (exit 2), not a failure.
Status CheckReadable(const std::string& flag, const std::string& path) {
  if (path.empty()) return Status::OK();
  if (::access(path.c_str(), R_OK) != 0) {
    return InvalidArgumentError(flag + path + ": cannot read: " + std::strerror(errno));
  }
  return Status::OK();
}

// An output that names an object store: s3:// is uploaded to
// (remote_convert.h); any other "scheme://" is not a folder, and without this
// check the run would write a local folder named "https:" and exit 0.
Status CheckOutputIsAFolder(const std::string& output) {
  if (util::StartsWith(output, "s3://")) return store::ParseLocation(output).status();
  const size_t colon = output.find("://");
  if (colon == std::string::npos || colon == 0) return Status::OK();
  for (size_t i = 0; i < colon; ++i) {
    const char c = output[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return Status::OK();
  }
  return InvalidArgumentError("-o " + output +
                              ": converting into this kind of object storage is not supported; give "
                              "a local folder or s3://BUCKET/PREFIX");
}

// --coco / --yolo / --voc: at most one, readable.
Status AnnotationsOf(ConvertFlagValues& f) {
  convert::AnnotationOptions& a = f.request.convert.annotations;
  int given = 0;
  for (const auto& [flag, value, format] : {std::tuple{"--coco", &f.coco, convert::AnnotationFormat::kCoco},
                                            std::tuple{"--yolo", &f.yolo, convert::AnnotationFormat::kYolo},
                                            std::tuple{"--voc", &f.voc, convert::AnnotationFormat::kVoc}}) {
    if (value->empty()) continue;
    ++given;
    LIBSHARD_RETURN_IF_ERROR(CheckReadable(std::string(flag) + " ", *value));
    a.format = format;
    a.source = *value;
  }
  if (given > 1) return InvalidArgumentError("give one of --coco, --yolo and --voc");
  return Status::OK();
}

// The image flags: decode, resize, encode.
Status ImageOptionsOf(const ConvertFlagValues& f, convert::ConvertOptions& o) {
  image::TransformSpec& t = o.encode.transform;
  if (!f.size.empty()) {
    if (Status s = image::ParseImageSize(f.size, &t.width, &t.height); !s.ok()) {
      return InvalidArgumentError("--size: " + s.message());
    }
    t.mode = image::ResizeMode::kCenterCrop;
  }
  if (!f.resize_mode.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(t.mode, image::ParseResizeMode(f.resize_mode));
  }
  if (t.mode != image::ResizeMode::kNone && f.size.empty()) {
    return InvalidArgumentError("--resize-mode " + f.resize_mode + " needs --size");
  }
  LIBSHARD_ASSIGN_OR_RETURN(t.filter, image::ParseFilter(f.filter));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.format, image::ParseOutputFormat(f.format));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.reencode, image::ParseReencodeMode(f.reencode));
  o.encode.jpeg.quality = f.quality;
  o.encode.raw.zstd_level = f.zstd_level;
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.raw.filter, ForFlag("--raw-filter", image::ParseRawFilter(f.raw_filter)));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.decode.channels, ForFlag("--channels", image::ParseChannelMode(f.channels)));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.decode.alpha, ForFlag("--alpha", image::ParseAlphaMode(f.alpha)));
  if (!f.fill.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(t.fill, ForFlag("--fill", image::ParseFillColor(f.fill)));
  }
  o.encode.mask_options.ignore_index = static_cast<uint8_t>(f.mask_ignore_index);
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.mask_options.unknown,
                            ForFlag("--unknown-color", image::ParseUnknownColor(f.unknown_color)));
  return Status::OK();
}

// --num-tasks / --task-index: flags win; the environment (Slurm, Kubernetes)
// fills in what they leave.
Status TasksOf(ConvertFlagValues& f, convert::ConvertOptions& o) {
  std::optional<convert::EnvironmentTask> env;
  if (!f.num_tasks || !f.task_index) {
    LIBSHARD_ASSIGN_OR_RETURN(env, convert::TaskFromEnvironment());
  }
  const bool env_count = env && env->num_tasks > 0 && !f.num_tasks;
  const bool env_index = env && !f.task_index;
  if (f.task_index && !f.num_tasks && !env_count) {
    return InvalidArgumentError("--task-index " + std::to_string(*f.task_index) +
                                " needs --num-tasks N (the number of tasks the work is split into, "
                                "or SLURM_ARRAY_TASK_COUNT)");
  }
  if (env_index && !f.num_tasks && env->num_tasks == 0) {
    return InvalidArgumentError(env->source +
                                " gives this task's index but not the number of tasks: add "
                                "--num-tasks N (an Indexed Job's completions)");
  }
  o.num_tasks = f.num_tasks ? *f.num_tasks : env_count ? env->num_tasks : 1;
  o.task_index = f.task_index ? *f.task_index : env_index ? env->task_index : 0;
  f.task_source = env_index || env_count ? env->source : std::string();
  if (o.num_tasks == 0) return InvalidArgumentError("--num-tasks must be at least 1");
  if (o.task_index >= o.num_tasks) {
    const std::string last = std::to_string(o.num_tasks - 1);
    if (env_index) {  // the count is --num-tasks: the environment's own is checked where it is read
      return InvalidArgumentError("task index " + std::to_string(o.task_index) + " from " + env->source +
                                  " is out of range for --num-tasks " + std::to_string(o.num_tasks) + " (0.." + last +
                                  ")");
    }
    return InvalidArgumentError("--task-index: task index " + std::to_string(o.task_index) + " is out of range for " +
                                std::to_string(o.num_tasks) + " tasks" +
                                (env_count ? " (from " + env->source + ")" : std::string()) + " (0.." + last + ")");
  }
  if ((o.dedup_within || o.dedup_across) && o.num_tasks > 1) {
    return InvalidArgumentError("--dedup " + convert::DedupName(o) + " needs the whole split in one run, not " +
                                std::to_string(o.num_tasks) + " tasks (shard merge lists duplicates)");
  }
  return Status::OK();
}

}  // namespace

Status FinishConvertFlags(ConvertFlagValues* v) {
  ConvertFlagValues& f = *v;
  convert::ConvertOptions& o = f.request.convert;
  LIBSHARD_RETURN_IF_ERROR(CheckOutputIsAFolder(o.output));
  if (IsRemoteInput(o.input)) {
    LIBSHARD_RETURN_IF_ERROR(UseObjectInput(&o));
  } else {
    LIBSHARD_RETURN_IF_ERROR(CheckReadable("", o.input));
  }
  LIBSHARD_RETURN_IF_ERROR(CheckReadable("--labels ", o.list.labels_file));
  if (o.list.masks.find("{split}") == std::string::npos) {
    LIBSHARD_RETURN_IF_ERROR(CheckReadable("--masks ", o.list.masks));
  }
  LIBSHARD_RETURN_IF_ERROR(CheckReadable("--mask-labels ", o.mask_labels_file));
  LIBSHARD_RETURN_IF_ERROR(AnnotationsOf(f));
  LIBSHARD_ASSIGN_OR_RETURN(o.list.layout, ForFlag("--layout", convert::ParseFolderLayout(f.layout)));
  o.list.features.clear();
  for (const std::string& spec : f.features) {
    LIBSHARD_ASSIGN_OR_RETURN(convert::CsvFeature feature, convert::ParseCsvFeature(spec));
    o.list.features.push_back(std::move(feature));
  }
  LIBSHARD_ASSIGN_OR_RETURN(o.plan.shard_size_bytes, ForFlag("--shard-size", util::ParseByteSize(f.shard_size)));
  o.plan.seed = f.seed;
  o.plan.shuffle = !f.no_shuffle;
  LIBSHARD_RETURN_IF_ERROR(ImageOptionsOf(f, o));
  if (f.on_error == "fail")
    o.fail_on_error = true;
  else if (f.on_error != "skip")
    return InvalidArgumentError("--on-error must be skip or fail");
  o.sync = !f.no_sync;
  LIBSHARD_ASSIGN_OR_RETURN(o.leaks, convert::ParseLeakMode(f.leaks));
  LIBSHARD_RETURN_IF_ERROR(convert::ParseDedup(f.dedup, &o));
  LIBSHARD_RETURN_IF_ERROR(convert::ValidateEncodeOptions(o.encode));
  LIBSHARD_RETURN_IF_ERROR(convert::CheckOutputFolder(o));
  return TasksOf(f, o);
}

}  // namespace libshard::remote
