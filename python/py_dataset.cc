// libshard.Dataset (py_dataset.h).
#include "py_dataset.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "libshard/reader/sample_labels.h"
#include "py_boxes.h"
#include "py_loader_options.h"

namespace libshard_py {

using namespace libshard;  // NOLINT: binding file

py::tuple SampleTuple(const reader::SampleDecoder& decoder, uint64_t n, const py::object& index,
                      const py::object& epoch) {
  if (n == 0) throw py::index_error("sample: the dataset is empty");
  const uint64_t i = IntArg(index, "index", 0, ~uint64_t{0});
  if (i >= n) throw py::index_error("index " + std::to_string(i) + " out of range (" + std::to_string(n) + " samples)");
  const uint64_t e = IntArg(epoch, "epoch", 0, reader::Position::kMaxEpoch);
  const reader::BatchLoaderOptions& o = decoder.options();
  const py::ssize_t H = o.height, W = o.width, C = o.channels;
  const bool nchw = o.layout == reader::Layout::kNCHW;
  py::array image(py::dtype(reader::PixelTypeName(o.dtype)),
                  nchw ? std::vector<py::ssize_t>{C, H, W} : std::vector<py::ssize_t>{H, W, C});
  py::array_t<uint8_t> mask(o.masks ? std::vector<py::ssize_t>{H, W} : std::vector<py::ssize_t>{0});
  int64_t label = -1;
  uint8_t* dst = static_cast<uint8_t*>(image.mutable_data());
  uint8_t* mdst = o.masks ? mask.mutable_data() : nullptr;
  reader::SampleBoxes boxes;
  Status s = WithoutGil([&] { return decoder.Decode(i, e, dst, mdst, &label, nullptr, &boxes); });
  if (s.code() == StatusCode::kInvalidArgument) s = DataLossError(std::string(s.message()));
  Check(s);
  py::list item;
  item.append(image);
  item.append(label);
  if (o.masks) item.append(mask);
  if (o.boxes)
    for (auto a : SampleBoxArrays(boxes)) item.append(a);
  return py::tuple(item);
}

py::list LabelList(const reader::Dataset& ds) {
  py::list out;
  for (const auto& l : ds.labels()) out.append(py::make_tuple(l.label, l.name));
  return out;
}

py::object SampleLabelArray(const reader::Dataset& ds, int threads) {
  std::vector<int64_t> v = Take(WithoutGil([&] { return reader::ReadSampleLabels(ds, threads); }));
  py::array_t<int64_t> a(static_cast<py::ssize_t>(v.size()), v.data());
  a.attr("flags").attr("writeable") = false;
  return a;
}

py::list LabelsAsList(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& labels) {
  const int64_t* v = labels.data();
  const size_t n = static_cast<size_t>(labels.size());
  int64_t lo = 0, hi = -1;
  for (size_t i = 0; i < n; ++i) {
    lo = i == 0 ? v[i] : std::min(lo, v[i]);
    hi = i == 0 ? v[i] : std::max(hi, v[i]);
  }
  // A label a class: few distinct values, so one int object each, shared by
  // the list's items (ndarray.tolist() makes one per item: 50 ns each).
  constexpr int64_t kMaxSpan = int64_t{1} << 20;
  if (n > 0 && (hi < lo || static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) >= static_cast<uint64_t>(kMaxSpan))) {
    return labels.attr("tolist")();
  }
  std::vector<py::object> ints(n == 0 ? 0 : static_cast<size_t>(hi - lo + 1));
  py::list out(static_cast<py::ssize_t>(n));
  for (size_t i = 0; i < n; ++i) {
    py::object& o = ints[static_cast<size_t>(v[i] - lo)];
    if (!o) o = py::int_(v[i]);
    PyList_SET_ITEM(out.ptr(), static_cast<py::ssize_t>(i), o.inc_ref().ptr());
  }
  return out;
}

namespace {

// Keywords of libshard.Loader that are not the shard set's or one sample's.
constexpr const char* kNotDatasetKeywords[] = {"batch_size", "shuffle", "order", "rank", "world_size", "drop_last",
                                               "worker", "num_workers", "block_size", "window_blocks", "prefetch",
                                               "buffers", "slots", "extras", "on_error"};

}  // namespace

PyDataset::PyDataset(const py::object& sources, const py::kwargs& kwargs) {
  for (const char* k : kNotDatasetKeywords) {
    if (kwargs.contains(k)) {
      throw py::value_error(std::string(k) +
                            ": not an option of libshard.Dataset (it reads one sample by number; the order and "
                            "partition are libshard.Order's, batches libshard.Loader's)");
    }
  }
  const LoaderArgs args = LoaderArgsFrom(kwargs);
  LoaderConfig config = ParseLoaderArgs(py::int_(1), args);
  dataset_ = std::shared_ptr<const reader::Dataset>(OpenLoaderDataset(sources, config));
  reader::BatchLoaderOptions& o = config.loader;
  Check(reader::ResolveStoredShape(*dataset_, &o));
  ResolveDatasetStatistics(*dataset_, config, &o);
  decoder_ = Take(reader::SampleDecoder::Create(dataset_, o));
}

