// Batch memory for Python (docs/reader.md, "Batches without copies"):
//   _BatchOwner  the base object of a Loader batch's numpy arrays: holds the
//                batch's BatchBlock, so the memory lives while any array (or a
//                torch tensor made from one) does.
//   _SlotSet     a fixed set of batch slots for BatchPool::Slots: either a
//                file-backed shared-memory segment (created by a DataLoader
//                worker, mapped by the trainer process) or caller buffers
//                (pinned host memory), with one busy word per slot.
//   _SlotLease   the trainer's hold on one slot of a segment: a writable
//                buffer over the slot whose destruction clears the slot's busy
//                word (compare-and-swap from the hand-out's token).
//
// Segment layout (all little-endian, native):
//   [0, 64)            header: magic, version, slots, image bytes, labels,
//                      mask bytes, slot bytes
//   [64, 64 + 12 n)    busy[n], holder_pid[n], received[n] (uint32 each)
//   [header, ...)      slot i at header + i * slot_bytes: images, labels
//                      (64-byte aligned), masks (64-byte aligned)
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "libshard/reader/batch_pool.h"
#include "py_common.h"

namespace libshard_py {
namespace {

using libshard::reader::BatchBlock;
using libshard::reader::BatchBuffers;
using libshard::reader::BatchShape;

constexpr char kMagic[8] = {'L', 'S', 'H', 'S', 'L', 'O', 'T', '1'};
constexpr size_t kPage = 4096;
constexpr uint64_t kMaxSlots = 1024;

size_t Round(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Header {
  char magic[8];
  uint64_t slots, image_bytes, labels, mask_bytes, slot_bytes;
  uint64_t reserved[2];
};
static_assert(sizeof(Header) == 64, "the header is 64 bytes");

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// OSError of the errno's subclass (FileNotFoundError, ...) naming `path`.
[[noreturn]] void RaiseErrno(const std::string& path, int err) {
  errno = err;
  PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
  throw py::error_already_set();
}

}  // namespace

// See the file comment.
class SlotSet {
 public:
  // A new segment file at `path` (refused if it exists), space reserved up
  // front (posix_fallocate: a full /dev/shm is an error here, not a SIGBUS
  // later).
  static std::shared_ptr<SlotSet> Create(const std::string& path, uint64_t slots, const BatchShape& shape) {
    if (slots == 0 || slots > kMaxSlots) {
      throw py::value_error("slots: " + std::to_string(slots) + " is not in 1.." + std::to_string(kMaxSlots));
    }
    auto set = std::shared_ptr<SlotSet>(new SlotSet());
    set->shape_ = shape;
    set->slots_ = slots;
    set->slot_bytes_ = SlotBytes(shape);
    set->header_bytes_ = Round(sizeof(Header) + 12 * slots, kPage);
    set->size_ = set->header_bytes_ + slots * set->slot_bytes_;
    const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) RaiseErrno(path, errno);
    const int err = posix_fallocate(fd, 0, static_cast<off_t>(set->size_));
    if (err != 0) {
      close(fd);
      unlink(path.c_str());
      PyErr_SetString(PyExc_OSError, (Errno(path, err) + " (reserving " + std::to_string(set->size_) +
                                      " bytes of shared memory for batch slots)")
                                         .c_str());
      throw py::error_already_set();
    }
    set->Map(fd, path);
    close(fd);
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof(kMagic));
    h.slots = slots;
    h.image_bytes = shape.image_bytes;
    h.labels = shape.labels;
    h.mask_bytes = shape.mask_bytes;
    h.slot_bytes = set->slot_bytes_;
    std::memcpy(set->base_, &h, sizeof(h));
    return set;
  }

