// `libshard._libshard`: the compiled core of the `libshard` Python package
// (python/libshard/ re-exports it; _libshard.pyi documents it).
//
//   import libshard
//   loader = libshard.Loader(["out/train-*.tfrecord"], 64, image_size=(224, 224),
//                            shuffle=True, seed=0, threads=2, augment="random-resized-crop")
//   for images, labels in loader:      # one epoch: numpy uint8 [B,H,W,C], int64 [B]
//       ...
//   saved = loader.state_dict(); ...; loader.load_state_dict(saved)
//
// Errors from the library (Status) become Python exceptions: InvalidArgument
// -> ValueError, NotFound -> FileNotFoundError, OutOfRange -> IndexError,
// ResourceExhausted -> MemoryError, DataLoss -> libshard.DataLossError (a
// subclass of OSError), IOError -> OSError, others -> RuntimeError.
// docs/reader.md has the whole API.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "libshard/reader/shard_reader.h"
#include "libshard/record/record_writer.h"

namespace py = pybind11;
using namespace libshard;  // NOLINT: binding file

namespace {

// libshard.DataLossError, created when the module is imported.
PyObject* g_data_loss_error = nullptr;

[[noreturn]] void Raise(const Status& s) {
  PyObject* type = PyExc_RuntimeError;
  switch (s.code()) {
    case StatusCode::kInvalidArgument: type = PyExc_ValueError; break;
    case StatusCode::kNotFound: type = PyExc_FileNotFoundError; break;
    case StatusCode::kOutOfRange: type = PyExc_IndexError; break;
    case StatusCode::kResourceExhausted: type = PyExc_MemoryError; break;
    case StatusCode::kDataLoss: type = g_data_loss_error; break;
    case StatusCode::kIOError: type = PyExc_OSError; break;
    default: break;
  }
  const std::string text = s.ToString();  // paths may hold any bytes
  PyObject* message = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (message != nullptr) {
    PyErr_SetObject(type, message);
    Py_DECREF(message);
  }
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}

template <typename T>
T Take(StatusOr<T> v) {
  if (!v.ok()) Raise(v.status());
  return std::move(*v);
}

std::string TypeName(py::handle obj) { return py::str(py::type::of(obj).attr("__name__")); }

bool IsPath(py::handle obj) {
  return py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || py::hasattr(obj, "__fspath__");
}

// A path argument as the file system's bytes: os.fsencode (str through the
// file system encoding with surrogateescape, bytes as they are, os.PathLike).
std::string FsPath(py::handle obj, const std::string& what) {
  if (!IsPath(obj)) throw py::type_error(what + ": expected str, bytes or os.PathLike, got " + TypeName(obj));
  return py::module_::import("os").attr("fsencode")(obj).cast<std::string>();
}

// A path for Python: os.fsdecode, so any bytes round-trip.
py::object FsDecode(const std::string& path) {
  return py::module_::import("os").attr("fsdecode")(py::bytes(path));
}

// Take() for a parsed argument: a bad value is a ValueError whose message starts with the argument's name.
template <typename T>
T TakeArg(StatusOr<T> v, const char* arg) {
  if (!v.ok()) Raise(InvalidArgumentError(std::string(arg) + ": " + v.status().message()));
  return std::move(*v);
}

std::vector<std::string> Sources(const py::object& files) {
  if (IsPath(files)) return {FsPath(files, "files")};
  if (!py::isinstance<py::iterable>(files)) {
    throw py::type_error("files: expected a path or a list of paths, got " + TypeName(files));
  }
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(FsPath(f, "files[" + std::to_string(out.size()) + "]"));
  return out;
}

py::dict ExampleDict(std::string_view record) {
  auto ex = Take(example::ExampleView::Parse(record));
  py::dict d;
  ex.ForEachFeature([&](std::string_view key, const example::FeatureView& f) {
    py::list values;
    switch (f.kind()) {
      case example::FeatureKind::kBytes:
        f.ForEachBytes([&](std::string_view v) { values.append(py::bytes(v.data(), v.size())); });
        break;
      case example::FeatureKind::kInt64:
        for (size_t i = 0; i < f.size(); ++i) values.append(f.int64(i));
        break;
      case example::FeatureKind::kFloat:
        for (size_t i = 0; i < f.size(); ++i) values.append(f.float_value(i));
        break;
      case example::FeatureKind::kNone: break;
    }
    d[py::str(key.data(), key.size())] = values;  // a duplicated key: the last wins
  });
  return d;
}

class PyShardReader {
 public:
  PyShardReader(const py::object& path, const std::string& io, bool verify_crc, bool use_index, bool direct_io) {
    reader::ShardReaderOptions o;
    o.io = TakeArg(reader::ParseIoMode(io), "io");
    o.verify_crc = verify_crc;
    o.use_index = use_index;
    o.direct_io = direct_io;
    reader_ = Take(reader::ShardReader::Open(FsPath(path, "path"), o));
  }
  size_t Len() const { return reader_->size(); }
  std::string_view Record(int64_t i) {
    const int64_t n = static_cast<int64_t>(reader_->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("record index out of range");
    std::string_view v;
    Check(reader_->ReadCopy(static_cast<size_t>(i), &buf_, &v));
    return v;
  }
  py::bytes GetItem(int64_t i) {
    auto v = Record(i);
    return py::bytes(v.data(), v.size());
  }
  py::dict Example(int64_t i) { return ExampleDict(Record(i)); }
  py::object Path() const { return FsDecode(reader_->path()); }
  bool IndexUsed() const { return reader_->index_source() == reader::IndexSource::kIndexFile; }

 private:
  std::unique_ptr<reader::ShardReader> reader_;
  reader::RecordBuffer buf_;
};

// Writes to a hidden temporary name beside `path` and renames it into place
// at close(): a failed write (a full disk) or a close error removes what was
// written and raises, so no empty or partial shard is left under `path`.
class PyShardWriter {
 public:
  PyShardWriter(const py::object& path, bool index) : path_(FsPath(path, "path")), index_(index) {
    const std::filesystem::path p(path_);
    temp_ = (p.parent_path() / ("." + p.filename().string() + ".partial")).string();
    record::WriterOptions o;
    o.write_index = index;
    writer_ = Take(record::RecordWriter::Create(temp_, o));
  }
  ~PyShardWriter() {
    if (writer_ == nullptr) return;
    const Status s = Finish();
    const std::string text = s.ok() ? "libshard.ShardWriter(" + path_ + ") was not closed; closed at garbage collection"
                                    : "libshard.ShardWriter(" + path_ + ") was not closed, and closing it at garbage "
                                      "collection failed (nothing written): " + s.ToString();
    if (PyErr_WarnEx(s.ok() ? PyExc_ResourceWarning : PyExc_RuntimeWarning, text.c_str(), 1) != 0) {
      PyErr_WriteUnraisable(Py_None);
    }
  }
  void WriteRecord(py::bytes data) {
    std::string_view v = data;
    Check(Writer()->Write(v), true);
  }
  // features: {key: bytes | str | int | float | list of one kind}
  void Write(const py::dict& features) {
    example::ExampleBuilder b;
    for (const auto& item : features) {
      const std::string key = py::str(item.first);
      py::object value = py::reinterpret_borrow<py::object>(item.second);
      py::list values;
      if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
        values = py::list(value);
      } else {
        values.append(value);
      }
      if (values.size() == 0) throw py::value_error("feature " + key + ": empty list (kind unknown)");
      py::handle first = values[0];
      auto check = [&](size_t i, py::handle v, bool ok, const char* kind) {
        if (!ok) {
          throw py::type_error("feature \"" + key + "\" value " + std::to_string(i) + ": expected " + kind +
                               " like the first value, got " + TypeName(v));
        }
      };
      if (py::isinstance<py::bytes>(first) || py::isinstance<py::str>(first)) {
        std::vector<std::string> owned;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::bytes>(v) || py::isinstance<py::str>(v), "bytes or str");
          owned.push_back(py::isinstance<py::str>(v) ? v.cast<std::string>() : std::string(v.cast<py::bytes>()));
        }
        std::vector<std::string_view> views(owned.begin(), owned.end());
        b.AddBytesList(key, views);
      } else if (py::isinstance<py::int_>(first)) {  // bool included
        std::vector<int64_t> ints;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::int_>(v), "an int");
          const long long n = PyLong_AsLongLong(v.ptr());
          if (n == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            throw py::value_error("feature \"" + key + "\" value " + std::to_string(i) + ": " +
                                  std::string(py::repr(v)) + " does not fit in an int64");
          }
          ints.push_back(n);
        }
        b.AddInt64List(key, ints.data(), ints.size());
      } else if (py::isinstance<py::float_>(first)) {
        std::vector<float> fl;
        for (size_t i = 0; i < values.size(); ++i) {
          py::handle v = values[i];
          check(i, v, py::isinstance<py::float_>(v) || py::isinstance<py::int_>(v), "a float");
          fl.push_back(v.cast<float>());
        }
        b.AddFloatList(key, fl.data(), fl.size());
      } else {
        throw py::type_error("feature \"" + key + "\": values must be bytes, str, int or float, got " +
                             TypeName(first));
      }
    }
    Check(Writer()->Write(b.Serialize()), true);
  }
  void Close() {
    if (writer_ != nullptr) Check(Finish(), false);
  }
  // Leaves nothing behind (a `with` block that raised).
  void Abort() {
    if (writer_ == nullptr) return;
    writer_.reset();
    RemoveTemp();
  }
  void Exit(const py::object& exc_type) {
    if (exc_type.is_none()) {
      Close();
    } else {
      Abort();
    }
  }

 private:
  record::RecordWriter* Writer() {
    if (writer_ == nullptr) throw py::value_error("libshard.ShardWriter(" + path_ + ") is closed");
    return writer_.get();
  }
  void Check(const Status& s, bool abort_on_error) {
    if (s.ok()) return;
    if (abort_on_error) Abort();
    Raise(s);
  }
  // Closes and publishes, or removes the temporary files on error.
  Status Finish() {
    Status s = writer_->Close();
    writer_.reset();
    std::error_code ec;
    if (s.ok() && index_) {
      std::filesystem::rename(temp_ + ".idx", path_ + ".idx", ec);
      if (ec) s = IOError(path_ + ".idx: cannot rename into place: " + ec.message());
    }
    if (s.ok()) {
      std::filesystem::rename(temp_, path_, ec);
      if (ec) s = IOError(path_ + ": cannot rename into place: " + ec.message());
    }
    if (!s.ok()) RemoveTemp();
    return s;
  }
  void RemoveTemp() {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    std::filesystem::remove(temp_ + ".idx", ec);
  }

  std::string path_, temp_;
  bool index_ = true;
  std::unique_ptr<record::RecordWriter> writer_;
};

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

