// The labels sidecar beside a plain shard (verify/labels_check.h through
// VerifyFile): compared with every record's label; each kind of difference
// is one labels_mismatch fault naming the record and its byte offset.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/record/index.h"
#include "libshard/record/record_labels.h"
#include "libshard/verify/verifier.h"
#include "testutil.h"
#include "verify_samples.h"

namespace libshard::verify {
namespace {

using ::libshard::testing::HasSubstr;

// Record i has label `labels[i]` (none when -1).
std::string Example(int64_t label) {
  example::ExampleBuilder b;
  b.AddBytes("image/encoded", "pixels");
  if (label >= 0) b.AddInt64("image/class/label", label);
  return b.Serialize();
}

class VerifyLabelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    data_ = test::Frame({Example(3), Example(-1), Example(300)}, &index_);
    testing::WriteFileOrDie(Shard(), data_);
    offsets_ = *record::ParseIndex(index_);
  }
  std::string Shard() const { return dir_ + "/s.tfrecord"; }
  std::string Sidecar() const { return Shard() + ".labels"; }
  FileResult WithSidecar(const std::string& bytes) {
    testing::WriteFileOrDie(Sidecar(), bytes);
    return VerifyFile(Shard(), VerifyOptions());
  }
  static const Fault& OnlyFault(const FileResult& r) {
    EXPECT_EQ(r.faults.size(), 1u);
    static const Fault none{0, 0, FaultKind::kUnreadable, "<no fault>"};
    return r.faults.empty() ? none : r.faults[0];
  }
  std::string dir_, data_, index_;
  std::vector<record::IndexEntry> offsets_;
};

TEST_F(VerifyLabelsTest, TheRecordsLabelsPass) {
  EXPECT_TRUE(WithSidecar(record::FormatLabels({3, -1, 300})).ok());
  // No sidecar is no fault (shards of other writers), and check_index off skips it.
  EXPECT_TRUE(VerifyFile(Shard(), VerifyOptions()).ok());
  VerifyOptions off;
  off.check_index = false;
  testing::WriteFileOrDie(Sidecar(), "garbage");
  EXPECT_TRUE(VerifyFile(Shard(), off).ok());
}

TEST_F(VerifyLabelsTest, ADifferentLabelNamesTheRecord) {
  const FileResult r = WithSidecar(record::FormatLabels({3, 7, 300}));
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kLabelsMismatch);
  EXPECT_EQ(FaultKindName(f.kind), std::string("labels_mismatch"));
  EXPECT_EQ(f.record, 1u);
  EXPECT_EQ(f.offset, offsets_[1].offset);
  EXPECT_EQ(f.message, Sidecar() + " says label 7 for record 1 at byte " + std::to_string(offsets_[1].offset) +
                           ", whose label is -1");
}

TEST_F(VerifyLabelsTest, TooFewOrTooManyLabels) {
  const FileResult r_few = WithSidecar(record::FormatLabels({3, -1}));
  const Fault& few = OnlyFault(r_few);
  EXPECT_EQ(few.kind, FaultKind::kLabelsMismatch);
  EXPECT_EQ(few.record, 2u);
  EXPECT_TRUE(HasSubstr(few.message, "has 2 labels, but the shard has more records: record 2 at byte")) << few.message;
  const FileResult r_many = WithSidecar(record::FormatLabels({3, -1, 300, 4}));
  const Fault& many = OnlyFault(r_many);
  EXPECT_EQ(many.kind, FaultKind::kLabelsMismatch);
  EXPECT_EQ(many.offset, data_.size());
  EXPECT_TRUE(HasSubstr(many.message, "has 4 labels, but the shard has 3 records")) << many.message;
}

TEST_F(VerifyLabelsTest, ADamagedSidecarIsOneFault) {
  std::string bytes = record::FormatLabels({3, -1, 300});
  bytes[25] ^= 1;
  const FileResult r = WithSidecar(bytes);
  const Fault& f = OnlyFault(r);
  EXPECT_EQ(f.kind, FaultKind::kLabelsMismatch);
  EXPECT_TRUE(HasSubstr(f.message, Sidecar() + ": at byte 30: CRC-32C")) << f.message;
  // A sidecar larger than any for this shard is refused unread.
  const FileResult r_huge = WithSidecar(std::string(data_.size() * 2, 'x'));
  const Fault& huge = OnlyFault(r_huge);
  EXPECT_EQ(huge.kind, FaultKind::kUnreadable);
  EXPECT_TRUE(HasSubstr(huge.message, Sidecar())) << huge.message;
}

}  // namespace
}  // namespace libshard::verify
