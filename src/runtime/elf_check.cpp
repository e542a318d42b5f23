#include "runtime/elf_check.h"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace tg::runtime {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
#elif defined(__riscv) && __riscv_xlen == 64
constexpr uint16_t kMachine = EM_RISCV;
#else
constexpr uint16_t kMachine = EM_NONE;  // unknown host: the machine field is not checked
#endif

// [offset, offset + size) inside a file of `file` bytes, without overflow
bool inside(uint64_t offset, uint64_t size, uint64_t file) { return offset <= file && size <= file - offset; }

// a table of `count` entries of `entsize` bytes at `offset`
bool table_inside(uint64_t offset, uint64_t count, uint64_t entsize, uint64_t file) {
  return entsize == 0 || count <= UINT64_MAX / entsize ? inside(offset, count * entsize, file) : false;
}

template <typename T>
T read_at(std::string_view b, uint64_t offset) {
  T v;
  std::memcpy(&v, b.data() + offset, sizeof v);  // the tables need not be aligned in a hostile file
  return v;
}

}  // namespace

std::string elf_problem(std::string_view b) {
  const uint64_t size = b.size();
  if (size < sizeof(Elf64_Ehdr)) return "truncated: " + std::to_string(size) + " bytes, shorter than an ELF header";
  if (std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (static_cast<unsigned char>(b[EI_CLASS]) != ELFCLASS64) return "not a 64-bit ELF file";
  if (static_cast<unsigned char>(b[EI_DATA]) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
    return "an ELF file of the other byte order";
  auto eh = read_at<Elf64_Ehdr>(b, 0);
  if (eh.e_type != ET_DYN) return "not a shared object (ELF type " + std::to_string(eh.e_type) + ")";
  if (kMachine != EM_NONE && eh.e_machine != kMachine)
    return "an ELF file for another machine (" + std::to_string(eh.e_machine) + ")";
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(Elf64_Phdr)) return "no program headers";
  if (!table_inside(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr), size))
    return "truncated: the program headers end past byte " + std::to_string(size);
  if (eh.e_shoff != 0 || eh.e_shnum != 0) {
    if (eh.e_shentsize != sizeof(Elf64_Shdr)) return "section headers of the wrong size";
    // e_shnum == 0 with a table: the count is in the first header's sh_size (many sections)
    uint64_t shnum = eh.e_shnum;
    if (shnum == 0) {
      if (!table_inside(eh.e_shoff, 1, sizeof(Elf64_Shdr), size)) return "truncated: the section headers lie past the end";
      shnum = read_at<Elf64_Shdr>(b, eh.e_shoff).sh_size;
    }
    if (!table_inside(eh.e_shoff, shnum, sizeof(Elf64_Shdr), size))
      return "truncated: the section headers end past byte " + std::to_string(size);
    for (uint64_t i = 0; i < shnum; i++) {
      auto sh = read_at<Elf64_Shdr>(b, eh.e_shoff + i * sizeof(Elf64_Shdr));
      if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && !inside(sh.sh_offset, sh.sh_size, size))
        return "truncated: section " + std::to_string(i) + " ends past byte " + std::to_string(size);
    }
  }
  bool loads = false;
  for (uint64_t i = 0; i < eh.e_phnum; i++) {
    auto ph = read_at<Elf64_Phdr>(b, eh.e_phoff + i * sizeof(Elf64_Phdr));
    if (!inside(ph.p_offset, ph.p_filesz, size))
      return "truncated: segment " + std::to_string(i) + " ends past byte " + std::to_string(size);
    if (ph.p_type == PT_LOAD) {
      loads = true;
      if (ph.p_filesz > ph.p_memsz) return "segment " + std::to_string(i) + " holds more file bytes than memory";
    }
  }
  if (!loads) return "no loadable segment";
  return "";
}

}  // namespace tg::runtime