void BindDataset(py::module_& m) {
  m.def("_labels_list", &LabelsAsList, py::arg("labels"),
        "labels.tolist() for an int64 array of few distinct values (class labels): the same list, built with one "
        "int object a value instead of one an item");
  py::class_<PyDataset, std::shared_ptr<PyDataset>> cls(
      m, "Dataset",
      "The shard set and one sample by its global number, without a Loader, its ring or its threads\n"
      "(docs/reader.md): len(ds), ds[i] / ds.sample(i, epoch) decoded on the calling thread (GIL released)\n"
      "with the Loader's geometry, augmentation from (seed, epoch, i), layout and dtype; labels and\n"
      "sample_labels without decoding. libshard.Order(ds, ...) gives its order and partition.");
  {
    py::options options;
    options.disable_function_signatures();
    cls.def(py::init([](const py::object& sources, const py::kwargs& kwargs) {
              return std::make_shared<PyDataset>(sources, kwargs);
            }),
            py::arg("sources"),
            "__init__(self, sources, **options) -> None\n\n"
            "sources as for Loader; options: Loader's keywords for the shard set and one sample (image_size,\n"
            "channels, augment, resize, layout, dtype, mean, std, masks, boxes, max_boxes, box_min_visible,\n"
            "dct_scale, split, keys, io, verify_crc, cache_dir, cache_limit, weights, samples_per_epoch,\n"
            "label_maps, threads, seed); ValueError for the order's, the partition's and the batch's\n"
            "(shuffle, order, rank, world_size, ... : libshard.Order's; batch_size, buffers, ...: Loader's)");
  }
  cls.def("__len__", [](const PyDataset& d) { return d.dataset()->size(); }, "Samples in the dataset")
      .def(
          "__getitem__",
          [](const PyDataset& d, const py::object& index) {
            if (py::isinstance<py::bool_>(index) || !PyIndex_Check(index.ptr())) {
              throw py::type_error("index: expected an integer, got " + TypeName(index));
            }
            const int64_t n = static_cast<int64_t>(d.dataset()->size());
            int64_t i = index.cast<int64_t>();
            if (i < 0) i += n;
            if (i < 0) throw py::index_error("index " + std::string(py::repr(index)) + " out of range (" +
                                             std::to_string(n) + " samples)");
            return SampleTuple(d.decoder(), d.dataset()->size(), py::int_(i), py::int_(0));
          },
          py::arg("index"), "ds[i]: sample(i) (negative i from the end)")
      .def(
          "sample",
          [](const PyDataset& d, const py::object& index, const py::object& epoch) {
            return SampleTuple(d.decoder(), d.dataset()->size(), index, epoch);
          },
          py::arg("index"), py::arg("epoch") = 0,
          "sample(index, epoch=0): global sample `index` as (image, label[, mask][, boxes float32 [N, 4],\n"
          "box_labels int64 [N]]), its augmentation that of `epoch`; IndexError out of range")
      .def_property_readonly("num_samples", [](const PyDataset& d) { return d.dataset()->size(); },
                             "Samples in the dataset (len(ds))")
      .def_property_readonly("labels", [](const PyDataset& d) { return LabelList(*d.dataset()); },
                             "The manifest's label map: [(label, name)], [] without a manifest")
      .def_property_readonly(
          "sample_labels",
          [](const PyDataset& d) { return SampleLabelArray(*d.dataset(), d.decoder().options().threads); },
          "Every sample's label (int64, sample order), from the shards' labels sidecars where the converter wrote\n"
          "them, else read from the records; no image is decoded")
      .def_property_readonly("identity", [](const PyDataset& d) { return d.dataset()->Identity(); },
                             "What a saved position names the dataset by (state_dict()[\"dataset\"])")
      .def_property_readonly("seed", &PyDataset::seed, "The augmentation seed (Order's default seed)")
      .def_property_readonly(
          "image_shape",
          [](const PyDataset& d) {
            const reader::BatchLoaderOptions& o = d.decoder().options();
            return o.layout == reader::Layout::kNCHW ? py::make_tuple(o.channels, o.height, o.width)
                                                     : py::make_tuple(o.height, o.width, o.channels);
          },
          "One sample's image shape, (H, W, C) or (C, H, W) with layout=\"NCHW\"");
}

}  // namespace libshard_py
