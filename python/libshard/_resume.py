"""A saved global position (docs/reader.md, "Changing the number of GPUs") as libshard.torch's datasets and
samplers check and resume it; the positions themselves are :class:`libshard.Order`'s arithmetic."""
from typing import Any, Dict, Optional, Tuple

# The keys of a Loader state that define the epoch's global order: a saved state must match them.
# "permutation" names the shuffles' permutation (reader/sample_order.h kPermutationName).
_IDENTITY = ("seed", "order", "block_size", "window_blocks", "permutation", "samples", "dataset")


def _check_state(identity: Dict[str, Any], state: Dict[str, Any]) -> Tuple[int, int]:
    """(epoch, consumed) of a saved state; ValueError naming the field for another dataset, seed or order."""
    if "permutation" not in state and identity.get("order") == "sequential" and "permutation" in identity:
        state = dict(state, permutation=identity["permutation"])  # an earlier libshard's: file order is the same
    for k in ("epoch", "consumed") + tuple(identity):
        if k not in state:
            if k == "permutation":
                raise ValueError('state: lacks "permutation": saved by an earlier libshard, whose shuffle was another '
                                 'permutation; the position cannot continue in the saved run\'s order (load it with '
                                 'consumed 0 to start its epoch over)')
            raise ValueError('state: lacks "%s"' % k)
    for k, here in identity.items():
        if state[k] != here:
            raise ValueError('state["%s"]: saved by a dataset with another %s (%r, here %r): it cannot continue here'
                             % (k, k, state[k], here))
    for k in ("epoch", "consumed"):
        v = state[k]
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError("state: %s must be an integer, got %r" % (k, v))
    if not 0 <= state["consumed"] <= identity["samples"]:
        raise ValueError("state: consumed %d is outside 0..%d" % (state["consumed"], identity["samples"]))
    if not 0 <= state["epoch"] < 2 ** 63:
        raise ValueError("state: epoch %d is outside 0..2**63-1" % state["epoch"])
    return int(state["epoch"]), int(state["consumed"])


def _epoch_start(epoch: int, resume: Optional[Tuple[int, int]]) -> Tuple[int, int, Optional[Tuple[int, int]]]:
    """set_epoch(epoch): (epoch, where its pass starts, the loaded position still to resume): a loaded
    (epoch, consumed) is kept for its own epoch, any other epoch starts at 0."""
    if isinstance(epoch, bool) or not isinstance(epoch, int) or not 0 <= epoch < 2 ** 63:
        raise ValueError("epoch: expected an integer in 0..2**63-1, got %r" % (epoch,))
    if resume is not None and resume[0] == epoch:
        return int(epoch), resume[1], resume
    return int(epoch), 0, None


def _consumed_after(order: Any, start: int, batch: Any) -> int:
    """state_dict(batch=...): the global position after ``batch`` batches of a pass from ``start`` (ValueError
    for a batch count that is not an integer or past the rank's batches)."""
    if isinstance(batch, bool) or not isinstance(batch, int):
        raise ValueError("batch: expected an integer, got %r" % (batch,))
    if batch < 0:
        raise ValueError("batch: %d batches consumed is outside the epoch's %d batches from sample %d"
                         % (batch, order.rank_batches(start), start))
    return order.consumed(start, batch)
