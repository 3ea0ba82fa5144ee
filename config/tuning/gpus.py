"""The order of the per-GPU tables the fit scripts write: the GPU model named in
config/tuning/default-gpu first (the one a GPU without its own measurements gets, and the host
types), then the others by name, so that measuring a new GPU model changes nothing for the others."""
import os


def default_gpu():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "default-gpu")) as f:
        return f.read().strip()


def ordered(items, gpu_of):
    """items sorted with the default GPU model's first, the rest by GPU name."""
    first = default_gpu()
    return sorted(items, key=lambda it: (gpu_of(it) != first, gpu_of(it)))
