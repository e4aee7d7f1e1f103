// Pieces shared by the two listings (folder_listing.cc, csv_listing.cc) and
// source_listing.cc, and the CSV features the encoder writes. Private to the
// convert module.
#ifndef LIBSHARD_SRC_CONVERT_LISTING_INTERNAL_H_
#define LIBSHARD_SRC_CONVERT_LISTING_INTERNAL_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "libshard/convert/source_listing.h"
#include "libshard/example/example_builder.h"
#include "libshard/status.h"

namespace libshard::convert::internal {

// The folder part of a relative or absolute path ("" for none).
std::string Dirname(const std::string& rel);

// `masks` with "{split}" replaced by `split`.
std::string MaskFolder(const std::string& masks, const std::string& split);

// Applies val_fraction and label_offset, resolves masks, sorts samples and
// rejects canonically, fills splits.
Status FinishListing(const ListOptions& options, bool has_split_folders, Listing* listing);

// Class names -> labels: from the labels file, or the sorted names seen;
// *names gets them in label order.
StatusOr<std::map<std::string, int64_t>> LabelIndex(const ListOptions& options, const std::set<std::string>& seen,
                                                    std::vector<std::string>* names);

// CSV features (csv_features.cc): one field of feature `f` into *out; ""
// when it parses, else why not ("column 'score': 'high' is not a float").
std::string ParseFeatureValue(const CsvFeature& f, const std::string& field, FeatureValue* out);

// Each feature's value (features[i] with values[i]) into the record, in order.
void AddFeatures(const std::vector<CsvFeature>& features, const std::vector<FeatureValue>& values,
                 example::ExampleBuilder* b);

}  // namespace libshard::convert::internal

#endif  // LIBSHARD_SRC_CONVERT_LISTING_INTERNAL_H_
