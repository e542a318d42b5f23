// The beautiful_mnist model (GUIDE section 5, tinygrad's examples/beautiful_mnist.py), shared by the example and
// tg_bench mnist_step.
#pragma once
#include <tg/tg.h>

struct MnistModel : tg::nn::Module {
  tg::nn::Conv2d c1{1, 32, 5}, c2{32, 32, 5}, c3{32, 64, 3}, c4{64, 64, 3};
  tg::nn::BatchNorm b1{32}, b2{64};
  tg::nn::Linear l1{576, 10};
  tg::Tensor operator()(const tg::Tensor& x) {
    tg::Tensor h = b1(c2(c1(x).relu()).relu()).max_pool2d();
    h = b2(c4(c3(h).relu()).relu()).max_pool2d();
    return l1(h.flatten(1));
  }
  void state(const tg::nn::StateVisitor& v) override {
    v("c1", c1), v("c2", c2), v("b1", b1), v("c3", c3), v("c4", c4), v("b2", b2), v("l1", l1);
  }
};
