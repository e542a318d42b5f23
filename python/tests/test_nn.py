# nn layers, state dicts and optimizers against PyTorch with the same weights.
import numpy as np
import pytest
import torch
from tinygrad import Tensor, nn, dtypes
from tinygrad.nn.state import get_parameters, get_state_dict, load_state_dict, safe_save, safe_load
from tinygrad.nn.optim import SGD, Adam, AdamW

def copy_to_torch(ours, theirs):
  with torch.no_grad():
    for k, v in theirs.state_dict().items():
      if k in get_state_dict(ours) and v.dtype.is_floating_point: v.copy_(torch.tensor(get_state_dict(ours)[k].numpy()))

def test_linear_conv_matches_torch():
  x = np.random.randn(2, 3, 8, 8).astype(np.float32)
  conv, tconv = nn.Conv2d(3, 4, 3, padding=1), torch.nn.Conv2d(3, 4, 3, padding=1)
  copy_to_torch(conv, tconv)
  np.testing.assert_allclose(conv(Tensor(x)).numpy(), tconv(torch.tensor(x)).detach().numpy(), atol=1e-5)
  lin, tlin = nn.Linear(5, 3), torch.nn.Linear(5, 3)
  copy_to_torch(lin, tlin)
  v = np.random.randn(4, 5).astype(np.float32)
  np.testing.assert_allclose(lin(Tensor(v)).numpy(), tlin(torch.tensor(v)).detach().numpy(), atol=1e-6)
  assert lin.weight.shape == (3, 5) and lin.bias.shape == (3,)

def test_batchnorm_training_and_eval_match_torch():
  bn, tbn = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
  bn.weight.assign(Tensor([1.0, 2.0, 0.5])); bn.bias.assign(Tensor([0.0, 1.0, -1.0]))
  copy_to_torch(bn, tbn)
  x = np.random.randn(4, 3, 5, 5).astype(np.float32)
  with Tensor.train():
    out = bn(Tensor(x))
    out.realize()
  tout = tbn.train()(torch.tensor(x))
  np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-5)
  np.testing.assert_allclose(bn.running_mean.numpy(), tbn.running_mean.numpy(), atol=1e-6)
  np.testing.assert_allclose(bn.running_var.numpy(), tbn.running_var.numpy(), atol=1e-5)
  np.testing.assert_allclose(bn(Tensor(x)).numpy(), tbn.eval()(torch.tensor(x)).detach().numpy(), atol=1e-5)

def test_layernorm_embedding_match_torch():
  ln, tln = nn.LayerNorm(6), torch.nn.LayerNorm(6)
  x = np.random.randn(2, 3, 6).astype(np.float32)
  np.testing.assert_allclose(ln(Tensor(x)).numpy(), tln(torch.tensor(x)).detach().numpy(), atol=1e-5)
  emb = nn.Embedding(10, 4)
  idx = np.array([[1, 9], [0, 3]])
  np.testing.assert_array_equal(emb(Tensor(idx)).numpy(), emb.weight.numpy()[idx])

class Net:
  def __init__(self):
    self.l1, self.bn = nn.Linear(4, 8), nn.BatchNorm(8)
    self.blocks = [nn.Linear(8, 8), {"head": nn.Linear(8, 2)}]
  def __call__(self, x): return self.blocks[1]["head"](self.blocks[0](self.bn(self.l1(x)).relu()))

