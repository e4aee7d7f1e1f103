// Detection boxes as numpy arrays (Loader(boxes=True)): a batch's padded
// BatchBoxes as (boxes float32 [B, M, 4], box_labels int64 [B, M],
// box_counts int32 [B]); one sample's SampleBoxes as (boxes float32 [N, 4],
// box_labels int64 [N]). Coordinates xmin, ymin, xmax, ymax normalised to
// the output image. The arrays are copies (boxes are small).
#ifndef LIBSHARD_PYTHON_PY_BOXES_H_
#define LIBSHARD_PYTHON_PY_BOXES_H_

#include <pybind11/pybind11.h>

#include "libshard/reader/loader_options.h"
#include "py_common.h"

namespace libshard_py {

// (boxes, box_labels, box_counts) of a batch of `samples`.
py::tuple BatchBoxArrays(const libshard::reader::BatchBoxes& b, size_t samples);

// (boxes, box_labels) of one sample.
py::tuple SampleBoxArrays(const libshard::reader::SampleBoxes& s);

}  // namespace libshard_py

#endif  // LIBSHARD_PYTHON_PY_BOXES_H_
