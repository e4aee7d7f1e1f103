// A sample's detection boxes onto its stored image, written as the TF
// Object Detection API's keys (example/image_keys.h image/object/*). Private
// to the convert module; called by EncodeSample.
#ifndef LIBSHARD_SRC_CONVERT_OBJECT_FEATURES_H_
#define LIBSHARD_SRC_CONVERT_OBJECT_FEATURES_H_

#include "libshard/convert/annotations.h"
#include "libshard/convert/dataset_stats.h"
#include "libshard/convert/sample_encoder.h"
#include "libshard/example/example_builder.h"
#include "libshard/image/probe.h"
#include "libshard/image/transform.h"

namespace libshard::convert::internal {

// The boxes of `objects` (stated on the stored or oriented source, see
// annotations.h) follow EXIF orientation (`orientation`, 1 when the decode
// does not apply it) and `geometry` (planned on the oriented size) to the
// stored image; they are added to *b and counted per class in *stats.
// kInvalidArgument (the sample's reject) when the annotation's stated size
// is neither the image's stored nor its oriented size.
Status AddObjectFeatures(const SampleObjects& objects, const image::ImageInfo& info, int orientation,
                         const image::Geometry& geometry, const EncodeOptions& o, example::ExampleBuilder* b,
                         StatsAccumulator* stats);

}  // namespace libshard::convert::internal

#endif  // LIBSHARD_SRC_CONVERT_OBJECT_FEATURES_H_
