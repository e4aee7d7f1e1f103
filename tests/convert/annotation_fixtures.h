// The fixture of the annotation tests (annotations_test.cc, annotations_voc_test.cc):
// a scratch folder, an image tree listed as `shard convert` lists it with
// annotations attached, and look-ups of a sample or a reject by path.
#ifndef LIBSHARD_TESTS_CONVERT_ANNOTATION_FIXTURES_H_
#define LIBSHARD_TESTS_CONVERT_ANNOTATION_FIXTURES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.h"
#include "libshard/convert/annotations.h"
#include "libshard/convert/source_listing.h"
#include "testutil.h"

namespace libshard::convert {

class AnnotationFolderTest : public ::testing::Test {
 protected:
  void SetUp() override { base_ = libshard::testing::MakeTempDir(); }
  void TearDown() override { std::filesystem::remove_all(base_); }
  // Lists base_/images (made of `files`, any bytes) with `o`.
  StatusOr<Listing> Attach(const std::vector<std::string>& files, const AnnotationOptions& o,
                           AnnotationSummary* summary = nullptr) {
    for (const std::string& f : files) libshard::testing::WriteTreeFile(base_ + "/images", f, "x");
    ListOptions lo;
    lo.keep_empty_classes = true;
    StatusOr<Listing> l = ListFolder(base_ + "/images", lo);
    if (!l.ok()) return l;
    StatusOr<AnnotationSummary> s = AttachAnnotations(o, &*l);
    if (!s.ok()) return s.status();
    if (summary) *summary = *s;
    return l;
  }
  // The sample at `path`, or null.
  static const SourceSample* Sample(const Listing& l, const std::string& path) {
    for (const SourceSample& s : l.samples)
      if (s.path == path) return &s;
    return nullptr;
  }
  // The reason `path` was rejected, or "".
  static std::string Reject(const Listing& l, const std::string& path) {
    for (const ListingReject& r : l.rejects)
      if (r.path == path) return r.reason;
    return "";
  }
  std::string base_;
};

}  // namespace libshard::convert

#endif  // LIBSHARD_TESTS_CONVERT_ANNOTATION_FIXTURES_H_