def test_state_dict_keys_walk_objects_lists_and_dicts():
  keys = set(get_state_dict(Net()).keys())
  assert keys == {"l1.weight", "l1.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                  "blocks.0.weight", "blocks.0.bias", "blocks.1.head.weight", "blocks.1.head.bias"}
  assert len(get_parameters(Net())) == 11
  assert set(get_state_dict(nn.BatchNorm2d(3)).keys()) == set(torch.nn.BatchNorm2d(3).state_dict().keys())

def test_safetensors_round_trip_and_load_state_dict(tmp_path):
  a, b = Net(), Net()
  safe_save(get_state_dict(a), tmp_path / "m.safetensors")
  loaded = safe_load(str(tmp_path / "m.safetensors"))
  assert set(loaded) == set(get_state_dict(a))
  load_state_dict(b, loaded)
  for k, v in get_state_dict(a).items(): np.testing.assert_array_equal(get_state_dict(b)[k].numpy(), v.numpy())
  with pytest.raises(KeyError): load_state_dict(b, {"l1.weight": loaded["l1.weight"]})
  bad = dict(loaded); bad["l1.bias"] = Tensor.zeros(3)
  with pytest.raises(ValueError): load_state_dict(b, bad)

def test_load_state_dict_takes_pytorchs_batchnorm():
  # PyTorch's num_batches_tracked is 0-d where tinygrad's is (1,): loading either way works
  tbn = torch.nn.BatchNorm2d(3)
  tbn.train()(torch.randn(4, 3, 2, 2))
  state = {k: Tensor(v.numpy()) for k, v in tbn.state_dict().items()}
  assert state["num_batches_tracked"].shape == ()
  bn = nn.BatchNorm2d(3)
  load_state_dict(bn, state)
  np.testing.assert_allclose(bn.running_mean.numpy(), tbn.running_mean.numpy(), atol=1e-7)
  assert bn.num_batches_tracked.tolist() == [1]
  with pytest.raises(ValueError): load_state_dict(bn, {**state, "running_mean": Tensor.zeros(3, 1)})

@pytest.mark.parametrize("name", ["SGD", "SGD_momentum", "Adam", "AdamW"])
def test_optimizers_match_torch(name):
  w0 = np.random.randn(4, 3).astype(np.float32)
  x = np.random.randn(5, 4).astype(np.float32)
  w, tw = Tensor(w0), torch.tensor(w0, requires_grad=True)
  ours = {"SGD": lambda p: SGD(p, lr=0.1), "SGD_momentum": lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
          "Adam": lambda p: Adam(p, lr=0.01), "AdamW": lambda p: AdamW(p, lr=0.01, weight_decay=0.1)}[name]([w])
  theirs = {"SGD": lambda p: torch.optim.SGD(p, lr=0.1),
            "SGD_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
            "Adam": lambda p: torch.optim.Adam(p, lr=0.01), "AdamW": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1)}[name]([tw])
  assert w.requires_grad is True  # the optimizer trains a parameter whose requires_grad was unset
  for _ in range(3):
    ours.zero_grad(); theirs.zero_grad()
    (Tensor(x) @ w).relu().sum().backward(); (torch.tensor(x) @ tw).relu().sum().backward()
    with Tensor.train(): ours.step()
    theirs.step()
  np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), atol=1e-5, rtol=1e-5)

def test_optimizer_trains_params_and_realizes_buffers():
  # is_param (tinygrad's) and requires_grad=False (older tinygrad's) both make a buffer: realized, never updated
  for frozen in (Tensor([1.0]).is_param_(False), Tensor([1.0], requires_grad=False)):
    w = Tensor([1.0])
    opt = SGD([frozen, w], lr=0.5)
    (frozen * w * 2).sum().backward()
    assert frozen.grad is not None  # backward fills it all the same
    with pytest.raises(RuntimeError, match="training"): opt.step()  # outside training mode, as tinygrad
    assert w.tolist() == [1.0]
    with Tensor.train(): opt.step()
    assert frozen.tolist() == [1.0] and w.tolist() == [0.0]
    assert len(opt.params) == 1 and len(opt.buffers) == 1
  with pytest.raises(ValueError): SGD([Tensor([1.0]).is_param_(False)])

def test_is_param_travels_with_the_tensor():
  b = Tensor([1.0]).is_param_(False)
  assert Tensor([1.0]).is_param and not b.is_param
  assert not b.to(b.device).is_param and not b.clone().is_param
  bn = nn.BatchNorm(3)
  assert bn.weight.is_param and not bn.running_mean.is_param and not bn.num_batches_tracked.is_param

