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
// DataLoss -> libshard.DataLossError (a subclass of OSError), IOError ->
// OSError, others -> RuntimeError. docs/reader.md has the whole API.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
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
    case StatusCode::kDataLoss: type = g_data_loss_error; break;
    case StatusCode::kIOError: type = PyExc_OSError; break;
    default: break;
  }
  PyErr_SetString(type, s.ToString().c_str());
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

// Take() for a parsed argument: a bad value is a ValueError whose message starts with the argument's name.
template <typename T>
T TakeArg(StatusOr<T> v, const char* arg) {
  if (!v.ok()) Raise(InvalidArgumentError(std::string(arg) + ": " + v.status().message()));
  return std::move(*v);
}

std::vector<std::string> Sources(const py::object& files) {
  if (py::isinstance<py::str>(files)) return {files.cast<std::string>()};
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(py::str(f).cast<std::string>());
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
  PyShardReader(const std::string& path, const std::string& io, bool verify_crc, bool use_index, bool direct_io) {
    reader::ShardReaderOptions o;
    o.io = TakeArg(reader::ParseIoMode(io), "io");
    o.verify_crc = verify_crc;
    o.use_index = use_index;
    o.direct_io = direct_io;
    reader_ = Take(reader::ShardReader::Open(path, o));
  }
  size_t Len() const { return reader_->size(); }
  std::string_view Record(int64_t i) {
    const int64_t n = static_cast<int64_t>(reader_->size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw py::index_error("record index out of range");
    std::string_view v;
    Check(reader_->Read(static_cast<size_t>(i), &buf_, &v));
    return v;
  }
  py::bytes GetItem(int64_t i) {
    auto v = Record(i);
    return py::bytes(v.data(), v.size());
  }
  py::dict Example(int64_t i) { return ExampleDict(Record(i)); }
  std::string Path() const { return reader_->path(); }
  bool IndexUsed() const { return reader_->index_source() == reader::IndexSource::kIndexFile; }

 private:
  std::unique_ptr<reader::ShardReader> reader_;
  reader::RecordBuffer buf_;
};

class PyShardWriter {
 public:
  PyShardWriter(const std::string& path, bool index) {
    record::WriterOptions o;
    o.write_index = index;
    writer_ = Take(record::RecordWriter::Create(path, o));
  }
  void WriteRecord(py::bytes data) {
    std::string_view v = data;
    Check(writer_->Write(v));
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
      if (py::isinstance<py::bytes>(first) || py::isinstance<py::str>(first)) {
        std::vector<std::string> owned;
        for (auto v : values) owned.push_back(py::isinstance<py::str>(v) ? v.cast<std::string>()
                                                                          : std::string(v.cast<py::bytes>()));
        std::vector<std::string_view> views(owned.begin(), owned.end());
        b.AddBytesList(key, views);
      } else if (py::isinstance<py::bool_>(first) || py::isinstance<py::int_>(first)) {
        std::vector<int64_t> ints;
        for (auto v : values) ints.push_back(v.cast<int64_t>());
        b.AddInt64List(key, ints.data(), ints.size());
      } else if (py::isinstance<py::float_>(first)) {
        std::vector<float> fl;
        for (auto v : values) fl.push_back(v.cast<float>());
        b.AddFloatList(key, fl.data(), fl.size());
      } else {
        throw py::value_error("feature " + key + ": values must be bytes, str, int or float");
      }
    }
    Check(writer_->Write(b.Serialize()));
  }
  void Close() { Check(writer_->Close()); }

 private:
  std::unique_ptr<record::RecordWriter> writer_;
};

