#include "libshard/example/example_view.h"

#include <cstring>
#include <string>

#include "example/wire.h"
#include "libshard/text_escape.h"

namespace libshard::example {

// Field numbers of tensorflow/core/example/{example,feature}.proto.
namespace {
constexpr uint32_t kExampleFeatures = 1;  // Example.features
constexpr uint32_t kFeaturesMap = 1;      // Features.feature (map entries)
constexpr uint32_t kEntryKey = 1;         // map entry key
constexpr uint32_t kEntryValue = 2;       // map entry value (Feature)
constexpr uint32_t kListValue = 1;        // {Bytes,Float,Int64}List.value

// Feature.kind oneof field numbers equal the FeatureKind values 1..3.
FeatureKind KindOf(const wire::Field& f) {
  if (f.type != wire::kLen || f.number < 1 || f.number > 3) return FeatureKind::kNone;
  return static_cast<FeatureKind>(f.number);
}

// Calls fn(entry_bytes) for every Features map entry of an Example; fn
// returns false to stop. Assumes a validated record.
template <typename Fn>
void ForEachEntry(std::string_view record, Fn&& fn) {
  wire::Reader ex(record);
  wire::Field f;
  while (ex.Next(&f)) {
    if (f.number != kExampleFeatures || f.type != wire::kLen) continue;
    wire::Reader features(f.bytes);
    wire::Field e;
    while (features.Next(&e)) {
      if (e.number == kFeaturesMap && e.type == wire::kLen && !fn(e.bytes)) return;
    }
  }
}

std::string_view EntryKey(std::string_view entry) {
  std::string_view key;
  wire::Reader r(entry);
  wire::Field f;
  while (r.Next(&f)) {
    if (f.number == kEntryKey && f.type == wire::kLen) key = f.bytes;
  }
  return key;
}

}  // namespace

const char* FeatureKindName(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::kNone:
      return "none";
    case FeatureKind::kBytes:
      return "bytes_list";
    case FeatureKind::kFloat:
      return "float_list";
    case FeatureKind::kInt64:
      return "int64_list";
  }
  return "unknown";
}

struct FeatureView::Access {
  // The i-th value's scalar (float bits or int64) and bytes; false if i >= size.
  static bool Nth(const FeatureView& v, size_t i, uint64_t* scalar, std::string_view* bytes) {
    bool found = false;
    ForEachValue(v, [&](uint64_t x, std::string_view b) {
      if (i-- != 0) return true;
      *scalar = x;
      *bytes = b;
      found = true;
      return false;
    });
    return found;
  }

  // Calls fn(list_payload) for each list of the winning kind, in order.
  template <typename Fn>
  static void ForEachList(const FeatureView& v, Fn&& fn) {
    if (v.kind_ == FeatureKind::kNone) return;
    wire::Reader entry(v.entry_);
    wire::Field f;
    while (entry.Next(&f)) {
      if (f.number != kEntryValue || f.type != wire::kLen) continue;
      size_t feature_offset = static_cast<size_t>(f.bytes.data() - v.entry_.data());
      if (feature_offset < v.start_feature_) continue;
      std::string_view payload = f.bytes;
      if (feature_offset == v.start_feature_) payload.remove_prefix(v.start_inner_);
      wire::Reader feature(payload);
      wire::Field lf;
      while (feature.Next(&lf)) {
        if (KindOf(lf) == v.kind_) fn(lf.bytes);
      }
    }
  }

