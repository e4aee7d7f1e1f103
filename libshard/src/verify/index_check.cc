#include "index_check.h"

#include <filesystem>
#include <system_error>

#include "faults.h"
#include "libshard/io/mapped_file.h"

namespace libshard::verify {
namespace internal {

IndexComparer IndexComparer::Parse(std::string_view text, std::string name) {
  IndexComparer c;
  auto parsed = record::ParseIndex(text);
  if (parsed.ok()) {
    c.entries_ = std::make_unique<std::vector<record::IndexEntry>>(std::move(*parsed));
  } else {
    c.entries_ = std::make_unique<std::vector<record::IndexEntry>>();
    c.fault_ = Fault{0, 0, FaultKind::kIndexMismatch, name + ": " + parsed.status().message()};
  }
  c.matcher_ = std::make_unique<record::IndexMatcher>(*c.entries_);
  c.name_ = std::move(name);
  return c;
}

std::optional<Fault> IndexComparer::Finish(uint64_t end) {
  if (fault_) return std::move(fault_);
  const std::optional<record::IndexMismatch> m = matcher_->Finish();
  if (!m) return std::nullopt;
  const uint64_t offset = m->kind == record::IndexMismatch::Kind::kEntryPastEnd ? end : m->actual.offset;
  return Fault{offset, m->entry, FaultKind::kIndexMismatch, record::IndexMismatchMessage(*m, name_)};
}

std::unique_ptr<IndexComparer> OpenIndex(const std::string& path, const VerifyOptions& options, FileResult* r) {
  if (!options.check_index) return nullptr;
  const std::string idx = record::IndexPathFor(path);
  std::error_code ec;
  if (!std::filesystem::exists(idx, ec)) return nullptr;
  auto text = io::ReadFileToString(idx);
  if (!text.ok()) {
    r->faults.push_back(Fault{0, 0, FaultKind::kUnreadable, "index " + text.status().message()});
    return nullptr;
  }
  return std::make_unique<IndexComparer>(IndexComparer::Parse(*text, idx));
}

void FinishIndex(IndexComparer* index, FileResult* r) {
  if (index == nullptr || HasFramingFault(*r)) return;
  if (auto f = index->Finish(r->bytes)) r->faults.push_back(std::move(*f));  // beyond the cap: one at most
}

}  // namespace internal
}  // namespace libshard::verify
