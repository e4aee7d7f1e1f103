// Fuzzes the zero-copy Example view over arbitrary record bytes: parsing and
// every accessor must stay within the input and never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "libshard/example/example_view.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using libshard::example::ExampleView;
  using libshard::example::FeatureView;
  std::string_view rec(reinterpret_cast<const char*>(data), size);
  auto ex = ExampleView::Parse(rec);
  if (!ex.ok()) return 0;
  volatile size_t sink = 0;
  ex->ForEachFeature([&](std::string_view key, const FeatureView& f) {
    FeatureView found;
    if (!ex->Find(key, &found)) __builtin_trap();
    std::vector<int64_t> ints(f.size());
    std::vector<float> floats(f.size());
    sink = sink + f.CopyInt64s(ints.data(), ints.size()) + f.CopyFloats(floats.data(), floats.size());
    f.ForEachBytes([&](std::string_view b) { sink = sink + b.size(); });
    if (f.size() > 0) sink = sink + f.bytes(f.size() - 1).size() + static_cast<size_t>(f.int64(0));
  });
  return 0;
}
