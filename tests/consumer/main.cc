// Writes two records to memory with the installed library, reads them back.
#include <iostream>
#include <string>

#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/record_reader.h"
#include "libshard/record/record_writer.h"

int main() {
  std::string bytes;
  libshard::record::RecordWriter writer(libshard::io::NewStringWritableFile(&bytes), nullptr);
  libshard::example::ExampleBuilder b;
  b.AddInt64("label", 7);
  if (!writer.Write(b.Serialize()).ok() || !writer.Write("raw").ok() || !writer.Close().ok()) return 1;
  libshard::record::RecordReader reader(bytes);
  libshard::record::RecordView rec;
  if (!reader.Next(&rec).ok()) return 1;
  auto ex = libshard::example::ExampleView::Parse(rec.data);
  libshard::example::FeatureView label;
  if (!ex.ok() || !ex->Find("label", &label) || label.int64(0) != 7) return 1;
  if (!reader.Next(&rec).ok() || rec.data != "raw") return 1;
  if (reader.Next(&rec).code() != libshard::StatusCode::kOutOfRange) return 1;
  std::cout << "consumer: ok\n";
  return 0;
}