  // Calls fn(scalar, bytes) for each value; fn returns false to stop.
  // scalar: the float bits or the int64; bytes: the bytes value.
  template <typename Fn>
  static void ForEachValue(const FeatureView& v, Fn&& fn) {
    bool go = true;
    ForEachList(v, [&](std::string_view list) {
      wire::Reader r(list);
      wire::Field f;
      while (go && r.Next(&f)) {
        if (f.number != kListValue) continue;
        switch (v.kind_) {
          case FeatureKind::kBytes:
            if (f.type == wire::kLen) go = fn(0, f.bytes);
            break;
          case FeatureKind::kFloat:
            if (f.type == wire::kFixed32) {
              go = fn(f.fixed, {});
            } else if (f.type == wire::kLen) {
              for (size_t i = 0; go && i + 4 <= f.bytes.size(); i += 4) {
                uint32_t bits;
                std::memcpy(&bits, f.bytes.data() + i, 4);
                go = fn(bits, {});
              }
            }
            break;
          case FeatureKind::kInt64:
            if (f.type == wire::kVarint) {
              go = fn(f.varint, {});
            } else if (f.type == wire::kLen) {
              const char* p = f.bytes.data();
              const char* end = p + f.bytes.size();
              uint64_t x;
              while (go && p < end && wire::ReadVarint(p, end, &x)) go = fn(x, {});
            }
            break;
          case FeatureKind::kNone:
            break;
        }
      }
    });
  }
};

void FeatureView::Init(std::string_view entry) {
  entry_ = entry;
  kind_ = FeatureKind::kNone;
  size_ = 0;
  // The winning kind is the last one set; a different kind resets the list.
  wire::Reader r(entry);
  wire::Field f;
  while (r.Next(&f)) {
    if (f.number != kEntryValue || f.type != wire::kLen) continue;
    wire::Reader feature(f.bytes);
    wire::Field lf;
    while (feature.Next(&lf)) {
      FeatureKind k = KindOf(lf);
      if (k == FeatureKind::kNone || k == kind_) continue;
      kind_ = k;
      start_feature_ = static_cast<size_t>(f.bytes.data() - entry.data());
      start_inner_ = feature.field_offset();  // rescan from this field's tag
    }
  }
  Access::ForEachValue(*this, [this](uint64_t, std::string_view) {
    ++size_;
    return true;
  });
}

std::string_view FeatureView::bytes(size_t i) const {
  uint64_t scalar;
  std::string_view out;
  if (kind_ != FeatureKind::kBytes || !Access::Nth(*this, i, &scalar, &out)) return {};
  return out;
}

int64_t FeatureView::int64(size_t i) const {
  uint64_t scalar;
  std::string_view unused;
  if (kind_ != FeatureKind::kInt64 || !Access::Nth(*this, i, &scalar, &unused)) return 0;
  return static_cast<int64_t>(scalar);
}

