// Detection boxes as numpy arrays (py_boxes.h).
#include "py_boxes.h"

#include <pybind11/numpy.h>

#include <algorithm>

namespace libshard_py {

using namespace libshard;  // NOLINT: binding file

py::tuple BatchBoxArrays(const reader::BatchBoxes& b, size_t samples) {
  const py::ssize_t n = static_cast<py::ssize_t>(samples), m = static_cast<py::ssize_t>(b.max_boxes);
  py::array_t<float> boxes({n, m, py::ssize_t{4}});
  py::array_t<int64_t> labels({n, m});
  py::array_t<int32_t> counts({n});
  // The vectors hold exactly `samples` rows (BoxesFill); copied whole.
  std::copy_n(b.boxes.begin(), std::min(b.boxes.size(), size_t(n * m * 4)), boxes.mutable_data());
  std::copy_n(b.labels.begin(), std::min(b.labels.size(), size_t(n * m)), labels.mutable_data());
  std::copy_n(b.counts.begin(), std::min(b.counts.size(), size_t(n)), counts.mutable_data());
  return py::make_tuple(boxes, labels, counts);
}

py::tuple SampleBoxArrays(const reader::SampleBoxes& s) {
  const py::ssize_t n = static_cast<py::ssize_t>(s.boxes.size());
  py::array_t<float> boxes({n, py::ssize_t{4}});
  py::array_t<int64_t> labels({n});
  float* p = boxes.mutable_data();
  for (size_t k = 0; k < s.boxes.size(); ++k) {
    p[4 * k] = s.boxes[k].xmin;
    p[4 * k + 1] = s.boxes[k].ymin;
    p[4 * k + 2] = s.boxes[k].xmax;
    p[4 * k + 3] = s.boxes[k].ymax;
  }
  std::copy(s.labels.begin(), s.labels.end(), labels.mutable_data());
  return py::make_tuple(boxes, labels);
}

}  // namespace libshard_py