def test_lstm_cell_matches_torch_over_steps():
  for bias in (True, False):
    cell, tcell = nn.LSTMCell(5, 4, bias=bias), torch.nn.LSTMCell(5, 4, bias=bias)
    if bias: cell.bias_ih.assign(Tensor.uniform(16, low=-1, high=1)); cell.bias_hh.assign(Tensor.uniform(16, low=-1, high=1))
    copy_to_torch(cell, tcell)
    assert set(get_state_dict(cell).keys()) == set(tcell.state_dict().keys())
    xs = np.random.randn(3, 2, 5).astype(np.float32)
    hc, thc = None, None
    for x in xs:  # the state carried from step to step
      hc, thc = cell(Tensor(x), hc), tcell(torch.tensor(x), thc)
      for ours, theirs in zip(hc, thc): np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=1e-6)

def test_instancenorm_and_conv_transpose1d_match_torch():
  norm, tnorm = nn.InstanceNorm(3), torch.nn.InstanceNorm2d(3, affine=True)
  norm.weight.assign(Tensor([1.0, 2.0, 0.5])); norm.bias.assign(Tensor([0.0, 1.0, -1.0]))
  copy_to_torch(norm, tnorm)
  for shape in ((2, 3, 4, 4), (2, 3, 6)):
    x = np.random.randn(*shape).astype(np.float32)
    tnorm = torch.nn.InstanceNorm1d(3, affine=True) if len(shape) == 3 else tnorm
    copy_to_torch(norm, tnorm)
    np.testing.assert_allclose(norm(Tensor(x)).numpy(), tnorm(torch.tensor(x)).detach().numpy(), atol=1e-5)
  conv, tconv = nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1), torch.nn.ConvTranspose1d(2, 3, 3, 2, 1, 1)
  copy_to_torch(conv, tconv)
  x = np.random.randn(2, 2, 7).astype(np.float32)
  out, tout = conv(Tensor(x)), tconv(torch.tensor(x))
  assert out.shape == tuple(tout.shape)
  np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-5)

def _muon_reference(p, grads, lr, momentum, wd, steps, coefs, nesterov):
  # PyTorch's Muon (torch 1.13 has none): nesterov momentum, Newton-Schulz on the (wide) update, sqrt(rows/cols)
  # scale, decoupled weight decay
  a, b, c = coefs
  p, buf = p.astype(np.float64), np.zeros_like(p, dtype=np.float64)
  for g in grads:
    buf = momentum * buf + g
    u = g + momentum * buf if nesterov else buf
    tall = u.shape[0] > u.shape[1]
    x = u.T if tall else u
    x = x / (np.linalg.norm(x) + 1e-7)
    for _ in range(steps):
      A = x @ x.T
      x = a * x + (b * A + c * A @ A) @ x
    u = x.T if tall else x
    p = p * (1 - lr * wd) - lr * u * np.sqrt(max(1.0, u.shape[0] / u.shape[1]))
  return p

def test_muon_matches_the_reference():
  from tinygrad.nn.optim import Muon
  rng = np.random.default_rng(0)
  for shape, kw in (((4, 6), {}), ((6, 4), {"weight_decay": 0.01, "nesterov": False}),
                    ((5, 5), {"momentum": 0.9, "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5)})):
    p0 = rng.standard_normal(shape).astype(np.float32)
    grads = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    w = Tensor(p0)
    opt = Muon([w], lr=0.02, **kw)
    for g in grads:
      opt.zero_grad()
      (w * Tensor(g)).sum().backward()
      with Tensor.train(): opt.step()
    args = {"momentum": 0.95, "weight_decay": 0.1, "ns_steps": 5, "ns_coefficients": (3.4445, -4.775, 2.0315), "nesterov": True, **kw}
    ref = _muon_reference(p0, grads, 0.02, args["momentum"], args["weight_decay"], args["ns_steps"], args["ns_coefficients"], args["nesterov"])
    np.testing.assert_allclose(w.numpy(), ref, atol=1e-5, rtol=1e-4)
