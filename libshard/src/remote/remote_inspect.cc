// remote::InspectObject: stage, inspect, name the URL (remote/remote_inspect.h).
#include "libshard/remote/remote_inspect.h"

#include <memory>

#include "libshard/remote/staging.h"
#include "libshard/store/object_store.h"

namespace libshard::remote {

StatusOr<reader::Inspection> InspectObject(const std::string& file, const reader::InspectOptions& options) {
  if (!store::IsObjectUrl(file)) return reader::InspectFile(file, options);
  LIBSHARD_RETURN_IF_ERROR(reader::ValidateInspectOptions(options));  // before any download
  LIBSHARD_ASSIGN_OR_RETURN(std::unique_ptr<StagedObjects> staged, StagedObjects::Stage(file));
  StatusOr<reader::Inspection> in = reader::InspectFile(staged->local(), options);
  if (!in.ok()) return Status(in.status().code(), staged->ToUrl(in.status().message()));
  reader::MapText([&](const std::string& text) { return staged->ToUrl(text); }, &*in);
  in->file = file;
  return in;
}

}  // namespace libshard::remote
