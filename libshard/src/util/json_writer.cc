#include "libshard/util/json_writer.h"

#include <cmath>
#include <cstdio>

#include "libshard/text_escape.h"

namespace libshard::util {

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ << ',';
    first_.back() = false;
  }
}

void JsonWriter::Open(char c) {
  BeforeValue();
  out_ << c;
  first_.push_back(true);
}

void JsonWriter::Close(char c) {
  first_.pop_back();
  out_ << c;
  if (first_.empty()) out_ << '\n';
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  WriteString(key);
  out_ << ':';
  after_key_ = true;
}

void JsonWriter::String(std::string_view s) {
  BeforeValue();
  WriteString(s);
}

void JsonWriter::WriteString(std::string_view s) {
  out_ << '"';
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = libshard::Utf8SequenceLength(s, i);
      if (n == 0) {  // not UTF-8: Python's surrogateescape code point for the byte
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\udc%02x", c);
        out_ << buf;
      } else {
        out_ << s.substr(i, n);
        i += n - 1;
      }
      continue;
    }
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\r':
        out_ << "\\r";
        break;
      case '\t':
        out_ << "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ << buf;
        } else {
          out_ << static_cast<char>(c);
        }
    }
  }
  out_ << '"';
}

void JsonWriter::Int(int64_t v) {
  BeforeValue();
  out_ << v;
}
void JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  out_ << v;
}
void JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ << (v ? "true" : "false");
}
void JsonWriter::Null() {
  BeforeValue();
  out_ << "null";
}

void JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_ << "null";
    return;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ << buf;
}

}  // namespace libshard::util