class PyLoader {
 public:
  PyLoader(const py::object& files, size_t batch_size, std::pair<int, int> image_size, bool shuffle, uint64_t seed,
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
    reader::LoaderOptions o;
    o.batch_size = batch_size;
    o.height = image_size.first;
    o.width = image_size.second;
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
    std::vector<reader::BatchBuffers> bufs;
    if (!buffers.is_none()) {
      for (auto item : buffers) {
        py::tuple t = py::reinterpret_borrow<py::object>(item);
        if (t.size() < 2 || (masks && t.size() < 3)) throw py::value_error("buffers: (images, labels[, masks]) tuples");
        auto img = t[0].cast<py::array>();
        auto lab = t[1].cast<py::array>();
        CheckBuffer(img, PixelDtype(o.dtype), batch_size * o.height * o.width * channels, "images");
        CheckBuffer(lab, py::dtype::of<int64_t>(), batch_size, "labels");
        reader::BatchBuffers b{static_cast<uint8_t*>(img.mutable_data()), static_cast<int64_t*>(lab.mutable_data()),
                               nullptr};
        if (masks) {
          auto m = t[2].cast<py::array>();
          CheckBuffer(m, py::dtype::of<uint8_t>(), batch_size * o.height * o.width, "masks");
          b.masks = static_cast<uint8_t*>(m.mutable_data());
        }
        bufs.push_back(b);
        buffers_.append(t);
      }
    }
    auto ds = Take(reader::Dataset::Open(Sources(files), dopt));
    std::shared_ptr<const reader::Dataset> shared(std::move(ds));
    dataset_ = shared;
    loader_ = Take(reader::BatchLoader::Create(shared, o, bufs));
    opt_ = o;
  }

  size_t Len() const { return loader_->batches_per_epoch(); }

  PyLoader& Iter() {
    iter_epoch_ = loader_->position().epoch;
    return *this;
  }

