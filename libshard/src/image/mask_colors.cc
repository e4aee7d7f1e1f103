// Colour -> class index masks and index-mask decoding (mask_colors.h).
#include "libshard/image/mask_colors.h"

#include <cctype>
#include <cstdio>

#include "image/codec_internal.h"
#include "libshard/image/probe.h"
#include "libshard/text_escape.h"

namespace libshard::image {

StatusOr<UnknownColor> ParseUnknownColor(std::string_view name) {
  if (name == "error") return UnknownColor::kError;
  if (name == "ignore") return UnknownColor::kIgnore;
  return InvalidArgumentError("unknown colour policy '" + std::string(name) + "' (expected error or ignore)");
}
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitComma(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] == '"') quoted = !quoted;
    if (i == line.size() || (line[i] == ',' && !quoted)) {
      std::string_view f = Trim(line.substr(start, i - start));
      if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
      out.push_back(f);
      start = i + 1;
    }
  }
  return out;
}

bool ParseByte(std::string_view s, uint8_t* out) {
  if (s.empty() || s.size() > 3) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v > 255) return false;
  *out = static_cast<uint8_t>(v);
  return true;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

uint32_t Pack(uint8_t r, uint8_t g, uint8_t b) { return (uint32_t{r} << 16) | (uint32_t{g} << 8) | b; }

std::string ColorString(uint32_t c) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "(%u, %u, %u)", c >> 16, (c >> 8) & 0xFF, c & 0xFF);
  return buf;
}

}  // namespace

StatusOr<MaskColorMap> MaskColorMap::FromCsv(std::string_view csv) {
  std::vector<MaskColorClass> classes;
  bool header = false;
  int line_no = 0;
  csv.remove_prefix(Utf8BomLength(csv));
  while (!csv.empty()) {
    const size_t nl = csv.find('\n');
    std::string_view line = csv.substr(0, nl);
    csv = nl == std::string_view::npos ? std::string_view() : csv.substr(nl + 1);
    ++line_no;
    if (Trim(line).empty()) continue;
    const std::vector<std::string_view> f = SplitComma(line);
    const std::string where = "label map line " + std::to_string(line_no) + ": ";
    if (f.size() != 4) {
      return InvalidArgumentError(where + "expected 4 fields (name,r,g,b), got " + std::to_string(f.size()));
    }
    if (!header) {
      if (Lower(f[0]) != "name" || Lower(f[1]) != "r" || Lower(f[2]) != "g" || Lower(f[3]) != "b") {
        return InvalidArgumentError(where + "the header must be name,r,g,b");
      }
      header = true;
      continue;
    }
    MaskColorClass c;
    c.name = std::string(f[0]);
    if (!ParseByte(f[1], &c.r) || !ParseByte(f[2], &c.g) || !ParseByte(f[3], &c.b)) {
      return InvalidArgumentError(where + "colour values must be integers 0..255");
    }
    classes.push_back(std::move(c));
  }
  if (!header) return InvalidArgumentError("label map: empty CSV (no name,r,g,b header)");
  return FromClasses(std::move(classes));
}

StatusOr<MaskColorMap> MaskColorMap::FromClasses(std::vector<MaskColorClass> classes) {
  if (classes.empty()) return InvalidArgumentError("label map: no classes");
  if (classes.size() > 256) {
    return InvalidArgumentError("label map: " + std::to_string(classes.size()) +
                                " classes; 8-bit index masks hold at most 256");
  }
  MaskColorMap map;
  for (size_t i = 0; i < classes.size(); ++i) {
    const MaskColorClass& c = classes[i];
    auto [it, inserted] = map.index_.emplace(Pack(c.r, c.g, c.b), static_cast<uint8_t>(i));
    if (!inserted) {
      return InvalidArgumentError("label map: classes '" + classes[it->second].name + "' and '" + c.name +
                                  "' share the colour " + ColorString(Pack(c.r, c.g, c.b)));
    }
  }
  map.classes_ = std::move(classes);
  return map;
}

