#!/usr/bin/env python3
"""ONNX test cases for what ONNX's own suite leaves out: stacked bidirectional recurrences, every GridSample mode and
padding, Det with pivoting (PyTorch's exports and outputs), DFT and STFT with lengths, inverse, complex input and
axes (one-node models, numpy.fft's values). RoiAlign's max mode has no reference here: PyTorch has no such op.

Each case is a folder in the layout of ONNX's backend tests (model.onnx, test_data_set_0/input_*.pb, output_*.pb),
so tests/onnx/backend_main.cpp runs them like the others (ctest onnx.torch_cases):

    /usr/bin/python3 tools/gen_onnx_torch_cases.py tests/onnx/torch_cases

Needs Debian's python3-torch and python3-onnx. Small inputs, fixed seeds: the files are committed.
"""
import os
import shutil
import sys

import onnx
import torch
from onnx import numpy_helper


def export(out_dir, name, module, inputs, input_names, opset):
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    module.eval()
    with torch.no_grad():
        outs = module(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    output_names = [f"out{k}" for k in range(len(outs))]
    torch.onnx.export(module, tuple(inputs), os.path.join(d, "model.onnx"), input_names=input_names,
                      output_names=output_names, opset_version=opset)
    m = onnx.load(os.path.join(d, "model.onnx"))
    graph_inputs = [i.name for i in m.graph.input]
    for k, (n, t) in enumerate(zip(input_names, inputs)):
        assert graph_inputs[k] == n, (graph_inputs, input_names)
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())
    for k, (n, t) in enumerate(zip(output_names, outs)):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.numpy(), n).SerializeToString())


def node_case(out_dir, name, op, inputs, outputs, opset=17, **attrs):
    """A one-node model with numpy's values as the reference (for ops PyTorch does not export, such as DFT)."""
    import numpy as np
    from onnx import helper
    d = os.path.join(out_dir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    names = [n for n, _ in inputs]
    vi = lambda n, a: helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
    graph = helper.make_graph([helper.make_node(op, names, [n for n, _ in outputs], **attrs)], name,
                              [vi(n, a) for n, a in inputs], [vi(n, np.asarray(a)) for n, a in outputs])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(d, "model.onnx"))
    for kind, items in (("input", inputs), ("output", outputs)):
        for k, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(a), n).SerializeToString())


def signal_cases(out_dir):
    import numpy as np
    rng = np.random.default_rng(0)
    c64 = lambda z: np.stack([z.real, z.imag], -1).astype(np.float32)
    x = rng.standard_normal((2, 10, 3, 1)).astype(np.float32)
    # real input zero-padded to 12, one-sided
    y = np.fft.rfft(np.pad(x[..., 0], ((0, 0), (0, 2), (0, 0))), axis=1)
    node_case(out_dir, "test_dft_onesided_padded", "DFT", [("x", x), ("n", np.array(12, np.int64))], [("y", c64(y))], onesided=1)
    # complex input cut to 7, inverse, along axis 2
    z = rng.standard_normal((2, 3, 9, 2)).astype(np.float32)
    y = np.fft.ifft((z[..., 0] + 1j * z[..., 1])[:, :, :7], axis=2)
    node_case(out_dir, "test_dft_inverse_complex_cut_axis2", "DFT", [("x", z), ("n", np.array(7, np.int64))], [("y", c64(y))], axis=2, inverse=1)
    # STFT of a complex signal, both sides, a window
    sig = rng.standard_normal((2, 40, 2)).astype(np.float32)
    win = np.hanning(10).astype(np.float32)
    zc = sig[..., 0] + 1j * sig[..., 1]
    frames = np.stack([zc[:, s:s + 10] * win for s in range(0, 40 - 10 + 1, 6)], 1)
    node_case(out_dir, "test_stft_complex_twosided_window", "STFT",
              [("signal", sig), ("step", np.array(6, np.int64)), ("window", win)], [("y", c64(np.fft.fft(frames, axis=2)))], onesided=0)


class Recurrent(torch.nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h0, *c0):
        if c0:
            y, (h, c) = self.rnn(x, (h0, c0[0]))
            return y, h, c
        y, h = self.rnn(x, h0)
        return y, h


class Det(torch.nn.Module):
    def forward(self, x):
        return torch.linalg.det(x)


class GridSample(torch.nn.Module):
    def __init__(self, mode, padding, align):
        super().__init__()
        self.args = dict(mode=mode, padding_mode=padding, align_corners=align)

    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(x, grid, **self.args)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/onnx/torch_cases"
    torch.manual_seed(0)
    # recurrences: two layers, both directions, batch first or not, with initial states
    for kind in ("RNN", "GRU", "LSTM"):
        for batch_first in (False, True):
            rnn = getattr(torch.nn, kind)(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=batch_first)
            x = torch.randn(2, 5, 3) if batch_first else torch.randn(5, 2, 3)
            h0 = torch.randn(4, 2, 4)
            inputs, names = [x, h0], ["x", "h0"]
            if kind == "LSTM":
                inputs.append(torch.randn(4, 2, 4))
                names.append("c0")
            name = f"test_{kind.lower()}_bidirectional_2layers{'_batch_first' if batch_first else ''}"
            export(out_dir, name, Recurrent(rnn), inputs, names, 14)
    signal_cases(out_dir)
    # det: batched, with pivoting, a singular matrix, 1x1
    a = torch.randn(3, 2, 5, 5)
    a[0, 1] = torch.tensor([[0.0, 1, 2, 3, 4], [1, 0, 0, 0, 0], [2, 1, 0, 0, 0], [0, 0, 0, 1, 0], [4, 3, 2, 1, 0]])
    a[1, 0, 4] = a[1, 0, 0] * 2  # singular
    export(out_dir, "test_det_batched_pivoting", Det(), [a], ["x"], 11)
    export(out_dir, "test_det_1x1", Det(), [torch.randn(4, 1, 1)], ["x"], 11)
    # grid_sample: every mode, padding and align_corners, points beyond the border included
    x = torch.randn(2, 3, 5, 4)
    grid = torch.rand(2, 6, 7, 2) * 2.6 - 1.3
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (False, True):
                name = f"test_gridsample_{mode}_{padding}{'_align_corners' if align else ''}"
                export(out_dir, name, GridSample(mode, padding, align), [x, grid], ["x", "grid"], 16)


if __name__ == "__main__":
    main()
