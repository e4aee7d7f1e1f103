// A minimal streaming JSON writer (verify's report, the tools' --json output): objects,
// arrays, strings (escaped as RFC 8259 requires), integers, doubles, bools.
// The output is always valid UTF-8: a string byte that is not part of a valid
// UTF-8 sequence (a file name in Latin-1, say) is written as the escape
// \udcXX, XX its value: the code point Python's "surrogateescape" uses, so
// os.fsencode(json.loads(text)[...]) gives the original bytes back.
//
//   JsonWriter j(std::cout);
//   j.BeginObject(); j.Key("records"); j.Int(3); j.EndObject();
//
// Not thread-safe. Commas and nesting are tracked; misuse is the caller's bug.
#ifndef LIBSHARD_UTIL_JSON_WRITER_H_
#define LIBSHARD_UTIL_JSON_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace libshard::util {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(std::string_view key);
  void String(std::string_view s);
  void Int(int64_t v);
  void Uint(uint64_t v);
  void Double(double v);
  void Bool(bool v);
  void Null();

  // Convenience: Key(k) followed by the value.
  void Field(std::string_view k, std::string_view v) {
    Key(k);
    String(v);
  }
  void Field(std::string_view k, const char* v) {
    Key(k);
    String(v);
  }
  void Field(std::string_view k, int64_t v) {
    Key(k);
    Int(v);
  }
  void Field(std::string_view k, uint64_t v) {
    Key(k);
    Uint(v);
  }
  void Field(std::string_view k, int v) {
    Key(k);
    Int(v);
  }
  void Field(std::string_view k, double v) {
    Key(k);
    Double(v);
  }
  void Field(std::string_view k, bool v) {
    Key(k);
    Bool(v);
  }

 private:
  void Open(char c);
  void Close(char c);
  void BeforeValue();
  void WriteString(std::string_view s);

  std::ostream& out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_JSON_WRITER_H_
