// Fuzzes the verifier's entry point over arbitrary bytes, as plain data and
// forced through the gzip/zlib path, with a manifest's record rules (schema,
// label map), the whole-file checksum and, for some inputs, image decoding:
// it must never crash, hang or read out of bounds, and its results must be
// self-consistent. (Index text is fuzzed by fuzz_record_reader: ParseIndex.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libshard/crc32c.h"
#include "libshard/verify/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace verify = libshard::verify;
  namespace record = libshard::record;
  std::string_view buf(reinterpret_cast<const char*>(data), size);
  verify::VerifyOptions options;
  options.max_record_length = 1 << 20;
  options.max_faults_per_file = 4;
  options.decode_images = (size & 2) != 0;
  options.max_pixels = 1 << 16;  // keep decodes of forged headers small
  verify::RecordRules rules;
  rules.schema = {{"image/encoded", libshard::example::FeatureKind::kBytes, true},
                  {"image/class/label", libshard::example::FeatureKind::kInt64, false}};
  rules.labels = {0, 1, 2};
  verify::FileChecks checks;
  checks.rules = &rules;
  checks.checksum = true;
  for (auto c : {record::Compression::kAuto, record::Compression::kNone, record::Compression::kGzip,
                 record::Compression::kZlib}) {
    options.compression = c;
    options.check_examples = (size & 1) == 0;
    verify::FileResult r = verify::VerifyBuffer(buf, "fuzz", options, checks);
    if (r.crc32c != libshard::crc32c::Value(data, size) || r.file_size != size) std::abort();
    if (r.faults.size() > options.max_faults_per_file) std::abort();
    if (r.compression == record::Compression::kAuto) std::abort();
    if (r.compression == record::Compression::kNone) {
      if (!r.unchecked_bytes.has_value() || r.bytes + *r.unchecked_bytes != size) std::abort();
    }
    for (const auto& f : r.faults) {
      // Nothing in memory is unreadable; no fault is past the records counted.
      if (f.kind == verify::FaultKind::kUnreadable || f.record > r.records) std::abort();
    }
  }
  return 0;
}
