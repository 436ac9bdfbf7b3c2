"""The platform's BLAS through PyTorch (cuBLAS on an NVIDIA GPU, else the CPU's): matmul GFLOP/s in f32 and
f16 at the GPU benchmark's sizes. Usage: torch_matmul.py OUT_DIR [--small]; writes OUT_DIR/torch-matmul.json."""
import json
import os
import sys
import time

import torch


def time_matmul(n: int, dtype: torch.dtype, device: str) -> float:
    a = torch.randn(n, n, dtype=dtype, device=device)
    b = torch.randn(n, n, dtype=dtype, device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(2):
        a @ b
    sync()
    calls, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.4 or calls < 3:
        a @ b
        calls += 1
        if calls % 4 == 0:
            sync()
    sync()
    return (time.perf_counter() - t0) / calls * 1000


def main() -> None:
    out = sys.argv[1]
    small = "--small" in sys.argv
    device = "cuda" if torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name() if device == "cuda" else "cpu"
    sizes = [64, 128] if small else [1024, 2048, 4096]
    # cuBLAS may use TF32 for f32 unless told not to; report plain f32.
    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    path = os.path.join(out, "torch-matmul.json")

    def record(dtype: str, n: int, **fields: object) -> None:
        rows.append({"op": "torch-matmul", "device": name, "dtype": dtype, "n": n, **fields})
        with open(path, "w") as f:  # after each size, so run.sh's time limit keeps what finished
            json.dump(rows, f, indent=2)

    print(f"\nPyTorch {torch.__version__} matmul on {name} (n x n x n)")
    for dtype in (torch.float32, torch.float16):
        if dtype == torch.float16 and device == "cpu" and not small:
            continue  # the CPU's f16 matmul, where it exists, is far slower than its f32
        label = str(dtype)[6:]
        for n in sizes:
            try:
                ms = time_matmul(n, dtype, device)
            except RuntimeError as e:  # e.g. no f16 matmul on this build's CPU
                print(f"  {label:8} {n:5} | not run: {str(e).splitlines()[0]}")
                record(label, n, error=str(e))
                break
            g = 2 * n**3 / ms / 1e6
            print(f"  {label:8} {n:5} | {ms:9.3f} ms {g:10.1f} GFLOP/s")
            record(label, n, ms=ms, gflops=g)


if __name__ == "__main__":
    main()
