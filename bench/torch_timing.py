"""CUDA-event timing and the copy-bandwidth yardstick shared by the torch peer
scripts in bench/."""
import torch


def time_ms(fn, repeats=50, warmup=3, before=None):
    """Mean milliseconds of fn() over `repeats` back-to-back runs after `warmup`
    runs; before(), if given, is queued after the warm-up and before the start
    event (gemv_torch.py queues a long copy there, so the timed launches queue
    up behind it rather than trickle in from the host)."""
    for _ in range(warmup):
        fn()
    if before is not None:
        before()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeats):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / repeats


def copy_gbs(nbytes=512 << 20, repeats=50):
    """Device-to-device copy bandwidth in GB/s (bytes read + written) over a
    buffer of nbytes, with the buffers returned for reuse."""
    a = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = time_ms(lambda: b.copy_(a), repeats, warmup=1)
    return 2 * nbytes / (ms * 1e-3) / 1e9, a, b


def print_bandwidth_table(title, rows, gbs_copy):
    """rows: (name, bytes moved, ms); one line each with GB/s and the share of
    the copy bandwidth."""
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; copy {gbs_copy:.0f} GB/s (read + write)")
    width = max([len(title)] + [len(r[0]) for r in rows]) + 2
    print(f"{title:<{width}} {'MB moved':>10} {'us':>10} {'GB/s':>9} {'of copy':>8}")
    for name, nbytes, ms in rows:
        gbs = nbytes / (ms * 1e-3) / 1e9
        print(f"{name:<{width}} {nbytes / 1e6:>10.1f} {ms * 1e3:>10.2f} {gbs:>9.0f} {100 * gbs / gbs_copy:>7.0f}%")
