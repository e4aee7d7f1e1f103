"""The data-parallel ``(rank, world_size)`` libshard.torch takes when none is given."""
import os
from typing import Tuple

import torch


def default_rank_and_world_size() -> Tuple[int, int]:
    """The data-parallel ``(rank, world_size)``: ``torch.distributed``'s when it is initialised, else the
    ``RANK`` and ``WORLD_SIZE`` environment variables (as set by torchrun), else ``(0, 1)``."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        try:
            return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        except ValueError:
            raise ValueError("RANK=%r, WORLD_SIZE=%r: expected integers"
                             % (os.environ["RANK"], os.environ["WORLD_SIZE"])) from None
    return 0, 1