  py::tuple Next() {
    if (loader_->position().epoch != iter_epoch_ || loader_->batches_per_epoch() == 0) throw py::stop_iteration();
    reader::Batch b;
    Status s;
    {
      py::gil_scoped_release release;
      s = loader_->Next(&b);
    }
    // The options were checked at construction: a sample the image layer calls invalid (an unknown format,
    // a bad raw dtype) is bad data.
    if (s.code() == StatusCode::kInvalidArgument) s = DataLossError(std::string(s.message()));
    Check(s);
    const py::ssize_t n = static_cast<py::ssize_t>(b.size), H = opt_.height, W = opt_.width, C = opt_.channels;
    const bool nchw = opt_.layout == reader::Layout::kNCHW;
    py::object images, labels, masks = py::none();
    if (buffers_.size() > 0) {
      py::tuple t = buffers_[b.slot];
      py::slice first(0, n, 1);
      const py::ssize_t B = static_cast<py::ssize_t>(opt_.batch_size);
      images = t[0].attr("reshape")(nchw ? py::make_tuple(B, C, H, W) : py::make_tuple(B, H, W, C))[first];
      labels = t[1].attr("reshape")(py::make_tuple(opt_.batch_size))[first];
      if (opt_.masks) masks = t[2].attr("reshape")(py::make_tuple(opt_.batch_size, H, W))[first];
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

  py::dict State() const {
    const reader::Position p = loader_->position();
    py::dict d;
    d["epoch"] = p.epoch;
    d["batch"] = p.batch;
    d["seed"] = opt_.order.seed;
    d["rank"] = opt_.order.rank;
    d["world_size"] = opt_.order.world_size;
    d["batches_per_epoch"] = loader_->batches_per_epoch();
    return d;
  }

  void Restore(const py::dict& state) {
    auto get = [&](const char* k) -> py::object {
      if (!state.contains(k)) throw py::value_error(std::string("state lacks \"") + k + "\"");
      return state[k];
    };
    if (get("seed").cast<uint64_t>() != opt_.order.seed || get("world_size").cast<int>() != opt_.order.world_size ||
        get("rank").cast<int>() != opt_.order.rank ||
        get("batches_per_epoch").cast<uint64_t>() != loader_->batches_per_epoch()) {
      throw py::value_error("state was saved by a loader with another seed, rank, world_size or dataset");
    }
    Check(loader_->Seek({get("epoch").cast<uint64_t>(), get("batch").cast<uint64_t>()}));
    iter_epoch_ = loader_->position().epoch;
  }

  py::list Labels() const {
    py::list out;
    for (const auto& l : dataset_->labels()) out.append(py::make_tuple(l.label, l.name));
    return out;
  }
  uint64_t NumSamples() const { return dataset_->size(); }

 private:
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

  static void CheckBuffer(const py::array& a, const py::dtype& dt, size_t count, const char* what) {
    if (!a.dtype().is(dt) || static_cast<size_t>(a.size()) != count || !(a.flags() & py::array::c_style) ||
        !a.writeable()) {
      throw py::value_error(std::string("buffers: ") + what + " must be a writable C-contiguous array of " +
                            std::to_string(count) + " " + dt.attr("name").cast<std::string>());
    }
  }

  std::shared_ptr<const reader::Dataset> dataset_;
  std::unique_ptr<reader::BatchLoader> loader_;
  reader::LoaderOptions opt_;
  py::list buffers_;
  uint64_t iter_epoch_ = 0;
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
      .def(py::init<const std::string&, const std::string&, bool, bool, bool>(), py::arg("path"),
           py::arg("io") = "mmap", py::arg("verify_crc") = true, py::arg("use_index") = true,
           py::arg("direct_io") = false)
      .def("__len__", &PyShardReader::Len)
      .def("__getitem__", &PyShardReader::GetItem, py::arg("index"), "The record's bytes")
      .def("example", &PyShardReader::Example, py::arg("index"),
           "The record as a dict: feature key -> list of bytes / int / float")
      .def_property_readonly("path", &PyShardReader::Path)
      .def_property_readonly("index_used", &PyShardReader::IndexUsed);

  py::class_<PyShardWriter>(m, "ShardWriter", "Writes a TFRecord shard of tf.train.Examples (and its .idx)")
      .def(py::init<const std::string&, bool>(), py::arg("path"), py::arg("index") = true)
      .def("write", &PyShardWriter::Write, py::arg("features"),
           "Writes one Example from {key: bytes | str | int | float | list}")
      .def("write_record", &PyShardWriter::WriteRecord, py::arg("data"))
      .def("close", &PyShardWriter::Close)
      .def("__enter__", [](PyShardWriter& w) -> PyShardWriter& { return w; })
      .def("__exit__", [](PyShardWriter& w, py::object, py::object, py::object) { w.Close(); });

  py::class_<PyLoader>(m, "Loader", "Batches of uint8 images and int64 labels from shards")
      .def(py::init<const py::object&, size_t, std::pair<int, int>, bool, uint64_t, int, int, int, const std::string&,
                    bool, int, const std::string&, size_t, const std::string&, bool, const std::string&,
                    const std::map<std::string, std::string>&, const std::string&, bool, int, int,
                    const py::object&, const std::string&, const std::string&, const py::object&,
                    const py::object&>(),
           py::arg("sources"), py::arg("batch_size"), py::kw_only(),
           py::arg("image_size") = std::pair<int, int>(224, 224),
           py::arg("shuffle") = false, py::arg("seed") = 0, py::arg("rank") = 0, py::arg("world_size") = 1,
           py::arg("threads") = 2, py::arg("augment") = "none", py::arg("drop_last") = false,
           py::arg("channels") = 3, py::arg("order") = "", py::arg("prefetch") = 2, py::arg("io") = "mmap",
           py::arg("verify_crc") = true, py::arg("split") = "",
           py::arg("keys") = std::map<std::string, std::string>(), py::arg("resize") = "center-crop",
           py::arg("masks") = false, py::arg("worker") = 0, py::arg("num_workers") = 1,
           py::arg("buffers") = py::none(), py::arg("layout") = "NHWC", py::arg("dtype") = "uint8",
           py::arg("mean") = py::none(), py::arg("std") = py::none())
      .def("__len__", &PyLoader::Len, "Batches per epoch")
      .def("__iter__", &PyLoader::Iter, py::return_value_policy::reference_internal)
      .def("__next__", &PyLoader::Next)
      .def("state_dict", &PyLoader::State, "The position of the next batch, as a dict")
      .def("load_state_dict", &PyLoader::Restore, py::arg("state"), "Continues at a state_dict()'s position")
      .def("state", &PyLoader::State, "Alias of state_dict()")
      .def("restore", &PyLoader::Restore, py::arg("state"), "Alias of load_state_dict()")
      .def_property_readonly("labels", &PyLoader::Labels, "The manifest's label map: [(label, name)]")
      .def_property_readonly("num_samples", &PyLoader::NumSamples);
}