std::optional<int> MaskColorMap::Find(uint8_t r, uint8_t g, uint8_t b) const {
  auto it = index_.find(Pack(r, g, b));
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

StatusOr<Image> MaskColorMap::Apply(const Image& color_mask, const MaskColorOptions& options) const {
  if (color_mask.channels() != 3 || color_mask.bit_depth() != 8) {
    return InvalidArgumentError("label map: colour mask must be RGB8, got " + std::to_string(color_mask.channels()) +
                                " channels at " + std::to_string(color_mask.bit_depth()) + " bits");
  }
  const bool ignore = options.unknown == UnknownColor::kIgnore;
  if (ignore && options.ignore_index < size()) {
    return InvalidArgumentError("label map: ignore index " + std::to_string(options.ignore_index) +
                                " is also a class index (" + std::to_string(size()) + " classes)");
  }
  Image out(color_mask.width(), color_mask.height(), 1);
  const uint8_t* s = color_mask.data();
  uint8_t* d = out.data();
  // Masks are runs of few colours: remember the last lookup.
  uint32_t last_color = 0xFFFFFFFFu;
  uint8_t last_index = 0;
  const size_t n = static_cast<size_t>(color_mask.width()) * color_mask.height();
  for (size_t i = 0; i < n; ++i, s += 3) {
    const uint32_t c = Pack(s[0], s[1], s[2]);
    if (c != last_color) {
      auto it = index_.find(c);
      if (it != index_.end()) {
        last_index = it->second;
      } else if (ignore) {
        last_index = options.ignore_index;
      } else {
        return InvalidArgumentError("label map: colour " + ColorString(c) + " at pixel (" +
                                    std::to_string(i % color_mask.width()) + ", " +
                                    std::to_string(i / color_mask.width()) + ") is not in the label map");
      }
      last_color = c;
    }
    d[i] = last_index;
  }
  return out;
}

StatusOr<Image> DecodeIndexMask(std::string_view png_bytes, uint64_t max_pixels) {
  LIBSHARD_ASSIGN_OR_RETURN(ImageInfo info, ProbeImage(png_bytes));
  if (info.format != ImageFormat::kPng) {
    return InvalidArgumentError(std::string("index mask: ") + ImageFormatName(info.format) +
                                " is not lossless; index masks must be PNG");
  }
  if (!info.palette && info.channels != 1) {
    return InvalidArgumentError("index mask: PNG has " + std::to_string(info.channels) +
                                " channels; an index mask is a palette or plain gray PNG (use "
                                "MaskColorMap for colour masks)");
  }
  if (static_cast<uint64_t>(info.width) * info.height > max_pixels) {
    return ResourceExhaustedError("index mask: " + std::to_string(info.width) + "x" + std::to_string(info.height) +
                                  " exceeds the pixel limit of " + std::to_string(max_pixels) + " pixels");
  }
  internal::PngReadOptions o;
  o.palette_indices = true;
  o.keep_16bit = true;
  o.max_pixels = max_pixels;
  Image out;
  LIBSHARD_RETURN_IF_ERROR(internal::DecodePng(png_bytes, o, &out));
  if (out.channels() != 1) {
    return InternalError("index mask: decoder gave " + std::to_string(out.channels()) + " channels");
  }
  if (out.bit_depth() == 8) return out;
  // A 16-bit gray PNG (what many tools write for label images): its values
  // are the classes, so they must fit the 8-bit index mask every reader
  // expects; rescaling them would change the classes.
  Image narrow(out.width(), out.height(), 1);
  for (int y = 0; y < out.height(); ++y) {
    const uint16_t* src = out.samples16() + static_cast<size_t>(y) * out.width();
    uint8_t* dst = narrow.row(y);
    for (int x = 0; x < out.width(); ++x) {
      if (src[x] > 255) {
        return InvalidArgumentError("index mask: 16-bit gray value " + std::to_string(src[x]) + " at pixel (" +
                                    std::to_string(x) + ", " + std::to_string(y) +
                                    ") is above 255; class indices are 0..255");
      }
      dst[x] = static_cast<uint8_t>(src[x]);
    }
  }
  return narrow;
}

}  // namespace libshard::image
