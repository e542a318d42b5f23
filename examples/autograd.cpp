// tinygrad's README example in C++: gradients of a matmul, computed lazily on the graph.
//
//   ./build/bin/autograd
#include <iostream>

#include <tg/tg.h>

using tg::Tensor;

int main() {
  Tensor x = Tensor::eye(3).requires_grad_();
  Tensor y = Tensor({{2.0f, 0.0f, -2.0f}}).requires_grad_();
  Tensor z = y.matmul(x).sum();
  z.backward();

  std::cout << x.grad() << "\n";  // dz/dx
  std::cout << y.grad() << "\n";  // dz/dy

  // gradients are lazy tensors: they can be differentiated again
  Tensor a = Tensor({1.0f, 2.0f, 3.0f});
  Tensor da = (a * a * a).sum().gradient({a})[0];  // 3a^2
  std::cout << da << " " << da.sum().gradient({a})[0] << "\n";
  return 0;
}
