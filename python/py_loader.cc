// libshard.Loader: batches from shards (docs/reader.md).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "py_boxes.h"
#include "py_common.h"
#include "py_dataset.h"
#include "py_loader_options.h"

namespace libshard_py {
namespace {

using namespace libshard;  // NOLINT: binding file

// The loader's own buffers= arrays, held for its whole life: holding the
// numpy array keeps its memory (and whatever it views) alive, and keeps the
// exporter's buffer export, so a bytearray cannot be resized under the loader
// (BufferError) nor a numpy array (ValueError).
struct HeldBuffers {
  py::array images, labels, masks;
};

// `for batch in loader` iterates one epoch; see PyLoader::Iter.
class PyLoader;
struct PyEpochIterator {
  py::object loader;  // the PyLoader, kept alive
  uint64_t pass = 0;
};

class PyLoader {
 public:
  PyLoader(const py::object& sources, const py::object& batch_size, const LoaderArgs& args) {
    LoaderConfig config = ParseLoaderArgs(batch_size, args);
    reader::BatchLoaderOptions& o = config.loader;
    extras_ = config.extras;
    auto ds = OpenLoaderDataset(sources, config);  // a mixture with weights=
    std::shared_ptr<const reader::Dataset> shared(std::move(ds));
    dataset_ = shared;
    for (const std::string& key : extras_) extras_list_.push_back(shared->ListFeature(key));
    // The stored size and channels, where they were left to the manifest, before buffers are checked.
    Check(reader::BatchLoader::ResolveShape(*shared, &o));
    ResolveDatasetStatistics(*shared, config, &o);
    std::vector<reader::BatchBuffers> bufs = HoldBuffers(args.buffers, o);
    if (!args.slots.is_none() && !bufs.empty()) throw py::value_error("buffers and slots: give one or the other");
    if (!args.slots.is_none()) {
      // Batches in the slot set's memory while a slot is free; heap blocks
      // (two kept) otherwise.
      slots_ = args.slots;
      loader_ = Take(reader::BatchLoader::CreateWithPool(shared, o, SlotPool(args.slots, 2)));
    } else {
      loader_ = Take(reader::BatchLoader::Create(shared, o, bufs));
    }
    opt_ = loader_->options();
    batches_per_epoch_ = loader_->batches_per_epoch();
  }

  ~PyLoader() {
    // The loader's threads write into the held buffers: stop them first.
    if (loader_ == nullptr) return;
    dataset_->CancelTransfers();  // no wait for downloads in flight
    if (Finalizing()) {
      loader_.reset();
    } else {
      py::gil_scoped_release release;
      loader_.reset();
    }
  }

  size_t Len() const { return batches_per_epoch_; }

  // A new pass over the current epoch. A pass left unfinished (a peek with
  // next(iter(loader)), a break) does not count: the next iter() starts again
  // where that pass started. After load_state_dict() or plain next() calls, a pass
  // starts at the loader's position.
  PyEpochIterator Iter(const py::object& self) {
    auto lock = Lock();
    reader::BatchLoader& l = Open();
    const reader::Position p = l.position();
    if (pass_active_ && p.epoch == pass_start_.epoch && !(p == pass_start_)) Seek(pass_start_);
    pass_start_ = l.position();
    pass_active_ = true;
    return {self, ++pass_id_};
  }

  // next(loader): the stream of batches across epochs (Keras-style).
  py::tuple Next() {
    auto lock = Lock();
    Open();
    pass_active_ = false;
    if (batches_per_epoch_ == 0) throw py::stop_iteration();
    return NextBatch();
  }

  py::tuple NextInPass(uint64_t pass) {
    auto lock = Lock();
    reader::BatchLoader& l = Open();
    if (pass != pass_id_) {
      throw std::runtime_error("this epoch iterator was replaced by a later iter() of the same Loader");
    }
    if (!pass_active_ || batches_per_epoch_ == 0 || l.position().epoch != pass_start_.epoch) {
      pass_active_ = false;
      throw py::stop_iteration();
    }
    py::tuple t = NextBatch();
    if (l.position().epoch != pass_start_.epoch) pass_active_ = false;  // the epoch is done
    return t;
  }