  // An existing segment file; ValueError if it is not one of ours.
  static std::shared_ptr<SlotSet> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) RaiseErrno(path, errno);
    struct stat st {};
    Header h{};
    if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < sizeof(Header) ||
        pread(fd, &h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h)) ||
        std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.slots == 0 || h.slots > kMaxSlots) {
      close(fd);
      throw py::value_error(path + ": not a libshard batch-slot segment");
    }
    auto set = std::shared_ptr<SlotSet>(new SlotSet());
    set->shape_ = BatchShape{h.image_bytes, h.labels, h.mask_bytes};
    set->slots_ = h.slots;
    set->slot_bytes_ = SlotBytes(set->shape_);
    set->header_bytes_ = Round(sizeof(Header) + 12 * h.slots, kPage);
    set->size_ = set->header_bytes_ + h.slots * set->slot_bytes_;
    if (h.slot_bytes != set->slot_bytes_ || static_cast<size_t>(st.st_size) != set->size_) {
      close(fd);
      throw py::value_error(path + ": batch-slot segment of an unexpected size");
    }
    set->Map(fd, path);
    close(fd);
    return set;
  }

  // Slots over caller buffers (e.g. numpy views of pinned torch tensors),
  // each at least slot_bytes(shape) long; busy words of its own.
  static std::shared_ptr<SlotSet> FromBuffers(const py::list& buffers, const BatchShape& shape) {
    auto set = std::shared_ptr<SlotSet>(new SlotSet());
    set->shape_ = shape;
    set->slots_ = buffers.size();
    set->slot_bytes_ = SlotBytes(shape);
    if (set->slots_ == 0 || set->slots_ > kMaxSlots)
      throw py::value_error("slots: need 1.." + std::to_string(kMaxSlots));
    set->local_busy_ = std::make_unique<std::atomic<uint32_t>[]>(set->slots_);
    for (size_t i = 0; i < set->slots_; ++i) {
      py::buffer_info info = py::reinterpret_borrow<py::buffer>(buffers[i]).request(true);
      if (static_cast<size_t>(info.size * info.itemsize) < set->slot_bytes_) {
        throw py::value_error("slot buffer " + std::to_string(i) + " holds fewer than " +
                              std::to_string(set->slot_bytes_) + " bytes");
      }
      set->local_busy_[i] = 0;
      set->held_.push_back(buffers[i]);
      set->local_base_.push_back(static_cast<uint8_t*>(info.ptr));
    }
    return set;
  }

  ~SlotSet() {
    if (base_ != nullptr) munmap(base_, size_);
  }

  static size_t SlotBytes(const BatchShape& s) {
    return Round(Round(s.image_bytes, 64) + Round(s.labels * 8, 64) + Round(s.mask_bytes, 64), kPage);
  }

  const BatchShape& shape() const { return shape_; }
  uint64_t slots() const { return slots_; }
  size_t slot_bytes() const { return slot_bytes_; }

  uint8_t* SlotBase(size_t i) const {
    return base_ != nullptr ? base_ + header_bytes_ + i * slot_bytes_ : local_base_[i];
  }
  BatchBuffers Buffers(size_t i) const {
    uint8_t* p = SlotBase(i);
    const size_t labels_at = Round(shape_.image_bytes, 64), masks_at = labels_at + Round(shape_.labels * 8, 64);
    return {p, reinterpret_cast<int64_t*>(p + labels_at), shape_.mask_bytes != 0 ? p + masks_at : nullptr};
  }
  std::vector<BatchBuffers> AllBuffers() const {
    std::vector<BatchBuffers> v;
    for (size_t i = 0; i < slots_; ++i) v.push_back(Buffers(i));
    return v;
  }
  std::atomic<uint32_t>* busy() const {
    return base_ != nullptr ? reinterpret_cast<std::atomic<uint32_t>*>(base_ + sizeof(Header)) : local_busy_.get();
  }
  std::atomic<uint32_t>* holder() const { return busy() + slots_; }
  std::atomic<uint32_t>* received() const { return busy() + 2 * slots_; }
  bool shared() const { return base_ != nullptr; }

  void Check(uint64_t slot) const {
    if (slot >= slots_) throw py::index_error("slot " + std::to_string(slot) + " out of range");
  }

  // Clears busy[slot] if it still holds `token`; true if it did.
  bool Release(uint64_t slot, uint32_t token) {
    Check(slot);
    return busy()[slot].compare_exchange_strong(token, 0);
  }

  // Worker side, at the start of an iteration: a slot taken by a worker
  // process that no longer exists and never received by the trainer can only
  // be a batch that was thrown away unread (an abandoned DataLoader
  // iterator: batches in the worker's ring or in the queue): free it.
  // Returns how many were freed.
  size_t ReclaimOrphans() {
    if (!shared()) return 0;
    size_t n = 0;
    for (size_t i = 0; i < slots_; ++i) {
      uint32_t token = busy()[i].load();
      const uint32_t pid = holder()[i].load();
      if (token == 0 || pid == 0 || received()[i].load() == token) continue;
      if (static_cast<pid_t>(pid) == getpid()) continue;
      if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
      if (busy()[i].compare_exchange_strong(token, 0)) ++n;
    }
    return n;
  }

 private:
  SlotSet() = default;
  void Map(int fd, const std::string& path) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) RaiseErrno(path, errno);
    base_ = static_cast<uint8_t*>(p);
  }

  BatchShape shape_;
  uint64_t slots_ = 0;
  size_t slot_bytes_ = 0, header_bytes_ = 0, size_ = 0;
  uint8_t* base_ = nullptr;                              // the mapping (shared segments)
  std::unique_ptr<std::atomic<uint32_t>[]> local_busy_;  // caller buffers
  std::vector<uint8_t*> local_base_;
  std::vector<py::object> held_;
};

