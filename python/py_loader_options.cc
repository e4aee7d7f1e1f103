// libshard.Loader's keyword table and what the keywords become (py_loader_options.h).
#include "py_loader_options.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "libshard/util/strings.h"
#include "libshard/util/threads.h"

namespace libshard_py {

using namespace libshard;  // NOLINT: binding file

// An integer argument (an int, or anything with __index__ such as a numpy
// integer; not a bool): ValueError naming it when outside lo..hi, TypeError
// naming it for another type, never pybind's signature dump.
uint64_t IntArg(const py::object& v, const char* name, uint64_t lo, uint64_t hi) {
  const std::string range =
      std::string(name) + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got ";
  if (py::isinstance<py::bool_>(v) || !PyIndex_Check(v.ptr())) {
    throw py::type_error(range + TypeName(v) + " " + std::string(py::repr(v)));
  }
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!index) throw py::error_already_set();
  if (PyObject_RichCompareBool(index.ptr(), py::int_(0).ptr(), Py_LT) == 1) {
    throw py::value_error(range + std::string(py::repr(v)));
  }
  const unsigned long long n = PyLong_AsUnsignedLongLong(index.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw py::value_error(range + std::string(py::repr(v)));
  }
  if (n < lo || n > hi) throw py::value_error(range + std::string(py::repr(v)));
  return n;
}

namespace {

// One keyword: its name, its default as the signature line shows it, and how
// a Python value is stored into LoaderArgs (a cast of the field's type).
struct Keyword {
  const char* name;
  const char* default_text;
  void (*set)(LoaderArgs&, const py::handle&);
};

template <typename T, T LoaderArgs::*Field>
void Set(LoaderArgs& a, const py::handle& v) {
  if constexpr (std::is_same_v<T, py::object>) {
    a.*Field = py::reinterpret_borrow<py::object>(v);
  } else {
    a.*Field = v.cast<T>();
  }
}

#define LIBSHARD_KEYWORD(field, text) \
  Keyword { #field, text, &Set < decltype(LoaderArgs::field), &LoaderArgs::field> }

// In the signature's order (the stub, _libshard.pyi, lists them so too).
const Keyword kKeywords[] = {
    LIBSHARD_KEYWORD(image_size, "None"),
    LIBSHARD_KEYWORD(shuffle, "False"),
    LIBSHARD_KEYWORD(seed, "0"),
    LIBSHARD_KEYWORD(rank, "0"),
    LIBSHARD_KEYWORD(world_size, "1"),
    LIBSHARD_KEYWORD(threads, "2"),
    LIBSHARD_KEYWORD(augment, "'none'"),
    LIBSHARD_KEYWORD(drop_last, "False"),
    LIBSHARD_KEYWORD(channels, "None"),
    LIBSHARD_KEYWORD(order, "''"),
    LIBSHARD_KEYWORD(prefetch, "2"),
    LIBSHARD_KEYWORD(io, "'mmap'"),
    LIBSHARD_KEYWORD(verify_crc, "True"),
    LIBSHARD_KEYWORD(split, "''"),
    LIBSHARD_KEYWORD(keys, "{}"),
    LIBSHARD_KEYWORD(resize, "'center-crop'"),
    LIBSHARD_KEYWORD(masks, "False"),
    LIBSHARD_KEYWORD(worker, "0"),
    LIBSHARD_KEYWORD(num_workers, "1"),
    LIBSHARD_KEYWORD(buffers, "None"),
    LIBSHARD_KEYWORD(layout, "'NHWC'"),
    LIBSHARD_KEYWORD(dtype, "'uint8'"),
    LIBSHARD_KEYWORD(mean, "None"),
    LIBSHARD_KEYWORD(std, "None"),
    LIBSHARD_KEYWORD(slots, "None"),
    LIBSHARD_KEYWORD(cache_dir, "None"),
    LIBSHARD_KEYWORD(cache_limit, "0"),
    LIBSHARD_KEYWORD(on_error, "'raise'"),
    LIBSHARD_KEYWORD(extras, "None"),
    LIBSHARD_KEYWORD(block_size, "256"),
    LIBSHARD_KEYWORD(window_blocks, "4"),
    LIBSHARD_KEYWORD(dct_scale, "True"),
    LIBSHARD_KEYWORD(boxes, "False"),
    LIBSHARD_KEYWORD(max_boxes, "100"),
    LIBSHARD_KEYWORD(box_min_visible, "0.3"),
    LIBSHARD_KEYWORD(weights, "None"),
    LIBSHARD_KEYWORD(samples_per_epoch, "None"),
    LIBSHARD_KEYWORD(label_maps, "'error'"),
};

#undef LIBSHARD_KEYWORD

std::pair<int, int> ImageSize(const py::handle& v) {
  auto as_int = [](py::handle x) -> std::optional<int> {
    if (!py::isinstance<py::int_>(x) || py::isinstance<py::bool_>(x)) return std::nullopt;
    const long long n = PyLong_AsLongLong(x.ptr());
    if (n == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return std::nullopt;
    }
    if (n < 1 || n > 65535) throw py::value_error("image_size: " + std::to_string(n) + " is not in 1..65535");
    return static_cast<int>(n);
  };
  if (auto n = as_int(v)) return {*n, *n};
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    py::sequence seq = py::reinterpret_borrow<py::sequence>(v);
    if (seq.size() == 2) {
      auto h = as_int(seq[0]), w = as_int(seq[1]);
      if (h && w) return {*h, *w};
    }
  }
  throw py::type_error("image_size: expected an int or a (height, width) pair of ints, got " +
                       std::string(py::repr(v)));
}

// dtype=: a str ("float16"), a numpy dtype or scalar type (np.float32,
// np.dtype("float16")) or a torch dtype (torch.uint8), as numpy's name. A
// torch dtype is recognised by its type's module and its str ("torch.uint8"),
// so torch is never imported here.
std::string DtypeName(const py::object& v) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  const py::object module = py::getattr(py::type::of(v), "__module__", py::none());
  if (!module.is_none() && std::string(py::str(module)) == "torch") {
    const std::string text = py::str(v);
    if (util::StartsWith(text, "torch.")) return text.substr(6);
  }
  try {
    return py::str(py::dtype::from_args(v).attr("name"));
  } catch (py::error_already_set&) {
  }
  throw py::type_error("dtype: expected uint8, float32 or float16 as a str, a numpy dtype or a torch dtype, got " +
                       TypeName(v) + " " + std::string(py::repr(v)));
}

