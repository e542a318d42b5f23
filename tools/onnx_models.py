#!/usr/bin/env python3
"""Real architectures as ONNX files: torchvision's models (random weights, nothing downloaded) and a small
nn.TransformerEncoder, exported by PyTorch, with PyTorch's outputs as the reference.

    onnx_models.py export NAME DIR [BATCH]  writes DIR/NAME.onnx, DIR/NAME.input.npy and DIR/NAME.output.npy
                                            (DIR/NAME.bBATCH.* for another batch size)
    onnx_models.py torch-bench NAME BATCH RUNS  PyTorch eager's median latency in ms (bench/onnx_models.sh)
    onnx_models.py check GOT.npy WANT.npy   exits 1 unless the two agree (rtol 1e-3, atol 1e-4 of the largest value)
    onnx_models.py list                  the model names

The weights exist only where the model is exported (the files are large, so they are made at test time, not
committed), so the reference output is made by the same export: it is PyTorch's own forward on the same weights.
Needs Debian's python3-torch and python3-torchvision; exits 77 (a skip for ctest) where they are missing.
"""
import os
import sys

MODELS = {  # name: input shape (small images; vit_b_16 needs its 224)
    "resnet18": (1, 3, 112, 112),
    "resnet50": (1, 3, 112, 112),
    "mobilenet_v2": (1, 3, 112, 112),
    "mobilenet_v3_large": (1, 3, 112, 112),
    "efficientnet_b0": (1, 3, 112, 112),
    "squeezenet1_1": (1, 3, 112, 112),
    "shufflenet_v2_x1_0": (1, 3, 112, 112),
    "convnext_tiny": (1, 3, 64, 64),
    "vit_b_16": (1, 3, 224, 224),
    "transformer_encoder": (2, 16, 64),
}


def build(name):
    import torch
    torch.manual_seed(0)
    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def calibrate(model, shape):
    """Makes a randomly initialized model's outputs informative: torchvision zeroes some heads (vit's) and, in eval
    mode, a batch norm with fresh statistics normalizes nothing, so deep nets' outputs shrink to 1e-10 or to zero.
    Zero heads get random weights and the batch norms get statistics from two batches of random images."""
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in model.modules():
        if isinstance(m, torch.nn.Linear) and not m.weight.any():
            torch.nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # a plain average of the batches
    if norms:  # (with Debian's reference BLAS a forward of vit_b_16 takes minutes: only where it matters)
        model.train()
        with torch.no_grad():
            for _ in range(2):
                model(torch.rand(4, *shape[1:]))
    return model.eval()


def input_shape(name, batch=None):
    return (batch or MODELS[name][0],) + tuple(MODELS[name][1:])


def export(name, out_dir, batch=None):
    import numpy as np
    import torch
    model = calibrate(build(name), MODELS[name])
    torch.manual_seed(1)
    x = torch.rand(*input_shape(name, batch))
    with torch.no_grad():
        y = model(x)
    os.makedirs(out_dir, exist_ok=True)
    stem = name if batch is None else f"{name}.b{batch}"
    path = os.path.join(out_dir, stem + ".onnx")
    torch.onnx.export(model, (x,), path + ".tmp", input_names=["input"], output_names=["output"], opset_version=17)
    os.replace(path + ".tmp", path)
    np.save(os.path.join(out_dir, stem + ".input.npy"), x.numpy())
    np.save(os.path.join(out_dir, stem + ".output.npy"), y.numpy())


def torch_bench(name, batch, runs):
    import time
    import torch
    torch.set_num_threads(os.cpu_count())
    model = calibrate(build(name), MODELS[name])
    x = torch.rand(*input_shape(name, batch))
    times = []
    with torch.no_grad():
        for r in range(runs + 2):  # two warm-up runs, as tg_onnx's capture
            t0 = time.perf_counter()
            model(x)
            if r >= 2:
                times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    print(f"{times[len(times) // 2]:.3f}")


def check(got_path, want_path):
    import numpy as np
    got, want = np.load(got_path), np.load(want_path)
    if got.shape != want.shape or got.dtype != want.dtype:
        print(f"shape/dtype {got.shape} {got.dtype}, expected {want.shape} {want.dtype}")
        return 1
    if float(np.abs(want).max()) < 1e-3 or float(want.std()) < 1e-4:
        print(f"the reference is degenerate (largest value {float(np.abs(want).max()):.3g}): it would check nothing")
        return 1
    atol = 1e-4 * float(np.abs(want).max())
    bad = ~np.isclose(got, want, rtol=1e-3, atol=atol)
    err = float(np.abs(got - want).max())
    print(f"max abs error {err:.3g} (largest value {float(np.abs(want).max()):.3g}); {int(bad.sum())} of {want.size} values outside tolerance")
    return 1 if bad.any() else 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "list":
        print("\n".join(MODELS))
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 5 and sys.argv[1] == "torch-bench":
        torch_bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    if len(sys.argv) in (4, 5) and sys.argv[1] == "export":
        try:
            import numpy, torch  # noqa: F401
            if sys.argv[2] != "transformer_encoder":
                import torchvision  # noqa: F401
        except ImportError as e:
            print(f"skipped: {e} (Debian: apt-get install python3-torch python3-torchvision)")
            return 77
        export(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else None)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
