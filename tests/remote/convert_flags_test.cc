// The table of `shard convert`'s flags (libshard/remote/convert_flags.h),
// which the program registers its CLI11 options from and libshard.convert
// sets its keyword arguments through: each default as --help shows it is the
// value a fresh request holds, a bad value is refused naming the flag, the
// checks of the flags together keep the program's messages, repeatable flags
// accumulate, and -o s3:// carries --staging and --recheck.
#include "libshard/remote/convert_flags.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testutil.h"

namespace libshard::remote {
namespace {

using testing::Contains;

// Fresh values with the two required flags set: the input a readable folder.
ConvertFlagValues WithInputAndOutput(const std::string& dir) {
  ConvertFlagValues v;
  EXPECT_TRUE(SetConvertFlag(*FindConvertFlag("input"), dir, &v).ok());
  EXPECT_TRUE(SetConvertFlag(*FindConvertFlag("output"), dir + "/out", &v).ok());
  return v;
}

// What the flags with a --help default set, once finished.
std::string Fingerprint(const ConvertFlagValues& v) {
  const convert::ConvertOptions& o = v.request.convert;
  const convert::EncodeOptions& e = o.encode;
  std::ostringstream s;
  s << o.list.label_offset << '|' << o.list.path_column << '|' << o.list.label_column << '|' << o.list.mask_column
    << '|' << o.list.split_column << '|' << static_cast<int>(o.list.layout) << '|' << o.list.default_split << '|'
    << o.annotations.min_visible << '|' << static_cast<int>(e.mask_options.unknown) << '|'
    << int{e.mask_options.ignore_index} << '|' << o.plan.shard_size_bytes << '|' << o.plan.seed << '|'
    << static_cast<int>(e.transform.filter) << '|' << static_cast<int>(e.format) << '|' << e.jpeg.quality << '|'
    << e.raw.zstd_level << '|' << static_cast<int>(e.raw.filter) << '|' << static_cast<int>(e.reencode) << '|'
    << static_cast<int>(e.decode.channels) << '|' << static_cast<int>(e.decode.alpha) << '|' << e.decode.tiff_page
    << '|' << o.fail_on_error << '|' << static_cast<int>(o.leaks) << '|' << o.leak_distance << '|'
    << v.progress_interval;
  return s.str();
}

class ConvertFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
                             "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_MAX", "JOB_COMPLETION_INDEX"}) {
      ::unsetenv(name);
    }
    dir_ = testing::MakeTempDir();
  }
  std::string dir_;
};

TEST_F(ConvertFlagsTest, NamesAreUniqueAndEveryOptionHasASection) {
  std::set<std::string> names;
  for (const ConvertFlag& f : ConvertFlagTable()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_EQ(FindConvertFlag(f.name), &f);
    if (f.arity == FlagArity::kPositional) continue;
    const std::string names_text = f.names;
    EXPECT_EQ(names_text.substr(names_text.size() - std::string(f.name).size() - 2), "--" + std::string(f.name));
    EXPECT_NE(f.group, nullptr) << f.name;  // else --help leaves it in the catch-all "Options:"
    EXPECT_EQ(std::string(f.type).empty(), f.arity == FlagArity::kSwitch) << f.name;
  }
  EXPECT_EQ(FindConvertFlag("q"), nullptr);
  EXPECT_EQ(FindConvertFlag("no_shuffle"), nullptr);  // Python's spelling is turned into the flag's first
  EXPECT_EQ(ConvertFlagOptionName(*FindConvertFlag("quiet")), "--quiet");
  EXPECT_EQ(ConvertFlagOptionName(*FindConvertFlag("input")), "input");
}

