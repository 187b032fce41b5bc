"""CUDA-event timing shared by the torch peer scripts in bench/."""
import torch


def time_ms(fn, repeats=50, warmup=3):
    """Mean milliseconds of fn() over `repeats` back-to-back runs after `warmup` runs."""
    for _ in range(warmup):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeats
