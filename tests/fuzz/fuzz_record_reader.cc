// Fuzzes the TFRecord framing reader, index building/checking and the index
// parser over arbitrary bytes: they must never crash, hang or read out of
// bounds, and an index built from a file must check against it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libshard/record/index.h"
#include "libshard/record/record_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view buf(reinterpret_cast<const char*>(data), size);
  namespace record = libshard::record;
  record::ReaderOptions options;
  options.max_record_length = 1 << 20;
  record::RecordReader reader(buf, options);
  record::RecordView rec;
  uint64_t last_end = 0;
  while (reader.Next(&rec).ok()) {
    if (rec.offset != last_end || rec.end_offset() > size) std::abort();
    last_end = rec.end_offset();
  }
  auto index = record::BuildIndex(buf, options);
  if (index.ok() && !record::CheckIndex(buf, *index).ok()) std::abort();
  (void)record::ParseIndex(buf);
  return 0;
}
