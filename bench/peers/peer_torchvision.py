"""torchvision: ImageFolder of the stored JPEG files + torch DataLoader.

Settings as torchvision's ImageNet reference recipe (references/classification/
train.py and presets.py, https://github.com/pytorch/vision/tree/main/references/classification):
PIL decode (its default backend), eval Resize(256) + CenterCrop(224), train
RandomResizedCrop(224) (scale 0.08-1, ratio 3/4-4/3) + RandomHorizontalFlip,
a DataLoader with shuffle (global: a RandomSampler permutation) and
num_workers = the thread budget. PILToTensor in place of ToTensor + Normalize
so the batch is uint8 CHW as the contract asks. persistent_workers=True (the
DataLoader docs, https://pytorch.org/docs/stable/data.html) so the timed
epochs do not pay the workers' start; the workers count in the thread budget.
"""
import os
import time

import contract


def write(args):
    """An ImageFolder of libshard's stored JPEG bytes, one folder per label;
    file names keep libshard's record order."""
    for i, (jpeg, label) in enumerate(contract.libshard_samples(args.shards)):
        folder = os.path.join(args.data, f"c{label:04d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{i:07d}.jpg"), "wb") as f:
            f.write(jpeg)
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(args.data) for n in ns)
    by_index = {int(os.path.basename(p)[:7]): p for p in files}
    return {"same_bytes": contract.check_same_bytes(args.shards, lambda i: open(by_index[i], "rb").read())}


def convert(args):
    """ImageFolder has no writer: the conversion is Pillow's resize in a pool
    of CORES processes writing the files."""
    t0 = time.perf_counter()
    n = 0
    for i, jpeg, label in contract.resized_photos(args.photos):
        folder = os.path.join(args.data, f"c{label:04d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{i:07d}.jpg"), "wb") as f:
            f.write(jpeg)
        n += 1
    return dict(contract.converted(n, t0), writer="Pillow in a pool of processes, files")


def transforms(workload):
    from torchvision import transforms as T
    if workload == "train":
        return T.Compose([T.RandomResizedCrop(contract.SIZE, scale=contract.SCALE, ratio=contract.RATIO),
                          T.RandomHorizontalFlip(), T.PILToTensor()])
    return T.Compose([T.Resize(contract.RESIZE), T.CenterCrop(contract.SIZE), T.PILToTensor()])


def pil_rgb(jpeg):
    """Decodes JPEG bytes with Pillow, as ImageFolder's default loader does
    (the torch-based peers without a decoder of their own use this and
    transforms() in their DataLoader workers, as their docs show)."""
    import io
    from PIL import Image
    with Image.open(io.BytesIO(jpeg)) as im:
        return im.convert("RGB")


def read(args):
    import torch
    import torchvision
    torch.set_num_threads(1)  # the workers decode; the trainer only collects
    ds = torchvision.datasets.ImageFolder(args.data, transform=transforms(args.workload))
    dl = torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=args.workload == "train",
                                     num_workers=contract.CORES, drop_last=True, persistent_workers=True)
    info = {"version": torchvision.__version__, "torch": torch.__version__,
            "shuffle": "global (RandomSampler)" if args.workload == "train" else "none (sequential)",
            "settings": f"ImageFolder (PIL) + DataLoader(num_workers={contract.CORES}, persistent_workers)"}

    def batches(epoch):
        torch.manual_seed(epoch)
        for images, labels in dl:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("torchvision", write=write, convert=convert, read=read)