// Runs f() (C++ only, not throwing) with the GIL released, and takes the GIL
// back outside any destructor: at interpreter exit a daemon thread that takes
// the GIL is ended by pthread_exit, whose unwinding must not cross a noexcept
// function such as ~gil_scoped_release (std::terminate).
template <typename F>
auto WithoutGil(const F& f) -> decltype(f()) {
  PyThreadState* state = PyEval_SaveThread();
  auto result = f();
  PyEval_RestoreThread(state);
  return result;
}

class PyLoader {
 public:
  PyLoader(const py::object& files, size_t batch_size, const py::object& image_size, bool shuffle, uint64_t seed,
           int rank, int world_size, int threads, const std::string& augment, bool drop_last, int channels,
           const std::string& order, size_t prefetch, const std::string& io, bool verify_crc,
           const std::string& split, const std::map<std::string, std::string>& keys, const std::string& resize,
           bool masks, int worker, int num_workers, const py::object& buffers, const std::string& layout,
           const std::string& dtype, const py::object& mean, const py::object& std) {
    reader::DatasetOptions dopt;
    dopt.shard.io = TakeArg(reader::ParseIoMode(io), "io");
    dopt.shard.verify_crc = verify_crc;
    dopt.split = split;
    for (const auto& [k, v] : keys) {
      if (k == "image") dopt.keys.image = v;
      else if (k == "label") dopt.keys.label = v;
      else if (k == "format") dopt.keys.format = v;
      else if (k == "shape") dopt.keys.shape = v;
      else if (k == "dtype") dopt.keys.dtype = v;
      else if (k == "mask") dopt.keys.mask = v;
      else if (k == "mask_format") dopt.keys.mask_format = v;
      else throw py::value_error("keys: unknown key role \"" + k + "\"");
    }
    reader::BatchLoaderOptions o;
    o.batch_size = batch_size;
    std::tie(o.height, o.width) = ImageSize(image_size);
    o.channels = channels;
    o.threads = threads;
    o.prefetch = prefetch;
    o.augment = TakeArg(reader::ParseAugment(augment), "augment");
    o.resize = TakeArg(image::ParseResizeMode(resize), "resize");
    o.masks = masks;
    o.layout = Take(reader::ParseLayout(layout));
    o.dtype = Take(reader::ParsePixelType(dtype));
    o.mean = Floats(mean, "mean");
    o.std = Floats(std, "std");
    // Checked here too so that a bad mean / std is reported before the sources are opened.
    Check(reader::SampleConverter::Create(o.layout, o.dtype, o.mean, o.std, o.height, o.width, o.channels).status());
    if (!order.empty()) {
      o.order.kind = TakeArg(reader::ParseOrderKind(order), "order");
    } else {
      o.order.kind = shuffle ? reader::OrderKind::kShuffle : reader::OrderKind::kSequential;
    }
    o.order.seed = seed;
    o.order.rank = rank;
    o.order.world_size = world_size;
    o.order.drop_last = drop_last;
    o.order.worker = worker;
    o.order.num_workers = num_workers;
    std::vector<reader::BatchBuffers> bufs = HoldBuffers(buffers, o);
    auto ds = Take(reader::Dataset::Open(Sources(files), dopt));
    std::shared_ptr<const reader::Dataset> shared(std::move(ds));
    dataset_ = shared;
    loader_ = Take(reader::BatchLoader::Create(shared, o, bufs));
    opt_ = o;
    batches_per_epoch_ = loader_->batches_per_epoch();
  }

