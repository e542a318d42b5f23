#!/usr/bin/env python3
"""ONNX test cases exported from PyTorch, for ops whose cases ONNX's own suite leaves out (bidirectional and
multi-layer recurrences, every GridSample mode and padding, RoiAlign's max mode is left out: PyTorch has no such op).

Each case is a folder in the layout of ONNX's backend tests (model.onnx, test_data_set_0/input_*.pb, output_*.pb),
with PyTorch's outputs as the expected ones, so tests/onnx/backend_main.cpp runs them like the others:

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
