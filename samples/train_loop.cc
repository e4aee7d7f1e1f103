// train_loop: a C++ training-loop skeleton on libshard's reader. It opens
// shards, draws shuffled, augmented uint8 batches from a BatchLoader, and
// "trains" a softmax-regression classifier on them (a stand-in for the real
// model: replace Step() with a copy to the GPU and a framework call). It
// prints the mean loss per epoch, saves the loader's position half-way and
// shows that a fresh loader restored there gives the same next batch.
//
//   train_loop [--epochs N] [--size S] [--split NAME] SHARDS_OR_MANIFEST...
// Exits 1 if the loss did not go down (the tests run it on the samples).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"

namespace reader = libshard::reader;

namespace {

struct Model {
  int inputs = 0;
  int classes = 0;
  std::vector<float> w;  // classes x inputs
  std::vector<float> b;

  // One SGD step on a batch; returns the mean cross-entropy before the step.
  double Step(const reader::Batch& batch, float lr) {
    std::vector<float> x(inputs), logits(classes), grad_w(w.size(), 0.f), grad_b(classes, 0.f);
    double loss = 0;
    for (size_t i = 0; i < batch.size; ++i) {
      const uint8_t* px = batch.images + i * inputs;
      for (int k = 0; k < inputs; ++k) x[k] = px[k] / 255.f - 0.5f;
      float mx = -1e30f;
      for (int c = 0; c < classes; ++c) {
        float z = b[c];
        for (int k = 0; k < inputs; ++k) z += w[c * inputs + k] * x[k];
        logits[c] = z;
        mx = std::max(mx, z);
      }
      double sum = 0;
      for (int c = 0; c < classes; ++c) sum += std::exp(logits[c] - mx);
      const int y = static_cast<int>(batch.labels[i]);
      loss += -(logits[y] - mx - std::log(sum));
      for (int c = 0; c < classes; ++c) {
        const float g = static_cast<float>(std::exp(logits[c] - mx) / sum) - (c == y ? 1.f : 0.f);
        grad_b[c] += g;
        for (int k = 0; k < inputs; ++k) grad_w[c * inputs + k] += g * x[k];
      }
    }
    const float scale = lr / static_cast<float>(batch.size);
    for (size_t k = 0; k < w.size(); ++k) w[k] -= scale * grad_w[k];
    for (int c = 0; c < classes; ++c) b[c] -= scale * grad_b[c];
    return loss / static_cast<double>(batch.size);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int epochs = 8, size = 28;
  std::string split;
  std::vector<std::string> shards;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--epochs" && i + 1 < argc) {
      epochs = std::stoi(argv[++i]);
    } else if (a == "--size" && i + 1 < argc) {
      size = std::stoi(argv[++i]);
    } else if (a == "--split" && i + 1 < argc) {
      split = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      std::cerr << "usage: train_loop [--epochs N] [--size S] [--split NAME] SHARDS_OR_MANIFEST...\n";
      return 2;
    } else {
      shards.push_back(a);
    }
  }
  if (shards.empty()) {
    std::cerr << "usage: train_loop [--epochs N] [--size S] [--split NAME] SHARDS_OR_MANIFEST...\n";
    return 2;
  }
  reader::DatasetOptions dopt;
  dopt.split = split;  // for a manifest.json
  auto ds = reader::Dataset::Open(shards, dopt);
  if (!ds.ok()) {
    std::cerr << "train_loop: " << ds.status() << "\n";
    return 1;
  }
  std::shared_ptr<const reader::Dataset> dataset = std::move(*ds);
  reader::BatchLoaderOptions o;
  o.batch_size = 16;
  o.height = o.width = size;
  o.channels = 1;
  o.threads = 2;
  o.order.kind = reader::OrderKind::kShuffle;
  o.order.seed = 1;
  o.augment = reader::Augment::kRandomResizedCrop;
  o.rrc.scale_min = 0.6;  // mild: 28x28 garments
  auto loader = reader::BatchLoader::Create(dataset, o);
  if (!loader.ok()) {
    std::cerr << "train_loop: " << loader.status() << "\n";
    return 1;
  }
  Model model;
  model.inputs = size * size;
  model.classes = 10;
  model.w.assign(static_cast<size_t>(model.inputs) * model.classes, 0.f);
  model.b.assign(model.classes, 0.f);

  std::vector<double> epoch_loss;
  reader::Position saved;
  std::vector<uint8_t> batch_after_save;
  for (int e = 0; e < epochs; ++e) {
    double sum = 0;
    const uint64_t n = (*loader)->batches_per_epoch();
    for (uint64_t i = 0; i < n; ++i) {
      if (e == epochs / 2 && i == n / 2) saved = (*loader)->position();
      reader::Batch batch;
      libshard::Status s = (*loader)->Next(&batch);
      if (!s.ok()) {
        std::cerr << "train_loop: " << s << "\n";
        return 1;
      }
      if (e == epochs / 2 && i == n / 2) batch_after_save.assign(batch.images, batch.images + batch.size * size * size);
      sum += model.Step(batch, 0.05f);
    }
    epoch_loss.push_back(sum / static_cast<double>(n));
    std::printf("epoch %d: mean loss %.4f\n", e, epoch_loss.back());
  }
  // Resume: a fresh loader restored at the saved position gives the same batch.
  auto again = reader::BatchLoader::Create(dataset, o);
  reader::Batch b;
  if (!again.ok() || !(*again)->Seek(saved).ok() || !(*again)->Next(&b).ok() ||
      std::memcmp(b.images, batch_after_save.data(), batch_after_save.size()) != 0) {
    std::cerr << "train_loop: resume did not give the same batch\n";
    return 1;
  }
  std::printf("resume at epoch %llu batch %llu: same batch\n", static_cast<unsigned long long>(saved.epoch),
              static_cast<unsigned long long>(saved.batch));
  if (!(epoch_loss.back() < epoch_loss.front())) {
    std::cerr << "train_loop: the loss did not go down\n";
    return 1;
  }
  return 0;
}