  ~PyLoader() {
    // The loader's threads write into the held buffers: stop them first.
    if (loader_ == nullptr) return;
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
  // where that pass started. After restore() or plain next() calls, a pass
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

  py::dict State() {
    auto lock = Lock();
    const reader::Position p = Open().position();
    py::dict d;
    d["epoch"] = p.epoch;
    d["batch"] = p.batch;
    d["seed"] = opt_.order.seed;
    d["rank"] = opt_.order.rank;
    d["world_size"] = opt_.order.world_size;
    d["batches_per_epoch"] = batches_per_epoch_;
    return d;
  }

  void Restore(const py::dict& state) {
    auto lock = Lock();
    Open();
    const uint64_t epoch = StateInt(state, "epoch", reader::Position::kMaxEpoch);
    const uint64_t batch = StateInt(state, "batch", batches_per_epoch_);
    if (StateInt(state, "seed", ~uint64_t{0}) != opt_.order.seed ||
        StateInt(state, "world_size", ~uint64_t{0}) != static_cast<uint64_t>(opt_.order.world_size) ||
        StateInt(state, "rank", ~uint64_t{0}) != static_cast<uint64_t>(opt_.order.rank) ||
        StateInt(state, "batches_per_epoch", ~uint64_t{0}) != batches_per_epoch_) {
      throw py::value_error("state was saved by a loader with another seed, rank, world_size or dataset");
    }
    Seek({epoch, batch});
    pass_active_ = false;
  }

  // Stops and joins the loader's threads and lets go of the buffers; later
  // use raises ValueError. Idempotent.
  void Close() {
    auto lock = Lock();
    if (loader_ != nullptr) {
      WithoutGil([&] {
        loader_.reset();
        return true;
      });
    }
    held_.clear();
  }

  py::list Labels() const {
    py::list out;
    for (const auto& l : dataset_->labels()) out.append(py::make_tuple(l.label, l.name));
    return out;
  }
  uint64_t NumSamples() const { return dataset_->size(); }

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
    Status s;
    for (;;) {
      bool ready = false;
      s = WithoutGil([&] { return loader_->NextFor(&b, std::chrono::milliseconds(100), &ready); });
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
      const std::vector<py::ssize_t> shape = nchw ? std::vector<py::ssize_t>{n, C, H, W}
                                                  : std::vector<py::ssize_t>{n, H, W, C};
      py::array im(PixelDtype(opt_.dtype), shape);
      std::memcpy(im.mutable_data(), b.images, static_cast<size_t>(im.nbytes()));
      py::array_t<int64_t> lb(n);
      std::memcpy(lb.mutable_data(), b.labels, static_cast<size_t>(n) * sizeof(int64_t));
      images = im;
      labels = lb;
      if (opt_.masks) {
        py::array_t<uint8_t> mk({n, H, W});
        std::memcpy(mk.mutable_data(), b.masks, static_cast<size_t>(n * H * W));
        masks = mk;
      }
    }
    if (opt_.masks) return py::make_tuple(images, labels, masks);
    return py::make_tuple(images, labels);
  }

