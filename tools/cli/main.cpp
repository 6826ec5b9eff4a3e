#include <cstdlib>

#include "tools/cli/cli.hpp"

#ifdef RSIM_MIMALLOC
#include <mimalloc.h>

#include <string>

namespace {
// What --version names: mimalloc and its version only if a block from malloc() is mimalloc's
// (the library linked and its malloc the one resolved), else what is in use.
const char* allocator_name() {
  static const std::string name = [] {
    void* block = std::malloc(64);
    const bool ours = mi_is_in_heap_region(block);
    std::free(block);
    const int v = mi_version();
    return ours ? "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." +
                      std::to_string(v % 10)
                : std::string("libc (mimalloc linked, not in use)");
  }();
  return name.c_str();
}
}  // namespace
#endif

int main(int argc, char** argv) {
#ifdef RSIM_MIMALLOC
  // Memory from the OS in 2 MiB pages where the kernel allows it (transparent huge pages): at
  // 10,000 consumers the state of the world spans about half a GiB, touched all over at every
  // virtual second, and 4 KiB pages miss the TLB. MIMALLOC_LARGE_OS_PAGES=0 turns it off.
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) mi_option_enable(mi_option_large_os_pages);
  rsim::cli::set_allocator(allocator_name());
#endif
  return rsim::cli::main(argc, argv);
}
