#!/usr/bin/env python3
"""Replays launches captured by femquad-bench's `ncu_capture` through CUDA's
driver (CuPy), so that Nsight Compute — which profiles CUDA launches only —
can read the hardware counters of femquad's OpenCL kernels: NVIDIA's OpenCL
compiles a program to PTX, which the capture keeps as the program binary; the
driver loads the same PTX here and the kernel runs on the captured buffers.

    ncu-replay.py check [--reps N] DIR...   run each capture, compare every buffer
                                            it changed with the OpenCL result, time
                                            it (CUDA events, median of N)
    ncu-replay.py once [--only K,..] DIR... launch each capture once (run under ncu)

    --maxnreg N,M,..  (check) also time each kernel rebuilt with at most N registers a
                      thread (PTX `.maxnreg`): what a register cap would give

DIR is a capture directory (with launch.txt) or a directory above them.
PTX from NVIDIA's OpenCL may read the global work offset from the driver's
environment registers (%envregN); femquad launches with offset 0, so they are
replaced by 0 (the count is printed).
"""

import pathlib
import re
import sys

import numpy as np
import cupy as cp

DTYPES = {"f32": np.float32, "f64": np.float64, "u32": np.uint32, "i32": np.int32,
          "u16": np.uint16, "u8": np.uint8, "u64": np.uint64}
SCALARS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class Capture:
    def __init__(self, d, maxnreg=None):
        self.dir = d
        self.values = {}
        self.buffers = {}  # index -> (element, before file, after file or None)
        for line in (d / "launch.txt").read_text().splitlines():
            key, _, rest = line.partition(" ")
            if key in ("kernel", "what"):
                setattr(self, key, rest)
            elif key in ("global", "nanoseconds"):
                setattr(self, key, int(rest))
            elif key == "ms":
                self.ms = float(rest)
            elif key == "local":
                self.local = None if rest == "none" else int(rest)
            elif key == "value":
                i, hexbytes = rest.split()
                raw = bytes.fromhex(hexbytes)
                self.values[int(i)] = np.frombuffer(raw, dtype=SCALARS[len(raw)])[0]
            elif key == "buffer":
                i, element, before, after = rest.split()
                self.buffers[int(i)] = (element, before, None if after == "-" else after)
        if self.local is None or self.global_ % self.local:
            raise SystemExit(f"{d}: global {self.global_} / local {self.local}: not a whole grid")
        ptx = (d / "program.ptx").read_text(errors="replace")
        ptx, self.envregs = re.subn(r"%envreg\d+", "0", ptx)
        if maxnreg is not None:
            # the directive goes between the entry's parameter list and its body
            ptx = re.sub(r"(\.entry\s+" + re.escape(self.kernel) + r"\s*\((?:[^()]|\([^()]*\))*\))",
                         lambda m: m.group(1) + f"\n.maxnreg {maxnreg}", ptx, count=1)
        patched = d / f"program.replay{'' if maxnreg is None else maxnreg}.ptx"
        patched.write_text(ptx)
        self.function = cp.RawModule(path=str(patched)).get_function(self.kernel)
        self.n_args = len(self.values) + len(self.buffers)

    @property
    def global_(self):
        return getattr(self, "global")

    def load(self):
        """Device arrays of every buffer in its state before the launch."""
        self.arrays = {i: cp.asarray(np.fromfile(self.dir / before, dtype=np.uint8))
                       for i, (_, before, _) in self.buffers.items()}

    def args(self):
        return tuple(self.values[i] if i in self.values else self.arrays[i]
                     for i in range(self.n_args))

    def launch(self):
        self.function((self.global_ // self.local,), (self.local,), self.args())

    def compare(self):
        """Worst relative difference of a changed buffer against OpenCL's result."""
        worst = 0.0
        for i, (element, _, after) in self.buffers.items():
            if after is None:
                continue
            dtype = DTYPES.get(element, np.uint8)
            want = np.fromfile(self.dir / after, dtype=dtype)
            got = cp.asnumpy(self.arrays[i]).view(dtype)
            if np.issubdtype(dtype, np.floating):
                scale = max(float(np.max(np.abs(want))), np.finfo(dtype).tiny)
                worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want))) / scale)
            elif not np.array_equal(got, want):
                worst = max(worst, float(np.count_nonzero(got != want)) / want.size)
        return worst


def timed(c, reps):
    """The launch's difference from OpenCL's result (first launch on the
    captured buffers) and its median time over `reps` launches after 3."""
    c.launch()
    cp.cuda.Device().synchronize()
    diff = c.compare()
    times = []
    for _ in range(reps + 3):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        c.launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return diff, float(np.median(times[3:]))


def captures(dirs):
    for d in dirs:
        d = pathlib.Path(d)
        found = [d] if (d / "launch.txt").exists() else sorted(p.parent for p in d.rglob("launch.txt"))
        yield from found


def main(argv):
    mode, argv = argv[0], argv[1:]
    reps, only, maxnregs = 20, None, []
    while argv and argv[0].startswith("--"):
        if argv[0] == "--reps":
            reps = int(argv[1])
        elif argv[0] == "--only":
            only = set(argv[1].split(","))
        elif argv[0] == "--maxnreg":
            maxnregs = [int(n) for n in argv[1].split(",")]
        argv = argv[2:]
    for d in captures(argv):
        c = Capture(d)
        if only is not None and c.kernel not in only:
            continue
        c.load()
        if mode == "once":
            c.launch()
            cp.cuda.Device().synchronize()
            print(f"{d}: {c.kernel} launched once", flush=True)
            release(c)
            continue
        diff, t = timed(c, reps)
        print(f"{d}: {c.kernel}: CUDA replay {t:.3f} ms (median of {reps}), OpenCL captured "
              f"{c.nanoseconds * 1e-6:.3f} ms; result vs OpenCL: {diff:.1e} relative; "
              f"{c.envregs} %envreg read(s) replaced; {c.function.num_regs} registers, "
              f"{c.function.local_size_bytes} B local a thread", flush=True)
        release(c)
        for n in maxnregs:
            r = Capture(d, maxnreg=n)
            r.load()
            diff, t = timed(r, reps)
            print(f"{d}: {c.kernel} .maxnreg {n}: {r.function.num_regs} registers, "
                  f"{r.function.local_size_bytes} B local a thread: CUDA replay {t:.3f} ms; "
                  f"result vs OpenCL: {diff:.1e} relative", flush=True)
            release(r)


def release(c):
    """Frees the capture's device arrays (the pool too: a profiler saves and
    restores what is allocated around each replayed pass)."""
    c.arrays = {}
    cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "once"):
        raise SystemExit(__doc__)
    main(sys.argv[1:])