  // The global position (docs/reader.md, "Changing the number of GPUs"):
  // the samples of the epoch's global order all ranks have consumed, what
  // defines that order, and the records skipped so far.
  py::dict State() {
    auto lock = Lock();
    const reader::OrderOptions& o = Open().order().options();
    if (o.num_workers > 1) {
      throw py::value_error(
          "state_dict: with num_workers > 1 this loader yields only its share of the rank's "
          "batches; the consumer that receives them all saves the position "
          "(libshard.torch.ShardDataset.state_dict)");
    }
    const reader::GlobalPosition g = Take(loader_->global_position());
    py::dict d;
    d["epoch"] = g.epoch;
    d["consumed"] = g.consumed;
    d["seed"] = o.seed;
    d["order"] = reader::OrderKindName(o.kind);
    d["block_size"] = o.block_size;
    d["window_blocks"] = o.window_blocks;
    d["permutation"] = reader::kPermutationName;
    d["samples"] = loader_->order().dataset_size();
    d["dataset"] = dataset_->Identity();
    // The shape that saved it (any other may load it).
    d["rank"] = o.rank;
    d["world_size"] = o.world_size;
    d["batch_size"] = opt_.batch_size;
    d["skipped"] = Skipped();
    return d;
  }

  void Restore(const py::dict& state) {
    auto lock = Lock();
    reader::BatchLoader& l = Open();
    const reader::OrderOptions& o = l.order().options();
    const uint64_t samples = l.order().dataset_size();
    auto refuse = [](const std::string& field, const std::string& saved, const std::string& here) {
      throw TextValueError("state[\"" + field + "\"]: saved by a loader with another " + field + " (" + saved +
                            ", here " + here + "): it cannot continue here");
    };
    const uint64_t saved_samples = StateInt(state, "samples", ~uint64_t{0});
    const std::string identity = StateStr(state, "dataset");
    if (identity != dataset_->Identity()) refuse("dataset", identity, dataset_->Identity());
    if (saved_samples != samples) refuse("samples", std::to_string(saved_samples), std::to_string(samples));
    const uint64_t seed = StateInt(state, "seed", ~uint64_t{0});
    if (seed != o.seed) refuse("seed", std::to_string(seed), std::to_string(o.seed));
    const std::string kind = StateStr(state, "order");
    if (kind != reader::OrderKindName(o.kind)) refuse("order", kind, reader::OrderKindName(o.kind));
    if (o.kind != reader::OrderKind::kSequential) {
      const std::string permutation = state.contains("permutation") ? StateStr(state, "permutation") : "";
      if (permutation != reader::kPermutationName) {
        throw TextValueError("state[\"permutation\"]: " +
                             (permutation.empty() ? std::string("absent: saved by an earlier libshard, whose shuffle")
                                                  : "\"" + permutation + "\": saved by a libshard whose shuffle") +
                             " was another permutation than this one's (\"" + reader::kPermutationName +
                             "\"): the position cannot continue in the saved run's order (load it with consumed 0 "
                             "to start its epoch over)");
      }
    }
    if (o.kind == reader::OrderKind::kBlockShuffle) {
      for (const auto& [key, here] : {std::pair<const char*, uint64_t>{"block_size", o.block_size},
                                      std::pair<const char*, uint64_t>{"window_blocks", o.window_blocks}}) {
        const uint64_t v = StateInt(state, key, ~uint64_t{0});
        if (v != here) refuse(key, std::to_string(v), std::to_string(here));
      }
    }
    const uint64_t epoch = StateInt(state, "epoch", reader::Position::kMaxEpoch);
    const uint64_t consumed = StateInt(state, "consumed", samples);
    std::vector<reader::SkippedRecord> skipped;
    if (state.contains("skipped")) {
      py::object list = state["skipped"];
      if (!py::isinstance<py::list>(list)) {
        throw py::value_error("state[\"skipped\"] must be a list, got a " + TypeName(list));
      }
      for (py::handle item : list) {
        const std::string at = "state[\"skipped\"][" + std::to_string(skipped.size()) + "]";
        if (!py::isinstance<py::dict>(item)) throw py::value_error(at + " must be a dict, got a " + TypeName(item));
        py::dict e = py::reinterpret_borrow<py::dict>(item);
        reader::SkippedRecord r;
        r.sample = StateInt(e, "sample", ~uint64_t{0}, at);
        if (!e.contains("file")) throw py::value_error(at + " lacks \"file\"");
        r.path = FsPath(e["file"], at + "[\"file\"]");
        r.record = StateInt(e, "record", ~uint64_t{0}, at);
        r.offset = StateInt(e, "offset", ~uint64_t{0}, at);
        r.reason = StateStr(e, "reason", at);
        skipped.push_back(std::move(r));
      }
    }
    Status s = l.RestoreSkipped(skipped);
    if (!s.ok()) throw TextValueError("state[\"skipped\"]: " + std::string(s.message()));
    Check(WithoutGil([&] { return l.SeekGlobal(reader::GlobalPosition{epoch, consumed}); }));
    pass_active_ = false;
  }