namespace {

struct BatchOwner {
  std::shared_ptr<BatchBlock> block;
  py::object keep_alive;  // the _SlotSet whose memory the block may be
};

// The trainer's hold on one slot (see the file comment).
struct SlotLease {
  std::shared_ptr<SlotSet> set;
  uint64_t slot = 0;
  uint32_t token = 0;
  ~SlotLease() {
    if (set != nullptr) set->Release(slot, token);
  }
};

}  // namespace

py::object WrapBatchOwner(std::shared_ptr<BatchBlock> block, py::object keep_alive) {
  return py::cast(BatchOwner{std::move(block), std::move(keep_alive)});
}

std::shared_ptr<libshard::reader::BatchPool> SlotPool(const py::object& slot_set, size_t keep) {
  if (!py::isinstance<SlotSet>(slot_set)) throw py::type_error("slots: expected a libshard._SlotSet");
  const SlotSet& s = slot_set.cast<const SlotSet&>();
  return Take(
      libshard::reader::BatchPool::Slots(s.shape(), s.AllBuffers(), s.busy(), keep, s.shared() ? s.holder() : nullptr));
}

void BindBatchMemory(py::module_& m) {
  py::class_<BatchOwner>(m, "_BatchOwner", "The memory of one Loader batch (the base of its arrays)")
      .def_property_readonly("slot", [](const BatchOwner& o) { return o.block ? o.block->slot() : -1; })
      .def_property_readonly("token", [](const BatchOwner& o) { return o.block ? o.block->token() : 0u; })
      .def(
          "hand_off",
          [](BatchOwner& o) {
            if (o.block) o.block->set_handed_off();
          },
          "The batch went to another process by reference: that process frees its slot");

  py::class_<SlotSet, std::shared_ptr<SlotSet>>(m, "_SlotSet", "Batch slots for a Loader (see py_batch_memory.cc)")
      .def_static(
          "create",
          [](const std::string& path, uint64_t slots, size_t image_bytes, size_t labels, size_t mask_bytes) {
            return SlotSet::Create(path, slots, BatchShape{image_bytes, labels, mask_bytes});
          },
          py::arg("path"), py::arg("slots"), py::arg("image_bytes"), py::arg("labels"), py::arg("mask_bytes"))
      .def_static("open", &SlotSet::Open, py::arg("path"))
      .def_static(
          "from_buffers",
          [](const py::list& buffers, size_t image_bytes, size_t labels, size_t mask_bytes) {
            return SlotSet::FromBuffers(buffers, BatchShape{image_bytes, labels, mask_bytes});
          },
          py::arg("buffers"), py::arg("image_bytes"), py::arg("labels"), py::arg("mask_bytes"))
      .def_static("slot_bytes_for",
                  [](size_t image_bytes, size_t labels, size_t mask_bytes) {
                    return SlotSet::SlotBytes(BatchShape{image_bytes, labels, mask_bytes});
                  })
      .def_property_readonly("slots", &SlotSet::slots)
      .def_property_readonly(
          "mapping",
          [](const SlotSet& s) {
            // py::tuple on both arms: pybind11 3's make_tuple types each tuple by its items.
            return s.shared() ? py::tuple(py::make_tuple(reinterpret_cast<uintptr_t>(s.SlotBase(0)),
                                                         s.slots() * s.slot_bytes()))
                              : py::tuple(py::make_tuple(0, 0));
          },
          "(address, bytes) of the slots of a shared segment, for cudaHostRegister; (0, 0) otherwise")
      .def_property_readonly("shape",
                             [](const SlotSet& s) {
                               return py::make_tuple(s.shape().image_bytes, s.shape().labels, s.shape().mask_bytes);
                             })
      .def("busy",
           [](const SlotSet& s, uint64_t i) {
             s.Check(i);
             return s.busy()[i].load();
           })
      .def("mark_received",
           [](SlotSet& s, uint64_t i, uint32_t token) {
             s.Check(i);
             s.received()[i].store(token);
           })
      .def("release", &SlotSet::Release, py::arg("slot"), py::arg("token"))
      .def("reclaim_orphans", &SlotSet::ReclaimOrphans)
      .def(
          "lease",
          [](const std::shared_ptr<SlotSet>& s, uint64_t slot, uint32_t token) {
            s->Check(slot);
            auto l = std::make_unique<SlotLease>();
            l->set = s;
            l->slot = slot;
            l->token = token;
            return l;
          },
          py::arg("slot"), py::arg("token"),
          "A writable buffer over the slot that frees it (if still `token`'s) when the last view of it dies");

  py::class_<SlotLease>(m, "_SlotLease", py::buffer_protocol()).def_buffer([](SlotLease& l) {
    return py::buffer_info(l.set->SlotBase(l.slot), 1, py::format_descriptor<uint8_t>::format(), 1,
                           {static_cast<py::ssize_t>(l.set->slot_bytes())}, {1}, false);
  });
}

}  // namespace libshard_py