TEST_F(ConvertFlagsTest, EveryDefaultParsesToTheValueAFreshRequestHolds) {
  ConvertFlagValues fresh = WithInputAndOutput(dir_);
  ASSERT_TRUE(FinishConvertFlags(&fresh).ok());
  int defaults = 0;
  for (const ConvertFlag& f : ConvertFlagTable()) {
    if (f.default_text == nullptr) continue;
    ++defaults;
    ConvertFlagValues v = WithInputAndOutput(dir_);
    ASSERT_TRUE(SetConvertFlag(f, f.default_text, &v).ok()) << f.name;
    Status s = FinishConvertFlags(&v);
    ASSERT_TRUE(s.ok()) << f.name << ": " << s.message();
    EXPECT_EQ(Fingerprint(v), Fingerprint(fresh)) << "--" << f.name << " " << f.default_text;
  }
  EXPECT_EQ(defaults, 25);
  // A value other than the default changes the fingerprint (so the comparison sees each field).
  ConvertFlagValues v = WithInputAndOutput(dir_);
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("quality"), "91", &v).ok());
  ASSERT_TRUE(FinishConvertFlags(&v).ok());
  EXPECT_NE(Fingerprint(v), Fingerprint(fresh));
  EXPECT_EQ(v.request.convert.encode.jpeg.quality, 91);
}

TEST_F(ConvertFlagsTest, ABadValueIsRefusedNamingTheFlag) {
  const std::vector<std::pair<std::string, std::string>> golden = {
      {"quality 0", "--quality: '0' is out of range (1..100)"},
      {"quality 1e2", "--quality: expected an integer in 1..100, got '1e2'"},
      {"records-per-shard 010", "--records-per-shard: expected an integer in 1..4294967295, got '010'"},
      {"seed -1", "--seed: expected an integer in 0..18446744073709551615, got '-1'"},
      {"seed 18446744073709551616", "--seed: '18446744073709551616' is out of range (0..18446744073709551615)"},
      {"val-fraction nan", "--val-fraction: expected a number in 0..0.999999, got 'nan'"},
      {"progress-interval 0", "--progress-interval: '0' is out of range (0.001..86400)"},
      {"tiff-page -1", "--tiff-page: '-1' is out of range (0..2147483647)"},
      {"threads 257", "--threads: '257' is out of range (0..256)"},
      {"task-index 99999", "--task-index: '99999' is out of range (0..99998)"},
      {"prefix ", "--prefix: the prefix is empty"},
      {"no-shuffle yes", "--no-shuffle: a switch is true or false, not 'yes'"},
  };
  for (const auto& [given, message] : golden) {
    const size_t space = given.find(' ');
    const ConvertFlag* f = FindConvertFlag(given.substr(0, space));
    ASSERT_NE(f, nullptr) << given;
    ConvertFlagValues v;
    Status s = SetConvertFlag(*f, given.substr(space + 1), &v);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << given;
    EXPECT_EQ(s.message(), message);
  }
  // Every checked flag refuses text that is no number, naming itself.
  for (const ConvertFlag& f : ConvertFlagTable()) {
    if (f.check.kind == FlagCheck::kNone || f.check.kind == FlagCheck::kPrefix) continue;
    ConvertFlagValues v;
    Status s = SetConvertFlag(f, "many", &v);
    EXPECT_EQ(s.message().rfind("--" + std::string(f.name) + ": expected ", 0), 0u) << s.message();
  }
}

