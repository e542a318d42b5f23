// Stopping a long realize between its kernels: Ctrl-C from Python, a server whose client went away.
#pragma once
#include <functional>
#include <stdexcept>

namespace tg {

// What a C++ interrupt check may throw to stop a realize (any exception works; this one says what happened).
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted between kernels") {}
};

// Installs `check`, called on the realizing thread between the kernels and copies of a realize that has more than
// one, and after compiling them. It stops the realize by throwing; the realize's tensors then keep their graphs, so a
// later realize computes them again. From the first kernel that writes memory already in use (an assign into a live
// tensor) the rest run to the end without checks, so a stop never leaves a tensor half updated. TinyJit's replays
// are not checked. One check per process; an empty function removes it.
void set_interrupt_check(std::function<void()> check);

}  // namespace tg
