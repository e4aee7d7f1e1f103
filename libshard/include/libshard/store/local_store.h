// The local store: a folder behind the ObjectStore interface (keys are
// paths below it). OpenStore() in object_store.h makes it for local paths.
#ifndef LIBSHARD_STORE_LOCAL_STORE_H_
#define LIBSHARD_STORE_LOCAL_STORE_H_

#include <memory>
#include <string>

#include "libshard/store/object_store.h"

namespace libshard::store {

// A local folder: keys are paths below `root` ("" = keys are paths as
// given). Writes go to a temporary name and are renamed; List walks the
// folder.
std::unique_ptr<ObjectStore> NewLocalStore(const std::string& root);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_LOCAL_STORE_H_