// Whether `v` is the string "dataset" (another string is a ValueError naming `what`).
bool IsDatasetWord(const py::object& v, const char* what) {
  if (!py::isinstance<py::str>(v)) return false;
  if (v.cast<std::string>() == "dataset") return true;
  throw py::value_error(std::string(what) +
                        ": expected a sequence of numbers (one per channel), \"dataset\" or "
                        "None, got " +
                        std::string(py::repr(v)));
}

// None -> empty; a sequence of numbers -> its values; else ValueError naming `what`.
std::vector<double> Floats(const py::object& v, const char* what) {
  if (v.is_none()) return {};
  try {
    return v.cast<std::vector<double>>();
  } catch (const py::cast_error&) {
    throw py::value_error(std::string(what) + ": expected a sequence of numbers (one per channel) or None, got " +
                          py::repr(v).cast<std::string>());
  }
}

// weights=, samples_per_epoch=, label_maps= (a mixture: reader/dataset.h).
void ParseMixtureArgs(const LoaderArgs& a, LoaderConfig* c) {
  c->mixture_options.label_maps = TakeArg(reader::ParseLabelMaps(a.label_maps), "label_maps");
  if (a.weights.is_none()) {
    if (!a.samples_per_epoch.is_none()) throw py::value_error("samples_per_epoch: only with weights= (a mixture)");
    if (a.label_maps != "error") throw py::value_error("label_maps: only with weights= (a mixture)");
    return;
  }
  c->mixture = true;
  if (py::isinstance<py::str>(a.weights)) throw py::type_error("weights: expected a list of numbers, not a str");
  try {
    c->mixture_options.weights = a.weights.cast<std::vector<double>>();
  } catch (const py::cast_error&) {
    throw py::type_error("weights: expected a list of numbers (one per source), got " +
                         py::repr(a.weights).cast<std::string>());
  }
  if (!a.samples_per_epoch.is_none()) {
    c->mixture_options.samples_per_epoch =
        IntArg(a.samples_per_epoch, "samples_per_epoch", 1, reader::MixtureOrder::kMaxEpochLength);
  }
}

}  // namespace

LoaderArgs LoaderArgsFrom(const py::kwargs& kwargs) {
  LoaderArgs a;
  for (auto [k, v] : kwargs) {
    const std::string name = py::str(k);
    const Keyword* kw = nullptr;
    for (const Keyword& x : kKeywords) {
      if (name == x.name) kw = &x;
    }
    if (kw == nullptr) {
      py::list names;
      for (const Keyword& x : kKeywords) names.append(x.name);
      py::list near = py::module_::import("difflib").attr("get_close_matches")(name, names, 1);
      throw py::type_error(
          "Loader() got an unexpected keyword argument '" + name + "'" +
          (near.empty() ? std::string() : " (did you mean '" + py::str(near[0]).cast<std::string>() + "'?)"));
    }
    try {
      kw->set(a, v);
    } catch (const py::cast_error&) {
      throw py::type_error(name + ": " + TypeName(v) + " " + std::string(py::repr(v)) +
                           " is not accepted (see help(libshard.Loader))");
    }
  }
  return a;
}

