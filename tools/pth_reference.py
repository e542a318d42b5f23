#!/usr/bin/env python3
"""PyTorch checkpoints written by torch.save (Debian's python3-torch) for tinygrad.cpp's torch_load tests.

    pth_reference.py write DIR   DIR/state.pth: views of one storage (transposed, a row, an expanded column, a
                                 slice from an offset), every dtype torch_load reads, 0-d and empty tensors, an
                                 nn.Module's parameters and a nested dict with non-tensor values; DIR/expected/
                                 NAME.npy with each tensor's values (bfloat16 as its float32 values) and
                                 DIR/expected.json with each tensor's dtype. Also DIR/evil_*.pth: checkpoints whose
                                 pickle calls os.system, builtins.eval and a class of the saving program, each
                                 naming the command `touch /tmp/tg_pth_pwned`, which loading must never run. And
                                 DIR/batchnorm.pth: a BatchNorm2d's state after one training step.
Regenerate the committed files with: /usr/bin/python3 tools/pth_reference.py write tests/golden/pth
"""
import json
import os
import sys

import numpy as np
import torch

DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16", torch.bfloat16: "bfloat16",
          torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8", torch.uint8: "uint8",
          torch.bool: "bool"}


class Evil:
  def __init__(self, how):
    self.how = how

  def __reduce__(self):
    cmd = "touch /tmp/tg_pth_pwned"
    if self.how == "system": return (os.system, (cmd,))
    return (eval, ("__import__('os').system('" + cmd + "')",))


class Custom:  # a class of the saving program: unpickling it would import and run that program's code
  pass


def write(out):
  torch.manual_seed(0)
  base = torch.arange(24, dtype=torch.float32).reshape(4, 6) / 4 - 2
  sd = {
      "base": base,
      "transposed": base.t(),            # the same storage, strides (1, 6)
      "row": base[2],                    # offset 12
      "column": base[:, 3:4].expand(4, 5),  # stride 0
      "every_other": base[1:, ::2],      # offset 6, strides (6, 2)
      "scalar": torch.tensor(3.5),
      "empty": torch.zeros(0, 4),
  }
  for dt in DTYPES:
    v = torch.tensor([[-3, -1, 0], [1, 2, 100]], dtype=torch.float32)
    sd["dtype_" + DTYPES[dt]] = (v > 0) if dt == torch.bool else v.abs().to(dt) if dt == torch.uint8 else (v / 3).to(dt) if dt.is_floating_point else v.to(dt)
  sd["dtype_float16"][0, 0] = float("inf")
  linear = torch.nn.Linear(3, 2)
  checkpoint = {"model": {**sd, **{"linear." + k: v for k, v in linear.state_dict().items()}}, "step": 7, "note": "hi"}
  os.makedirs(os.path.join(out, "expected"), exist_ok=True)
  torch.save(checkpoint, os.path.join(out, "state.pth"))
  dtypes = {}
  for k, v in checkpoint["model"].items():
    name = "model." + k
    dtypes[name] = DTYPES[v.dtype]
    np.save(os.path.join(out, "expected", name + ".npy"), (v.float() if v.dtype == torch.bfloat16 else v.detach()).numpy())
  with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(dtypes, f, indent=1, sort_keys=True)
  bn = torch.nn.BatchNorm2d(3)  # after one training step: num_batches_tracked is a 0-d int64
  bn(torch.arange(24, dtype=torch.float32).reshape(2, 3, 2, 2))
  torch.save(bn.state_dict(), os.path.join(out, "batchnorm.pth"))
  torch.save({"w": torch.ones(2), "x": Evil("system")}, os.path.join(out, "evil_system.pth"))
  torch.save({"w": torch.ones(2), "x": Evil("eval")}, os.path.join(out, "evil_eval.pth"))
  torch.save({"w": torch.ones(2), "x": Custom()}, os.path.join(out, "evil_class.pth"))


if __name__ == "__main__":
  if sys.argv[1:2] == ["write"] and len(sys.argv) == 3:
    write(sys.argv[2])
  else:
    print(__doc__)
    sys.exit(2)
