// The Loader's batch named tuples (py_common.h: MakeBatch, BindBatchTypes).
#include <string>

#include "py_common.h"

namespace libshard_py {

// The batch named tuples, made when the module is bound (and never freed:
// they outlive the interpreter's last use of them): images, labels, then
// masks (masks=True), boxes, box_labels, box_counts (boxes=True), keys
// (extras=). Indexed by masks | boxes << 1 | keys << 2.
namespace {

constexpr const char* kBatchTypeNames[8] = {
    "Batch",      "SegmentationBatch",      "DetectionBatch",      "SegmentationDetectionBatch",
    "KeyedBatch", "KeyedSegmentationBatch", "KeyedDetectionBatch", "KeyedSegmentationDetectionBatch"};
py::handle g_batch_types[8];

}  // namespace

py::tuple MakeBatch(const py::object& images, const py::object& labels, const py::object& masks,
                    const py::object& boxes, const py::object& keys) {
  py::list fields;
  fields.append(images);
  fields.append(labels);
  if (!masks.is_none()) fields.append(masks);
  if (!boxes.is_none())
    for (auto a : boxes) fields.append(a);
  if (!keys.is_none()) fields.append(keys);
  const int type = (masks.is_none() ? 0 : 1) | (boxes.is_none() ? 0 : 2) | (keys.is_none() ? 0 : 4);
  return py::reinterpret_steal<py::tuple>(g_batch_types[type](*fields).release());
}

void BindBatchTypes(py::module_& m) {
  py::object namedtuple = py::module_::import("collections").attr("namedtuple");
  for (int t = 0; t < 8; ++t) {
    py::list fields;
    fields.append("images");
    fields.append("labels");
    if (t & 1) fields.append("masks");
    if (t & 2)
      for (const char* f : {"boxes", "box_labels", "box_counts"}) fields.append(f);
    if (t & 4) fields.append("keys");
    py::object type = namedtuple(kBatchTypeNames[t], fields, py::arg("module") = "libshard");
    type.attr("__doc__") = std::string("A batch (docs/reader.md): ") +
                           std::string(py::str(py::str(", ").attr("join")(fields))) +
                           (t & 2 ? "; boxes float32 [B, M, 4] (xmin, ymin, xmax, ymax in 0..1 of the output image), "
                                    "box_labels int64 [B, M] (-1 past a count), box_counts int32 [B]"
                                  : "");
    m.attr(kBatchTypeNames[t]) = type;
    g_batch_types[t] = type.release();
  }
}

}  // namespace libshard_py