  static uint64_t StateInt(const py::dict& state, const char* key, uint64_t max) {
    if (!state.contains(key)) throw py::value_error(std::string("state lacks \"") + key + "\"");
    py::object v = state[key];
    const std::string bad = std::string("state[\"") + key + "\"] must be an integer in 0.." + std::to_string(max) +
                            ", got " + std::string(py::repr(v));
    if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) throw py::value_error(bad);
    const unsigned long long n = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw py::value_error(bad);
    }
    if (n > max) throw py::value_error(bad);
    return n;
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
        throw py::value_error(what + " must be a writable C-contiguous array of " +
                              std::to_string(count) + " " + dt.attr("name").cast<std::string>());
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

  // None -> empty; a sequence of numbers -> its values; else ValueError naming `what`.
  static std::vector<double> Floats(const py::object& v, const char* what) {
    if (v.is_none()) return {};
    try {
      return v.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
      throw py::value_error(std::string(what) + ": expected a sequence of numbers (one per channel) or None, got " +
                            py::repr(v).cast<std::string>());
    }
  }

  std::shared_ptr<const reader::Dataset> dataset_;
  std::unique_ptr<reader::BatchLoader> loader_;  // null once closed
  reader::BatchLoaderOptions opt_;
  uint64_t batches_per_epoch_ = 0;
  std::vector<HeldBuffers> held_;
  std::unique_ptr<std::timed_mutex> mu_ = std::make_unique<std::timed_mutex>();
  pid_t mu_pid_ = getpid();
  // The current pass of `for` (see Iter).
  uint64_t pass_id_ = 0;
  reader::Position pass_start_;
  bool pass_active_ = false;
};

}  // namespace

