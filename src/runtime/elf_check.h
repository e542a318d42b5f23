// A structural check of a shared object before dlopen: a binary read from the disk cache is only loaded when its
// ELF header, program headers and section headers all lie inside it (a truncated object would otherwise be
// mapped past its end, and the first touch of that page kills the process with SIGBUS).
#pragma once
#include <string>
#include <string_view>

namespace tg::runtime {

// "" when `binary` is a shared object of this machine (magic, class, byte order, machine, type) whose tables and
// every segment's file range lie inside it; otherwise what is wrong ("truncated: segment 2 ends at byte ...").
std::string elf_problem(std::string_view binary);

}  // namespace tg::runtime