float FeatureView::float_value(size_t i) const {
  uint64_t scalar;
  std::string_view unused;
  if (kind_ != FeatureKind::kFloat || !Access::Nth(*this, i, &scalar, &unused)) return 0;
  uint32_t bits = static_cast<uint32_t>(scalar);
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

size_t FeatureView::CopyInt64s(int64_t* out, size_t cap) const {
  if (kind_ != FeatureKind::kInt64) return 0;
  size_t n = 0;
  Access::ForEachValue(*this, [&](uint64_t x, std::string_view) {
    if (n < cap) out[n] = static_cast<int64_t>(x);
    ++n;
    return true;
  });
  return n;
}

size_t FeatureView::CopyFloats(float* out, size_t cap) const {
  if (kind_ != FeatureKind::kFloat) return 0;
  size_t n = 0;
  Access::ForEachValue(*this, [&](uint64_t x, std::string_view) {
    if (n < cap) {
      uint32_t bits = static_cast<uint32_t>(x);
      std::memcpy(&out[n], &bits, 4);
    }
    ++n;
    return true;
  });
  return n;
}

void FeatureView::VisitBytes(void (*cb)(void* ctx, std::string_view value), void* ctx) const {
  if (kind_ != FeatureKind::kBytes) return;
  Access::ForEachValue(*this, [&](uint64_t, std::string_view b) {
    cb(ctx, b);
    return true;
  });
}

namespace {

// Validation of every level, with the failing offset relative to the record.
class Validator {
 public:
  explicit Validator(std::string_view record) : record_(record) {}

  Status Example(size_t* entries) {
    wire::Reader r(record_);
    wire::Field f;
    while (r.Next(&f)) {
      if (f.number == kExampleFeatures && f.type == wire::kLen) {
        LIBSHARD_RETURN_IF_ERROR(Features(f.bytes, entries));
      }
    }
    return Check(r, record_, "Example");
  }

 private:
  Status Features(std::string_view msg, size_t* entries) {
    wire::Reader r(msg);
    wire::Field f;
    while (r.Next(&f)) {
      if (f.number == kFeaturesMap && f.type == wire::kLen) {
        LIBSHARD_RETURN_IF_ERROR(Entry(f.bytes));
        ++*entries;
      }
    }
    return Check(r, msg, "Features");
  }

  Status Entry(std::string_view msg) {
    wire::Reader r(msg);
    wire::Field f;
    key_ = {};
    while (r.Next(&f)) {
      if (f.type != wire::kLen) continue;
      if (f.number == kEntryKey) {
        if (!IsValidUtf8(f.bytes)) return Error(f.bytes.data(), "feature key is not valid UTF-8");
        key_ = f.bytes;
      } else if (f.number == kEntryValue) {
        LIBSHARD_RETURN_IF_ERROR(Feature(f.bytes));
      }
    }
    return Check(r, msg, "feature map entry");
  }

  Status Feature(std::string_view msg) {
    wire::Reader r(msg);
    wire::Field f;
    while (r.Next(&f)) {
      FeatureKind k = KindOf(f);
      if (k != FeatureKind::kNone) LIBSHARD_RETURN_IF_ERROR(List(f.bytes, k));
    }
    return Check(r, msg, "Feature");
  }

  Status List(std::string_view msg, FeatureKind kind) {
    wire::Reader r(msg);
    wire::Field f;
    while (r.Next(&f)) {
      if (f.number != kListValue || f.type != wire::kLen) continue;
      if (kind == FeatureKind::kFloat && f.bytes.size() % 4 != 0) {
        return Error(f.bytes.data(),
                     "packed float_list of " + std::to_string(f.bytes.size()) + " bytes is not a multiple of 4");
      }
      if (kind == FeatureKind::kInt64) {
        const char* p = f.bytes.data();
        const char* end = p + f.bytes.size();
        uint64_t x;
        while (p < end) {
          const char* at = p;
          if (!wire::ReadVarint(p, end, &x)) return Error(at, "truncated varint in packed int64_list");
        }
      }
    }
    return Check(r, msg, FeatureKindName(kind));
  }

  Status Check(const wire::Reader& r, std::string_view msg, const char* what) {
    if (r.ok()) return Status::OK();
    return Error(msg.data() + r.field_offset(), std::string(r.error()) + " in " + what);
  }

  Status Error(const char* at, const std::string& what) {
    std::string m = "malformed Example at byte " + std::to_string(at - record_.data()) + " of the record: " + what;
    if (!key_.empty()) m += " (feature \"" + std::string(key_.substr(0, 100)) + "\")";
    return DataLossError(std::move(m));
  }

  std::string_view record_;
  std::string_view key_;
};

}  // namespace

StatusOr<ExampleView> ExampleView::Parse(std::string_view record) {
  ExampleView view;
  view.record_ = record;
  LIBSHARD_RETURN_IF_ERROR(Validator(record).Example(&view.entries_));
  return view;
}

bool ExampleView::Find(std::string_view key, FeatureView* out) const {
  std::string_view found;
  bool any = false;
  ForEachEntry(record_, [&](std::string_view entry) {
    if (EntryKey(entry) == key) {
      found = entry;
      any = true;
    }
    return true;
  });
  if (any) out->Init(found);
  return any;
}

void ExampleView::VisitFeatures(void (*cb)(void* ctx, std::string_view key, const FeatureView& f), void* ctx) const {
  ForEachEntry(record_, [&](std::string_view entry) {
    FeatureView v;
    v.Init(entry);
    cb(ctx, EntryKey(entry), v);
    return true;
  });
}

}  // namespace libshard::example
