// libshard.Order: reader::SampleOrder bound whole -- the epoch's global
// order, a rank's samples and batches, the samples all ranks have consumed:
// the project's one partition rule (reader/sample_order.h), which the
// samplers and ShardDataset's state_dict use instead of arithmetic of their own.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "libshard/reader/global_order.h"
#include "libshard/reader/mixture.h"
#include "libshard/reader/sample_order.h"
#include "py_common.h"
#include "py_dataset.h"
#include "py_loader_options.h"

namespace libshard_py {
namespace {

using namespace libshard;  // NOLINT: binding file

class PyOrder {
 public:
  // `source`: a sample count (an int) or a libshard.Dataset (its size, its
  // mixture's order with weights=, its identity; seed=None takes its seed).
  PyOrder(const py::object& source, const py::object& batch_size, const py::kwargs& kwargs) {
    for (auto item : kwargs) {
      const std::string k = py::str(item.first);
      static const char* const kKnown[] = {"rank",        "world_size",    "shuffle",   "order",  "seed",
                                           "block_size",  "window_blocks", "drop_last", "worker", "num_workers"};
      bool known = false;
      for (const char* n : kKnown) known = known || k == n;
      if (!known) {
        throw py::type_error("Order() got an unexpected keyword argument '" + k +
                             "' (rank, world_size, shuffle, order, seed, block_size, window_blocks, drop_last, "
                             "worker, num_workers)");
      }
    }
    py::kwargs args;
    for (auto item : kwargs) args[item.first] = item.second;
    std::shared_ptr<const reader::GlobalOrderSource> mixture;
    if (py::isinstance<PyDataset>(source)) {
      const PyDataset& d = source.cast<const PyDataset&>();
      samples_ = d.dataset()->size();
      mixture = d.dataset()->mixture();
      identity_ = d.dataset()->Identity();
      has_identity_ = true;
      if (!args.contains("seed") || args["seed"].is_none()) args["seed"] = py::int_(d.seed());
    } else {
      samples_ = IntArg(source, "dataset", 0, ~uint64_t{0});
      if (args.contains("seed") && args["seed"].is_none()) args["seed"] = py::int_(0);
    }
    if (args.contains("order") && args["order"].is_none()) PyDict_DelItemString(args.ptr(), "order");
    const LoaderConfig config = ParseLoaderArgs(batch_size, LoaderArgsFrom(args));
    options_ = config.loader.order;
    options_.batch_size = config.loader.batch_size;
    options_.global_order = mixture;
    order_ = Take(reader::SampleOrder::Create(samples_, options_));
  }

  const reader::SampleOrder& order() const { return order_; }
  bool picklable() const { return options_.global_order == nullptr; }

  uint64_t Start(const py::object& start) const { return IntArg(start, "start", 0, order_.dataset_size()); }
  static uint64_t Epoch(const py::object& epoch) { return IntArg(epoch, "epoch", 0, (uint64_t{1} << 63) - 1); }

  uint64_t Consumed(const py::object& start, const py::object& batches) const {
    const uint64_t s = Start(start);
    const uint64_t b = IntArg(batches, "batches", 0, ~uint64_t{0});
    const uint64_t left = order_.rank_batches(s);
    if (b > left) {
      throw py::value_error("batch: " + std::to_string(b) + " batches consumed is outside the epoch's " +
                            std::to_string(left) + " batches from sample " + std::to_string(s));
    }
    return order_.GlobalConsumed(s, b);
  }

  py::dict Identity() const {
    py::dict d;
    d["seed"] = options_.seed;
    d["order"] = reader::OrderKindName(options_.kind);
    d["block_size"] = options_.block_size;
    d["window_blocks"] = options_.window_blocks;
    d["permutation"] = reader::kPermutationName;
    d["samples"] = order_.dataset_size();
    if (has_identity_) d["dataset"] = identity_;
    return d;
  }

  py::tuple GetState() const {
    if (!picklable()) {
      throw py::type_error("a mixture's Order does not pickle (its order is the Dataset's): make it in each process");
    }
    const reader::OrderOptions& o = options_;
    return py::make_tuple(samples_, o.batch_size, reader::OrderKindName(o.kind), o.seed, o.block_size,
                          o.window_blocks, o.rank, o.world_size, o.drop_last, o.worker, o.num_workers,
                          has_identity_ ? py::object(py::str(identity_)) : py::object(py::none()));
  }

  static std::unique_ptr<PyOrder> FromState(const py::tuple& t) {
    if (t.size() != 12) throw py::value_error("Order: not a pickled Order");
    py::kwargs k;
    k["order"] = t[2];
    k["seed"] = t[3];
    k["block_size"] = t[4];
    k["window_blocks"] = t[5];
    k["rank"] = t[6];
    k["world_size"] = t[7];
    k["drop_last"] = t[8];
    k["worker"] = t[9];
    k["num_workers"] = t[10];
    auto o = std::make_unique<PyOrder>(t[0], t[1], k);
    if (!t[11].is_none()) {
      o->identity_ = t[11].cast<std::string>();
      o->has_identity_ = true;
    }
    return o;
  }