std::string LoaderSignature() {
  std::string s = "__init__(self: libshard._libshard.Loader, sources: object, batch_size: object, *";
  for (const Keyword& k : kKeywords) s += std::string(", ") + k.name + ": object = " + k.default_text;
  return s + ") -> None";
}

LoaderConfig ParseLoaderArgs(const py::object& batch_size, const LoaderArgs& a) {
  LoaderConfig c;
  c.dataset.shard.io = TakeArg(reader::ParseIoMode(a.io), "io");
  c.dataset.shard.verify_crc = a.verify_crc;
  c.dataset.split = a.split;
  if (!a.cache_dir.is_none()) c.dataset.cache_dir = FsPath(a.cache_dir, "cache_dir");
  c.dataset.cache_limit = IntArg(a.cache_limit, "cache_limit", 0, ~uint64_t{0});
  for (const auto& [k, v] : a.keys) {
    std::string* field = reader::KeyForRole(&c.dataset.keys, k);
    if (field == nullptr) throw py::value_error("keys: unknown key role \"" + k + "\"");
    *field = v;
  }
  constexpr uint64_t kIntMax = 2147483647, kInt64Max = (uint64_t{1} << 63) - 1;
  reader::BatchLoaderOptions& o = c.loader;
  o.batch_size = static_cast<size_t>(IntArg(batch_size, "batch_size", 1, kInt64Max));
  if (a.image_size.is_none()) {
    o.height = o.width = 0;  // the stored size (BatchLoader::ResolveShape)
  } else {
    std::tie(o.height, o.width) = ImageSize(a.image_size);
  }
  o.channels = a.channels.is_none() ? 0 : static_cast<int>(IntArg(a.channels, "channels", 1, 3));
  o.threads = static_cast<int>(IntArg(a.threads, "threads", 0, util::kMaxThreads));
  o.prefetch = static_cast<size_t>(IntArg(a.prefetch, "prefetch", 0, kInt64Max));
  o.augment = TakeArg(reader::ParseAugment(a.augment), "augment");
  o.resize = TakeArg(image::ParseResizeMode(a.resize), "resize");
  o.masks = a.masks;
  o.dct_scale = a.dct_scale;
  o.boxes = a.boxes;
  o.max_boxes = static_cast<size_t>(IntArg(a.max_boxes, "max_boxes", 1, 100000));
  {
    const std::string bad = "box_min_visible: expected a number in 0..1, got ";
    const PyObject* v = a.box_min_visible.ptr();
    if (py::isinstance<py::bool_>(a.box_min_visible) || (!PyFloat_Check(v) && !PyLong_Check(v))) {
      throw py::type_error(bad + TypeName(a.box_min_visible) + " " + std::string(py::repr(a.box_min_visible)));
    }
    const double x = a.box_min_visible.cast<double>();
    if (!(x >= 0 && x <= 1)) throw py::value_error(bad + std::string(py::repr(a.box_min_visible)));
    o.box_min_visible = static_cast<float>(x);
  }
  if (!a.extras.is_none()) {
    if (py::isinstance<py::str>(a.extras)) throw py::type_error("extras: expected a list of feature keys, not a str");
    for (auto k : a.extras) {
      if (!py::isinstance<py::str>(k)) throw py::type_error("extras: feature keys are str, got " + TypeName(k));
      c.extras.push_back(k.cast<std::string>());
    }
  }
  o.extras = c.extras;
  if (a.on_error == "skip") {
    o.on_error = reader::BatchLoaderOptions::OnError::kSkip;
  } else if (a.on_error != "raise") {
    throw py::value_error("on_error: expected \"raise\" or \"skip\", got \"" + a.on_error + "\"");
  }
  o.layout = Take(reader::ParseLayout(a.layout));
  o.dtype = Take(reader::ParsePixelType(DtypeName(a.dtype)));
  // mean="dataset" / std="dataset": the manifest's statistics, once the sources are open.
  c.dataset_mean = IsDatasetWord(a.mean, "mean");
  c.dataset_std = IsDatasetWord(a.std, "std");
  if (!c.dataset_mean) o.mean = Floats(a.mean, "mean");
  if (!c.dataset_std) o.std = Floats(a.std, "std");
  // Checked here too so that a bad mean / std is reported before the sources are opened (the size and
  // channels may come from the manifest: then 1 x 1, and 1 channel for one mean / std value, else 3).
  const size_t given = std::max(o.mean.size(), o.std.size());
  const int check_channels = o.channels != 0 ? o.channels : given == 1 ? 1 : 3;
  Check(reader::SampleConverter::Create(o.layout, o.dtype, o.mean, o.std, std::max(o.height, 1), std::max(o.width, 1),
                                        check_channels)
            .status());
  if (!a.order.empty()) {
    o.order.kind = TakeArg(reader::ParseOrderKind(a.order), "order");
  } else {
    o.order.kind = a.shuffle ? reader::OrderKind::kShuffle : reader::OrderKind::kSequential;
  }
  // Block shuffle's geometry (reader/sample_order.h); bounded like every count.
  o.order.block_size = static_cast<size_t>(IntArg(a.block_size, "block_size", 1, kIntMax));
  o.order.window_blocks = static_cast<size_t>(IntArg(a.window_blocks, "window_blocks", 1, 65536));
  o.order.seed = IntArg(a.seed, "seed", 0, ~uint64_t{0});
  o.order.rank = static_cast<int>(IntArg(a.rank, "rank", 0, kIntMax));
  o.order.world_size = static_cast<int>(IntArg(a.world_size, "world_size", 1, kIntMax));
  o.order.drop_last = a.drop_last;
  o.order.worker = static_cast<int>(IntArg(a.worker, "worker", 0, kIntMax));
  o.order.num_workers = static_cast<int>(IntArg(a.num_workers, "num_workers", 1, kIntMax));
  ParseMixtureArgs(a, &c);
  return c;
}

