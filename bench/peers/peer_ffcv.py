"""FFCV: one .beton file holding libshard's JPEG bytes, read by ffcv.loader.Loader.

FFCV's RGBImageField always re-encodes what it is given (encode_jpeg via
OpenCV, ffcv/fields/rgb_image.py), so "the same bytes" needs a field that
stores the JPEG as it is: JPEGBytesField below writes the field's documented
metadata (mode 'jpg', width, height, data_ptr) over libshard's bytes. Reading
is FFCV's own decoders, unchanged (the file names the field by the subclass,
so the reader is told it is an RGBImageField: FFCV's custom_fields=).

Settings from FFCV's docs and ImageNet recipe (https://docs.ffcv.io/making_dataloaders.html,
https://docs.ffcv.io/parameter_tuning.html, github.com/libffcv/ffcv-imagenet
train_imagenet.py): os_cache=True (the dataset fits in RAM), order QUASI_RANDOM
for training (the recipe's choice; SEQUENTIAL for eval), num_workers = the
thread budget, drop_last, RandomResizedCropRGBImageDecoder((224, 224)) +
RandomHorizontalFlip for train, CenterCropRGBImageDecoder((224, 224),
ratio=224/256) for eval, then ToTensor (uint8 HWC, no copy). ToDevice /
ToTorchImage are the GPU half of the recipe and are left out. FFCV decodes
with libjpeg-turbo's fast IDCT (no option to change it): red and blue come out
about 1.2 levels darker than the accurate IDCT's (Pillow's, libshard's), which
the eval check's Δ shows.
"""
import os
import time

import contract


def _jpeg_field():
    import numpy as np
    from ffcv.fields import RGBImageField
    from ffcv.fields.rgb_image import IMAGE_MODES

    class JPEGBytesField(RGBImageField):
        """Stores (jpeg bytes, width, height) as the 'jpg' mode of RGBImageField, without re-encoding."""

        def __init__(self):
            super().__init__(write_mode="jpg")

        def encode(self, destination, item, malloc):
            jpeg, width, height = item
            data = np.frombuffer(jpeg, np.uint8)
            destination["mode"] = IMAGE_MODES["jpg"]
            destination["width"], destination["height"] = width, height
            destination["data_ptr"], storage = malloc(data.nbytes)
            storage[:] = data

    return JPEGBytesField


class _Samples:
    """An indexed dataset (what DatasetWriter.from_indexed_dataset takes) of
    libshard's samples: ((jpeg, width, height), label)."""

    def __init__(self, shards):
        import io
        from PIL import Image
        self.items = []
        for jpeg, label in contract.libshard_samples(shards):
            with Image.open(io.BytesIO(jpeg)) as im:
                w, h = im.size
            self.items.append(((jpeg, w, h), label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def write(args):
    import numpy as np
    from ffcv.fields import IntField
    from ffcv.reader import Reader
    from ffcv.writer import DatasetWriter
    os.makedirs(args.data, exist_ok=True)
    path = os.path.join(args.data, "data.beton")
    samples = _Samples(args.shards)
    writer = DatasetWriter(path, {"image": _jpeg_field()(), "label": IntField()}, num_workers=1)
    writer.from_indexed_dataset(samples)
    # Read the stored bytes back through FFCV's own reader: the alloc table
    # gives each sample's (pointer, size), the field's metadata its data_ptr.
    from ffcv.fields import RGBImageField
    reader = Reader(path, custom_handlers={"image": RGBImageField})
    raw = np.memmap(path, np.uint8, mode="r")
    sizes = {int(ptr): int(size) for _, ptr, size in reader.alloc_table}

    def stored(i):
        ptr = int(reader.metadata["f0"]["data_ptr"][i])
        return raw[ptr:ptr + sizes[ptr]].tobytes()
    return {"same_bytes": contract.check_same_bytes(args.shards, stored)}


def convert(args):
    """FFCV's own writer on the raw photos: RGBImageField(write_mode='jpg',
    jpeg_quality=90), resized on its side (max_resolution caps the longer
    side; 341 gives a 4:3 photo its shorter side of 256), DatasetWriter with a
    worker per core, from a torchvision ImageFolder as FFCV's write_imagenet.py."""
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter
    from torchvision.datasets import ImageFolder
    os.makedirs(args.data, exist_ok=True)
    ds = ImageFolder(args.photos)
    t0 = time.perf_counter()
    writer = DatasetWriter(os.path.join(args.data, "convert.beton"),
                           {"image": RGBImageField(write_mode="jpg", max_resolution=341, jpeg_quality=90),
                            "label": IntField()}, num_workers=contract.CORES)
    writer.from_indexed_dataset(ds)
    return dict(contract.converted(len(ds), t0), writer=f"DatasetWriter(num_workers={contract.CORES}), "
                "RGBImageField jpg q90, max_resolution=341")


def read(args):
    import ffcv
    import torch
    from ffcv.fields import RGBImageField
    from ffcv.fields.basics import IntDecoder
    from ffcv.fields.rgb_image import CenterCropRGBImageDecoder, RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import RandomHorizontalFlip, Squeeze, ToTensor
    train = args.workload == "train"
    torch.set_num_threads(1)
    size = (contract.SIZE, contract.SIZE)
    if train:
        image = [RandomResizedCropRGBImageDecoder(size, scale=contract.SCALE, ratio=contract.RATIO),
                 RandomHorizontalFlip(), ToTensor()]
    else:
        image = [CenterCropRGBImageDecoder(size, ratio=contract.SIZE / contract.RESIZE), ToTensor()]
    loader = Loader(os.path.join(args.data, "data.beton"), batch_size=args.batch, num_workers=contract.CORES,
                    order=OrderOption.QUASI_RANDOM if train else OrderOption.SEQUENTIAL, os_cache=True,
                    drop_last=True, pipelines={"image": image, "label": [IntDecoder(), ToTensor(), Squeeze()]},
                    # The file names its image field by our subclass; its layout is RGBImageField's.
                    custom_fields={"image": RGBImageField})
    info = {"version": ffcv.__version__, "torch": torch.__version__,
            "shuffle": "QUASI_RANDOM (buffer-like, per page)" if train else "none (sequential)",
            "settings": f"Loader(num_workers={contract.CORES}, os_cache=True), "
                        + ("RandomResizedCropRGBImageDecoder + flip" if train else "CenterCropRGBImageDecoder")}

    def batches(epoch):
        for images, labels in loader:
            yield images, labels
    return contract.run_epochs(args, batches, info)


if __name__ == "__main__":
    contract.main("ffcv", write=write, convert=convert, read=read)