 private:
  uint64_t samples_ = 0;
  reader::OrderOptions options_;
  reader::SampleOrder order_;
  std::string identity_;  // the Dataset's, when made from one
  bool has_identity_ = false;
};

py::array_t<uint64_t> Array(const std::vector<uint64_t>& v) {
  return py::array_t<uint64_t>(static_cast<py::ssize_t>(v.size()), v.data());
}

}  // namespace

void BindOrder(py::module_& m) {
  py::class_<PyOrder> cls(
      m, "Order",
      "An epoch's sample order and its partition among data-parallel ranks and loader workers: the Loader's\n"
      "rule (docs/reader.md, \"Partitioning\"), without a Loader. The epoch's global order (sequential,\n"
      "shuffle or block-shuffle from (seed, epoch); a mixture's interleave for a Dataset made with weights=)\n"
      "is consumed in global batches of batch_size * world_size, rank r taking the r-th batch_size slice of\n"
      "each; without drop_last the order is padded to a multiple of world_size from its start. An epoch may\n"
      "start at a global offset `start` (elastic resume: the rest cut anew). Pure arithmetic; thread-safe.");
  {
    py::options options;
    options.disable_function_signatures();
    cls.def(py::init([](const py::object& dataset, const py::object& batch_size, const py::kwargs& kwargs) {
              return std::make_unique<PyOrder>(dataset, batch_size, kwargs);
            }),
            py::arg("dataset"), py::arg("batch_size") = 1,
            "__init__(self, dataset, batch_size=1, *, rank=0, world_size=1, shuffle=False, order=None, seed=None, "
            "block_size=256, window_blocks=4, drop_last=False, worker=0, num_workers=1) -> None\n\n"
            "dataset: a libshard.Dataset (its size, its mixture's order with weights=, its identity; seed=None:\n"
            "its seed) or a number of samples (seed=None: 0); the other arguments as for libshard.Loader");
  }
  cls.def("__len__", [](const PyOrder& o) { return o.order().samples_per_rank(0); },
          "This rank's samples in a whole epoch (padding included; before the worker split)")
      .def_property_readonly("samples", [](const PyOrder& o) { return o.order().dataset_size(); },
                             "Samples in the epoch's global order")
      .def_property_readonly("identity", &PyOrder::Identity,
                             "What defines the epoch's order, as a saved state holds it: {seed, order, block_size,\n"
                             "window_blocks, permutation, samples[, dataset]}")
      .def(
          "global_order",
          [](const PyOrder& o, const py::object& epoch) {
            const uint64_t e = PyOrder::Epoch(epoch);
            return Array(WithoutGil([&] { return o.order().GlobalOrder(e); }));
          },
          py::arg("epoch") = 0, "global_order(epoch=0): the epoch's order of global sample numbers (uint64)")
      .def(
          "epoch_samples",
          [](const PyOrder& o, const py::object& epoch, const py::object& start) {
            const uint64_t e = PyOrder::Epoch(epoch), s = o.Start(start);
            return Array(WithoutGil([&] { return o.order().EpochSamples(e, s); }));
          },
          py::arg("epoch") = 0, py::arg("start") = 0,
          "epoch_samples(epoch=0, start=0): this rank's global sample numbers (uint64) in `epoch` from global\n"
          "offset `start`, its batches one after another (before the worker split)")
      .def(
          "samples_per_rank", [](const PyOrder& o, const py::object& start) {
            return o.order().samples_per_rank(o.Start(start));
          },
          py::arg("start") = 0, "samples_per_rank(start=0): this rank's samples from `start` (padding included)")
      .def(
          "rank_batches", [](const PyOrder& o, const py::object& start) {
            return o.order().rank_batches(o.Start(start));
          },
          py::arg("start") = 0, "rank_batches(start=0): this rank's batches from `start` (before the worker split)")
      .def(
          "batches_per_epoch", [](const PyOrder& o, const py::object& start) {
            return o.order().batches_per_epoch(o.Start(start));
          },
          py::arg("start") = 0, "batches_per_epoch(start=0): this worker's batches from `start`")
      .def("consumed", &PyOrder::Consumed, py::arg("start"), py::arg("batches"),
           "consumed(start, batches): samples of the epoch's global order all ranks have consumed once each\n"
           "had `batches` batches from `start` (padding not counted); ValueError past rank_batches(start)")
      .def(py::pickle([](const PyOrder& o) { return o.GetState(); },
                      [](const py::tuple& t) { return PyOrder::FromState(t); }));
}

}  // namespace libshard_py
