// libshard.Dataset: the shard set and one sample decoded by its global
// number (reader/dataset.h + reader/sample_decoder.h), with no loader, ring
// or threads; and what it shares with libshard.Loader (a sample as a tuple,
// the label map, every sample's label).
#ifndef LIBSHARD_PYTHON_PY_DATASET_H_
#define LIBSHARD_PYTHON_PY_DATASET_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

#include "libshard/reader/dataset.h"
#include "libshard/reader/sample_decoder.h"
#include "py_common.h"

namespace libshard_py {

// Global sample `index` (an int or __index__; IndexError past the dataset,
// negative ones not taken here) at `epoch` as (image, label[, mask][, boxes,
// box_labels]) numpy arrays in the decoder's layout and dtype; decoded on
// this thread with the GIL released. A record the image layer calls invalid
// is DataLossError (the options were checked at Create).
py::tuple SampleTuple(const libshard::reader::SampleDecoder& decoder, uint64_t samples, const py::object& index,
                      const py::object& epoch);

// The manifest's label map as [(label, name)].
py::list LabelList(const libshard::reader::Dataset& ds);

// Every sample's label (reader/sample_labels.h) as a read-only int64 array,
// read on `threads` threads with the GIL released.
py::object SampleLabelArray(const libshard::reader::Dataset& ds, int threads);

// labels.tolist() (the same values, as Python ints), for labels of a span
// under 2^20: one int object a value, shared by the items.
py::list LabelsAsList(const py::array_t<int64_t, py::array::c_style | py::array::forcecast>& labels);

// The Python object behind libshard.Dataset. Immutable after construction;
// safe to share between threads.
class PyDataset {
 public:
  PyDataset(const py::object& sources, const py::kwargs& kwargs);

  const std::shared_ptr<const libshard::reader::Dataset>& dataset() const { return dataset_; }
  const libshard::reader::SampleDecoder& decoder() const { return decoder_; }
  // The seed= it was made with (augmentation; Order's default).
  uint64_t seed() const { return decoder_.options().order.seed; }

 private:
  std::shared_ptr<const libshard::reader::Dataset> dataset_;
  libshard::reader::SampleDecoder decoder_;
};

}  // namespace libshard_py

#endif  // LIBSHARD_PYTHON_PY_DATASET_H_