  // Stops and joins the loader's threads and lets go of the buffers; later
  // use raises ValueError. Idempotent.
  void Close() {
    auto lock = Lock();
    if (loader_ != nullptr) {
      // The threads may wait for downloads in flight (a slow server after
      // Ctrl-C): ended first, so that close returns within a second or two.
      dataset_->CancelTransfers();
      WithoutGil([&] {
        loader_.reset();
        return true;
      });
    }
    held_.clear();
  }

  // This rank's global sample numbers in epoch `epoch` from global offset
  // `consumed` (SampleOrder::EpochSamples): what a sampler yields.
  py::array_t<uint64_t> EpochSamples(const py::object& epoch, const py::object& consumed) {
    const reader::SampleOrder& order = Open().order();
    const uint64_t e = IntArg(epoch, "epoch", 0, reader::Position::kMaxEpoch);
    const uint64_t start = IntArg(consumed, "consumed", 0, order.dataset_size());
    std::vector<uint64_t> v = WithoutGil([&] { return order.EpochSamples(e, start); });
    return py::array_t<uint64_t>(static_cast<py::ssize_t>(v.size()), v.data());
  }

  py::list Labels() const { return LabelList(*dataset_); }
  uint64_t NumSamples() const { return dataset_->size(); }
  // Every sample's label, no image decoded (reader/sample_labels.h); read on
  // first use, on the loader's thread count, then kept (read-only).
  py::object SampleLabels() {
    if (sample_labels_.is_none()) sample_labels_ = SampleLabelArray(*dataset_, opt_.threads);
    return sample_labels_;
  }
  // The per-channel mean / std the decode threads apply (mean="dataset" resolved); empty for uint8.
  py::tuple Normalization() const { return py::make_tuple(opt_.mean, opt_.std); }
  // One sample by global number, in the batches' layout and dtype (the loader's SampleDecoder).
  py::tuple Sample(const py::object& index, const py::object& epoch) {
    return SampleTuple(Open().decoder(), dataset_->size(), index, epoch);
  }

  // extras=: {key: [value per sample]} of batch `b` (None without extras),
  // read by the loader's decode threads with the batch's pixels. A feature
  // the manifest's schema marks a list (an int_list / float_list column, the
  // object boxes) gives a list always, [] for none; any other feature with
  // one value gives that value (bytes, int or float), several a list, none
  // None.
  py::object Extras(const reader::Batch& b) const {
    if (extras_.empty()) return py::none();
    py::dict out;
    for (size_t k = 0; k < extras_.size(); ++k) {
      py::list col;
      for (const std::vector<reader::ExtraValues>& row : b.extras) {
        const reader::ExtraValues& v = row[k];
        py::list vals;
        for (const auto& x : v.bytes) vals.append(py::bytes(x));
        for (int64_t i : v.ints) vals.append(i);
        for (float x : v.floats) vals.append(x);
        if (extras_list_[k])
          col.append(vals);
        else if (vals.size() == 0)
          col.append(py::none());
        else if (vals.size() == 1)
          col.append(vals[0]);
        else
          col.append(vals);
      }
      out[py::str(extras_[k])] = col;
    }
    return out;
  }