std::unique_ptr<reader::Dataset> OpenLoaderDataset(const py::object& sources, const LoaderConfig& c) {
  if (!c.mixture) return Take(reader::Dataset::Open(Sources(sources), c.dataset));
  if (IsPath(sources) || !py::isinstance<py::iterable>(sources)) {
    throw py::type_error("sources: with weights=, a list of datasets (one per weight), got " + TypeName(sources));
  }
  std::vector<std::vector<std::string>> groups;
  for (const auto& s : sources) {
    const std::string at = "sources[" + std::to_string(groups.size()) + "]";
    if (IsPath(s)) {
      groups.push_back({FsPath(s, at)});
      continue;
    }
    if (!py::isinstance<py::iterable>(s))
      throw py::type_error(at + ": expected a path or a list of paths, got " + TypeName(s));
    std::vector<std::string> group;
    for (const auto& f : s) group.push_back(FsPath(f, at + "[" + std::to_string(group.size()) + "]"));
    groups.push_back(std::move(group));
  }
  if (groups.size() != c.mixture_options.weights.size()) {
    throw py::value_error("weights: " + std::to_string(c.mixture_options.weights.size()) + " weights for " +
                          std::to_string(groups.size()) + " sources (one weight per element of sources)");
  }
  return Take(reader::Dataset::OpenMixture(groups, c.mixture_options, c.dataset));
}

void ResolveDatasetStatistics(const reader::Dataset& ds, const LoaderConfig& config, reader::BatchLoaderOptions* o) {
  if (!config.dataset_mean && !config.dataset_std) return;
  const bool want_mean = config.dataset_mean, want_std = config.dataset_std;
  const int channels = o->channels;
  const auto& stats = ds.channel_stats();
  const char* arg = want_mean ? "mean" : "std";
  if (stats.empty()) {
    throw py::value_error(std::string(arg) +
                          "=\"dataset\": the sources record no per-channel statistics (a "
                          "manifest.json written by shard convert does; plain shards do not)");
  }
  if (stats.size() != static_cast<size_t>(channels) && stats.size() != 1) {
    throw py::value_error(std::string(arg) + "=\"dataset\": the manifest has statistics for " +
                          std::to_string(stats.size()) + " channels, the loader gives " + std::to_string(channels) +
                          " (use channels=" + std::to_string(stats.size()) + " or give the values)");
  }
  for (int c = 0; c < channels; ++c) {
    const reader::Dataset::ChannelMoments& m = stats[stats.size() == 1 ? 0 : static_cast<size_t>(c)];
    if (want_mean) o->mean.push_back(m.mean / 255.0);
    if (want_std) {
      if (!(m.std > 0)) throw py::value_error("std=\"dataset\": channel " + std::to_string(c) + " is constant");
      o->std.push_back(m.std / 255.0);
    }
  }
}

}  // namespace libshard_py