TEST_F(ConvertFlagsTest, TheFlagsTogetherKeepTheProgramsMessages) {
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>> cases = {
      {{{"resize-mode", "letterbox"}}, "--resize-mode letterbox needs --size"},
      {{{"size", "12x"}}, "--size: expected N or WxH, got '12x'"},
      {{{"shard-size", "12Q"}}, "--shard-size: '12Q': unknown unit (use K, M, G, KiB, MiB, GiB, KB, MB, GB)"},
      {{{"on-error", "x"}}, "--on-error must be skip or fail"},
      {{{"dedup", "x"}}, "--dedup must be within, across or within,across, not 'x'"},
      {{{"dedup", "across,across"}}, "--dedup must be within, across or within,across, not 'across,across'"},
      {{{"labels", dir_ + "/none.txt"}}, "--labels " + dir_ + "/none.txt: cannot read: No such file or directory"},
      {{{"coco", dir_}, {"voc", dir_}}, "give one of --coco, --yolo and --voc"},
      {{{"task-index", "3"}}, "--task-index 3 needs --num-tasks N"},
      {{{"num-tasks", "2"}, {"task-index", "5"}}, "--task-index: task index 5 is out of range for 2 tasks (0..1)"},
      {{{"dedup", "within"}, {"num-tasks", "2"}, {"task-index", "0"}}, "--dedup within needs the whole split"},
      {{{"dedup", "across,within"}, {"num-tasks", "2"}, {"task-index", "0"}},
       "--dedup within,across needs the whole split"},
      {{{"output", "https://host/x"}}, "-o https://host/x: converting into this kind of object storage"},
  };
  for (const auto& [flags, message] : cases) {
    ConvertFlagValues v = WithInputAndOutput(dir_);
    for (const auto& [name, text] : flags) ASSERT_TRUE(SetConvertFlag(*FindConvertFlag(name), text, &v).ok()) << name;
    Status s = FinishConvertFlags(&v);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << message;
    EXPECT_TRUE(Contains(s.message(), message)) << s.message();
  }
  ConvertFlagValues v = WithInputAndOutput(dir_);
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("input"), dir_ + "/missing", &v).ok());
  EXPECT_TRUE(Contains(FinishConvertFlags(&v).message(), dir_ + "/missing: cannot read"));
}

TEST_F(ConvertFlagsTest, RepeatableFlagsAccumulateAndTheRestSetTheRequest) {
  ConvertFlagValues v = WithInputAndOutput(dir_);
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{{"include", "*.jpg"},
                                                                                   {"include", "a/*"},
                                                                                   {"exclude", "*.tmp"},
                                                                                   {"feature", "n:int"},
                                                                                   {"feature", "tags:int_list"},
                                                                                   {"size", "32x24"},
                                                                                   {"num-tasks", "4"},
                                                                                   {"task-index", "3"},
                                                                                   {"no-shuffle", "true"},
                                                                                   {"no-sync", "true"},
                                                                                   {"records-per-shard", "4294967295"},
                                                                                   {"seed", "18446744073709551615"}}) {
    ASSERT_TRUE(SetConvertFlag(*FindConvertFlag(name), text, &v).ok()) << name;
  }
  Status s = FinishConvertFlags(&v);
  ASSERT_TRUE(s.ok()) << s.message();
  const convert::ConvertOptions& o = v.request.convert;
  EXPECT_EQ(o.list.include, (std::vector<std::string>{"*.jpg", "a/*"}));
  EXPECT_EQ(o.list.exclude, std::vector<std::string>{"*.tmp"});
  ASSERT_EQ(o.list.features.size(), 2u);
  EXPECT_EQ(o.list.features[1].column, "tags");
  EXPECT_EQ(o.encode.transform.width, 32);
  EXPECT_EQ(o.encode.transform.height, 24);
  EXPECT_EQ(o.encode.transform.mode, image::ResizeMode::kCenterCrop);
  EXPECT_EQ(o.num_tasks, 4u);
  EXPECT_EQ(o.task_index, 3u);
  EXPECT_EQ(v.task_source, "");
  EXPECT_FALSE(o.plan.shuffle);
  EXPECT_FALSE(o.sync);
  EXPECT_EQ(o.plan.records_per_shard, 4294967295u);
  EXPECT_EQ(o.plan.seed, 18446744073709551615u);
}

TEST_F(ConvertFlagsTest, AnObjectStoreOutputCarriesStagingAndRecheck) {
  ConvertFlagValues v = WithInputAndOutput(dir_);
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("output"), "s3://bkt/ds", &v).ok());
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("staging"), dir_ + "/staging", &v).ok());
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("recheck"), "true", &v).ok());
  Status s = FinishConvertFlags(&v);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(IsRemoteOutput(v.request.convert.output));
  EXPECT_EQ(v.request.staging, dir_ + "/staging");
  EXPECT_TRUE(v.request.recheck);
  ASSERT_TRUE(SetConvertFlag(*FindConvertFlag("output"), "s3://", &v).ok());
  EXPECT_EQ(FinishConvertFlags(&v).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace libshard::remote