  // The epoch's global order (all ranks), as a numpy uint64 array.
  py::array_t<uint64_t> GlobalOrder(const py::object& epoch) {
    const uint64_t e = IntArg(epoch, "epoch", 0, reader::Position::kMaxEpoch);
    std::vector<uint64_t> order = WithoutGil([&] { return Open().order().GlobalOrder(e); });
    py::array_t<uint64_t> out(static_cast<py::ssize_t>(order.size()));
    if (!order.empty()) std::memcpy(out.mutable_data(), order.data(), order.size() * sizeof(uint64_t));
    return out;
  }

  py::list Skipped() const {
    py::list out;
    if (loader_ == nullptr) return out;
    for (const reader::SkippedRecord& r : loader_->skipped()) {
      py::dict d;
      d["sample"] = r.sample;
      d["file"] = FsDecode(r.path);
      d["record"] = r.record;
      d["offset"] = r.offset;
      d["reason"] = TextOf(r.reason);
      out.append(d);
    }
    return out;
  }

  py::tuple Shape() const {
    const reader::BatchShape s = reader::BatchLoader::ShapeOf(opt_);
    return py::make_tuple(s.image_bytes, s.labels, s.mask_bytes);
  }

 private:
  static bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
  }

  reader::BatchLoader& Open() {
    if (loader_ == nullptr) throw py::value_error("the Loader is closed");
    return *loader_;
  }