PYBIND11_MODULE(_libshard, m) {
  m.doc() = "libshard's compiled core: TFRecord shards to training batches (docs/reader.md)";
  m.attr("__version__") = LIBSHARD_VERSION;
  g_data_loss_error = PyErr_NewExceptionWithDoc(
      "libshard.DataLossError",
      "Corrupt or truncated data (a bad CRC, a cut record, an undecodable image); the message names the file and "
      "the byte offset. A subclass of OSError; plain OSError is left for I/O failures.",
      PyExc_OSError, nullptr);
  if (g_data_loss_error == nullptr) throw py::error_already_set();
  m.attr("DataLossError") = py::handle(g_data_loss_error);

  py::class_<PyShardReader>(m, "ShardReader", "Random access to the records of one TFRecord shard")
      .def(py::init<const py::object&, const std::string&, bool, bool, bool>(), py::arg("path"),
           py::arg("io") = "mmap", py::arg("verify_crc") = true, py::arg("use_index") = true,
           py::arg("direct_io") = false, "path: str, bytes or os.PathLike (any bytes, as os.fsencode gives)")
      .def("__len__", &PyShardReader::Len)
      .def("__getitem__", &PyShardReader::GetItem, py::arg("index"), "The record's bytes")
      .def("example", &PyShardReader::Example, py::arg("index"),
           "The record as a dict: feature key -> list of bytes / int / float")
      .def_property_readonly("path", &PyShardReader::Path, "The file's path (str, as os.fsdecode gives)")
      .def_property_readonly("index_used", &PyShardReader::IndexUsed);

  py::class_<PyShardWriter>(m, "ShardWriter",
                            "Writes a TFRecord shard of tf.train.Examples (and its .idx). The records go to a hidden\n"
                            "temporary file that close() renames to `path`; an error removes it and raises. A writer\n"
                            "never closed is closed at garbage collection with a ResourceWarning.")
      .def(py::init<const py::object&, bool>(), py::arg("path"), py::arg("index") = true)
      .def("write", &PyShardWriter::Write, py::arg("features"),
           "Writes one Example from {key: bytes | str | int | float | list}")
      .def("write_record", &PyShardWriter::WriteRecord, py::arg("data"))
      .def("close", &PyShardWriter::Close, "Publishes the shard under its path; raises on an error")
      .def("__enter__", [](PyShardWriter& w) -> PyShardWriter& { return w; })
      .def("__exit__", [](PyShardWriter& w, py::object type, py::object, py::object) { w.Exit(type); },
           "close(), or when the block raised, removes what was written");

  py::class_<PyEpochIterator>(m, "EpochIterator", "One pass over an epoch of a Loader (what iter(loader) returns)")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](PyEpochIterator& it) { return it.loader.cast<PyLoader&>().NextInPass(it.pass); });

  py::class_<PyLoader>(m, "Loader",
                       "Batches of uint8 images and int64 labels from shards (docs/reader.md).\n\n"
                       "`for batch in loader` runs to the end of the current epoch; a pass left unfinished (a\n"
                       "peek with next(iter(loader)), a break) is replayed by the next iter(). Plain next(loader)\n"
                       "streams batches across epochs (Keras-style generators). close() or a `with` block stops\n"
                       "the loader's threads. One Loader may be used from several threads (one batch at a\n"
                       "time) and in a fork child (its threads restart there).")
      .def(py::init<const py::object&, size_t, const py::object&, bool, uint64_t, int, int, int, const std::string&,
                    bool, int, const std::string&, size_t, const std::string&, bool, const std::string&,
                    const std::map<std::string, std::string>&, const std::string&, bool, int, int,
                    const py::object&, const std::string&, const std::string&, const py::object&,
                    const py::object&>(),
           py::arg("sources"), py::arg("batch_size"), py::kw_only(),
           py::arg("image_size") = py::make_tuple(224, 224),
           py::arg("shuffle") = false, py::arg("seed") = 0, py::arg("rank") = 0, py::arg("world_size") = 1,
           py::arg("threads") = 2, py::arg("augment") = "none", py::arg("drop_last") = false,
           py::arg("channels") = 3, py::arg("order") = "", py::arg("prefetch") = 2, py::arg("io") = "mmap",
           py::arg("verify_crc") = true, py::arg("split") = "",
           py::arg("keys") = std::map<std::string, std::string>(), py::arg("resize") = "center-crop",
           py::arg("masks") = false, py::arg("worker") = 0, py::arg("num_workers") = 1,
           py::arg("buffers") = py::none(), py::arg("layout") = "NHWC", py::arg("dtype") = "uint8",
           py::arg("mean") = py::none(), py::arg("std") = py::none(),
           "sources: paths (str, bytes, os.PathLike), folders, globs or a manifest.json; image_size: an int or\n"
           "(height, width); split: the manifest's split (required when it has several)")
      .def("__len__", &PyLoader::Len, "Batches per epoch")
      .def("__iter__", [](py::object self) { return self.cast<PyLoader&>().Iter(self); },
           "A pass over the rest of the current epoch (see the class doc)")
      .def("__next__", &PyLoader::Next, "The next batch of the stream, across epochs")
      .def("state_dict", &PyLoader::State, "The position of the next batch, as a dict")
      .def("load_state_dict", &PyLoader::Restore, py::arg("state"),
           "Continues at a state_dict()'s position; ValueError for values out of range or from another loader")
      .def("state", &PyLoader::State, "Alias of state_dict()")
      .def("restore", &PyLoader::Restore, py::arg("state"), "Alias of load_state_dict()")
      .def("close", &PyLoader::Close, "Stops and joins the loader's threads; later use raises ValueError")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyLoader& l, py::object, py::object, py::object) { l.Close(); })
      .def_property_readonly("labels", &PyLoader::Labels,
                             "The manifest's label map: [(label, name)], [] without a manifest")
      .def_property_readonly("num_samples", &PyLoader::NumSamples,
                             "Samples in the dataset (all ranks and workers; before drop_last)");
}