  // One Python thread at a time uses the loader; others wait here with the
  // GIL released (and stay interruptible). In a fork child the parent's lock
  // (perhaps held by a thread that is not there) is abandoned.
  std::unique_lock<std::timed_mutex> Lock() {
    if (mu_pid_ != getpid()) {
      (void)mu_.release();
      mu_ = std::make_unique<std::timed_mutex>();
      mu_pid_ = getpid();
    }
    std::unique_lock<std::timed_mutex> lock(*mu_, std::defer_lock);
    while (!WithoutGil([&] { return lock.try_lock_for(std::chrono::milliseconds(50)); })) {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    return lock;
  }

  void Seek(reader::Position p) {
    Check(WithoutGil([&] { return loader_->Seek(p); }));
  }

  // The next batch as numpy arrays; waits with the GIL released, checking for
  // signals (KeyboardInterrupt) every 100 ms.
  py::tuple NextBatch() {
    reader::Batch b;
    std::shared_ptr<reader::BatchBlock> owner;
    Status s;
    const bool owned = held_.empty();
    for (;;) {
      bool ready = false;
      s = WithoutGil([&] {
        return owned ? loader_->NextOwned(&b, &owner, std::chrono::milliseconds(100), &ready)
                     : loader_->NextFor(&b, std::chrono::milliseconds(100), &ready);
      });
      if (!s.ok() || ready) break;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    // The options were checked at construction: a sample the image layer calls invalid (an unknown format,
    // a bad raw dtype) is bad data.
    if (s.code() == StatusCode::kInvalidArgument) s = DataLossError(std::string(s.message()));
    Check(s);
    const py::ssize_t n = static_cast<py::ssize_t>(b.size), H = opt_.height, W = opt_.width, C = opt_.channels;
    const bool nchw = opt_.layout == reader::Layout::kNCHW;
    py::object images, labels, masks = py::none();
    if (!held_.empty()) {
      const HeldBuffers& h = held_[b.slot];
      py::slice first(0, n, 1);
      const py::ssize_t B = static_cast<py::ssize_t>(opt_.batch_size);
      images = h.images.attr("reshape")(nchw ? py::make_tuple(B, C, H, W) : py::make_tuple(B, H, W, C))[first];
      labels = h.labels.attr("reshape")(py::make_tuple(opt_.batch_size))[first];
      if (opt_.masks) masks = h.masks.attr("reshape")(py::make_tuple(opt_.batch_size, H, W))[first];
    } else {
      // The batch's own memory, no copy: the arrays share one capsule that
      // holds the block; the last array to die returns it to the pool.
      py::object base = WrapBatchOwner(std::move(owner), slots_);
      const std::vector<py::ssize_t> shape =
          nchw ? std::vector<py::ssize_t>{n, C, H, W} : std::vector<py::ssize_t>{n, H, W, C};
      images = py::array(PixelDtype(opt_.dtype), shape, b.images, base);
      labels = py::array_t<int64_t>({n}, {static_cast<py::ssize_t>(sizeof(int64_t))}, b.labels, base);
      if (opt_.masks) masks = py::array_t<uint8_t>({n, H, W}, b.masks, base);
    }
    return MakeBatch(images, labels, opt_.masks ? masks : py::none(),
                     opt_.boxes ? py::object(BatchBoxArrays(b.boxes, b.size)) : py::none(), Extras(b));
  }

  // state[key] (or, with `where`, that entry's: "state[\"skipped\"][3]"):
  // an int or anything with __index__ (numpy integers), 0..max.
  static uint64_t StateInt(const py::dict& state, const char* key, uint64_t max, const std::string& where = "state") {
    const std::string field = where + "[\"" + key + "\"]";
    if (!state.contains(key)) throw py::value_error(where + " lacks \"" + key + "\"");
    py::object v = state[key];
    const std::string range = field + " must be an integer in 0.." + std::to_string(max) + ", got ";
    if (py::isinstance<py::bool_>(v) || !PyIndex_Check(v.ptr())) {
      throw py::value_error(range + "a " + TypeName(v) + " (" + std::string(py::repr(v)) + ")");
    }
    py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
    if (!index) throw py::error_already_set();
    const unsigned long long n = PyLong_AsUnsignedLongLong(index.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error(range + std::string(py::repr(v)));
    }
    if (n > max) throw py::value_error(range + std::string(py::repr(v)));
    return n;
  }

  // state[key] as a str; its bytes as saved: a reason naming a file whose
  // name is not UTF-8 comes back surrogate-escaped (TextOf) and goes back to
  // its bytes here.
  static std::string StateStr(const py::dict& state, const char* key, const std::string& where = "state") {
    if (!state.contains(key)) throw py::value_error(where + " lacks \"" + key + "\"");
    py::object v = state[key];
    if (!py::isinstance<py::str>(v)) {
      throw py::value_error(where + "[\"" + key + "\"] must be a str, got a " + TypeName(v) + " (" +
                            std::string(py::repr(v)) + ")");
    }
    PyObject* bytes = PyUnicode_AsEncodedString(v.ptr(), "utf-8", "surrogateescape");
    if (bytes == nullptr) {
      PyErr_Clear();
      throw py::value_error(where + "[\"" + key + "\"]: not text (" + std::string(py::repr(v)) + ")");
    }
    py::bytes b = py::reinterpret_steal<py::bytes>(bytes);
    return b.cast<std::string>();
  }

  // buffers=[(images, labels[, masks]), ...]: checks each array and that no
  // two share memory (the same array twice would give wrong batches).
  std::vector<reader::BatchBuffers> HoldBuffers(const py::object& buffers, const reader::BatchLoaderOptions& o) {
    std::vector<reader::BatchBuffers> bufs;
    if (buffers.is_none()) return bufs;
    struct Region {
      uintptr_t begin, end;
      std::string what;
    };
    std::vector<Region> regions;
    auto hold = [&](py::handle obj, const py::dtype& dt, size_t count, const std::string& what) {
      py::array a;
      try {
        a = py::array::ensure(obj);
      } catch (py::error_already_set&) {
      }
      if (!a) throw py::type_error(what + " is a " + TypeName(obj) + ", not an array");
      if (!a.dtype().is(dt) || static_cast<size_t>(a.size()) != count || !(a.flags() & py::array::c_style) ||
          !a.writeable()) {
        throw py::value_error(what + " must be a writable C-contiguous array of " + std::to_string(count) + " " +
                              dt.attr("name").cast<std::string>());
      }
      const auto begin = reinterpret_cast<uintptr_t>(a.data());
      regions.push_back({begin, begin + static_cast<uintptr_t>(a.nbytes()), what});
      return a;
    };
    size_t i = 0;
    for (auto item : buffers) {
      if (!py::isinstance<py::tuple>(item) && !py::isinstance<py::list>(item)) {
        throw py::type_error("buffers: expected (images, labels[, masks]) tuples, got " + TypeName(item));
      }
      py::sequence t = py::reinterpret_borrow<py::sequence>(item);
      if (t.size() < 2 || (o.masks && t.size() < 3)) {
        throw py::value_error("buffers: expected (images, labels[, masks]) tuples");
      }
      const std::string at = "buffers[" + std::to_string(i++) + "]";
      const size_t n = o.batch_size * static_cast<size_t>(o.height) * o.width;
      HeldBuffers h;
      h.images = hold(t[0], PixelDtype(o.dtype), n * o.channels, at + " images");
      h.labels = hold(t[1], py::dtype::of<int64_t>(), o.batch_size, at + " labels");
      reader::BatchBuffers b{static_cast<uint8_t*>(h.images.mutable_data()),
                             static_cast<int64_t*>(h.labels.mutable_data()), nullptr};
      if (o.masks) {
        h.masks = hold(t[2], py::dtype::of<uint8_t>(), n, at + " masks");
        b.masks = static_cast<uint8_t*>(h.masks.mutable_data());
      }
      bufs.push_back(b);
      held_.push_back(std::move(h));
    }
    std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
    for (size_t k = 1; k < regions.size(); ++k) {
      if (regions[k].begin < regions[k - 1].end) {
        throw py::value_error(regions[k].what + " shares memory with " + regions[k - 1].what +
                              " (each buffer needs memory of its own)");
      }
    }
    return bufs;
  }

  static py::dtype PixelDtype(reader::PixelType t) { return py::dtype(reader::PixelTypeName(t)); }

  std::shared_ptr<const reader::Dataset> dataset_;
  std::unique_ptr<reader::BatchLoader> loader_;  // null once closed
  reader::BatchLoaderOptions opt_;
  uint64_t batches_per_epoch_ = 0;
  std::vector<HeldBuffers> held_;
  py::object slots_ = py::none();    // the _SlotSet batches may live in
  std::vector<std::string> extras_;  // extras=: feature keys returned per batch
  std::vector<bool> extras_list_;    // per key: the schema marks it a list
  py::object sample_labels_ = py::none();
  std::unique_ptr<std::timed_mutex> mu_ = std::make_unique<std::timed_mutex>();
  pid_t mu_pid_ = getpid();
  // The current pass of `for` (see Iter).
  uint64_t pass_id_ = 0;
  reader::Position pass_start_;
  bool pass_active_ = false;
};

}  // namespace

void BindLoader(py::module_& m) {
  BindBatchTypes(m);
  py::class_<PyEpochIterator>(m, "EpochIterator", "One pass over an epoch of a Loader (what iter(loader) returns)")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](PyEpochIterator& it) { return it.loader.cast<PyLoader&>().NextInPass(it.pass); });

  py::class_<PyLoader> loader(
      m, "Loader",
      "Batches of uint8 images and int64 labels from shards (docs/reader.md).\n\n"
      "`for batch in loader` runs to the end of the current epoch; a pass left unfinished (a\n"
      "peek with next(iter(loader)), a break) is replayed by the next iter(). Plain next(loader)\n"
      "streams batches across epochs (Keras-style generators). close() or a `with` block stops\n"
      "the loader's threads. One Loader may be used from several threads (one batch at a\n"
      "time) and in a fork child (its threads restart there).");
  {
    // The signature line comes from the keyword table (py_loader_options.h).
    py::options options;
    options.disable_function_signatures();
    static const std::string init_doc =
        LoaderSignature() + "\n\n" +
        "sources: paths (str, bytes, os.PathLike), folders, globs or a manifest.json, or s3://BUCKET/PREFIX[/\n"
        "manifest.json] / https://... (docs/object_storage.md); image_size: an int or\n"
        "(height, width), None (default): the stored size when the manifest says every image has it;\n"
        "channels: 1 or 3, None (default): 1 when the manifest says every image is gray, else 3;\n"
        "dtype: \"uint8\", \"float32\", \"float16\" or a numpy / torch dtype; split: the manifest's split\n"
        "(required when it has several), sliced as in TFDS with \"train[:10%]\", \"val[:500]\"; cache_dir, cache_limit: where remote shards are cached (default\n"
        "$LIBSHARD_CACHE_DIR, else ~/.cache/libshard) and its byte limit (0: none; shards are downloaded\n"
        "ahead of the epoch's order and, over a part larger than the limit, stream through the cache with\n"
        "sequential or order=\"block-shuffle\" reading); block_size, window_blocks: order=\"block-shuffle\"'s\n"
        "blocks of consecutive records and how many are shuffled together (default 256 and 4); dct_scale:\n"
        "JPEG DCT scaling when the resize shrinks 2x or more (default True; False: exact full-scale pixels)";
    loader.def(py::init([](const py::object& sources, const py::object& batch_size, const py::kwargs& kwargs) {
                 return std::make_unique<PyLoader>(sources, batch_size, LoaderArgsFrom(kwargs));
               }),
               py::arg("sources"), py::arg("batch_size"), init_doc.c_str());
  }
  loader.def("__len__", &PyLoader::Len, "Batches per epoch")
      .def(
          "__iter__", [](py::object self) { return self.cast<PyLoader&>().Iter(self); },
          "A pass over the rest of the current epoch (see the class doc)")
      .def("__next__", &PyLoader::Next, "The next batch of the stream, across epochs")
      .def("state_dict", &PyLoader::State,
           "The global position of the next batch, as a dict: {epoch, consumed (samples of the epoch's global\n"
           "order all ranks have consumed), seed, order, block_size, window_blocks, permutation, samples,\n"
           "dataset, rank, world_size, batch_size, skipped}; the same on every rank at the same step. ValueError with\n"
           "num_workers > 1 (the consumer of all workers' batches counts; see libshard.torch.ShardDataset)")
      .def("load_state_dict", &PyLoader::Restore, py::arg("state"),
           "Continues at a state_dict()'s position, also on another world_size, rank, num_workers or batch_size\n"
           "(the rest of the epoch cut anew); ValueError naming the field for values out of range, another\n"
           "dataset, seed or order")
      .def("close", &PyLoader::Close, "Stops and joins the loader's threads; later use raises ValueError")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyLoader& l, py::object, py::object, py::object) { l.Close(); })
      .def("epoch_samples", &PyLoader::EpochSamples, py::arg("epoch"), py::arg("consumed") = 0,
           "epoch_samples(epoch, consumed=0): this rank's global sample numbers (uint64) in `epoch`, from the\n"
           "epoch's global offset `consumed` on (its batches one after another; before the worker split)")
      .def_property_readonly("labels", &PyLoader::Labels,
                             "The manifest's label map: [(label, name)], [] without a manifest")
      .def("sample", &PyLoader::Sample, py::arg("index"), py::arg("epoch") = 0,
           "sample(index, epoch=0): global sample `index` (0..num_samples-1, every rank's) as (image, label[, mask]\n"
           "[, boxes float32 [N, 4], box_labels int64 [N]]),\n"
           "in the batches' layout and dtype, its augmentation that of `epoch`; IndexError out of range")
      .def("global_order", &PyLoader::GlobalOrder, py::arg("epoch") = 0,
           "global_order(epoch=0): the epoch's order of global sample numbers over all ranks (uint64)")
      .def_property_readonly("skipped", &PyLoader::Skipped,
                             "Records skipped with on_error=\"skip\": [{file, record, offset, reason}], each once")
      .def_property_readonly("batch_shape", &PyLoader::Shape,
                             "Bytes of one full batch: (image bytes, labels, mask bytes)")
      .def_property_readonly("sample_labels", &PyLoader::SampleLabels,
                             "Every sample's label (int64, num_samples of them, sample order), read from the shards'\n"
                             "labels sidecars (FILE.labels, one small file a shard) where `shard convert` wrote them,\n"
                             "else from the records, without decoding an image; for class-balanced sampling\n"
                             "(docs/reader.md)")
      .def_property_readonly("num_samples", &PyLoader::NumSamples,
                             "Samples in the dataset (all ranks and workers; before drop_last)")
      .def_property_readonly(
          "normalization", &PyLoader::Normalization,
          "(mean, std): the per-channel values applied, mean=\"dataset\" resolved; ([], []) without");
}

}  // namespace libshard_py
