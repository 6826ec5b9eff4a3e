#pragma once
// Where a test finds the checkout, the conformance vectors, the build folder and the binary.
// They come from one small source that tests/CMakeLists.txt generates per build (test_paths.cpp),
// not from -D defines: the test objects of two checkouts are then the same bytes, and ccache
// shares them between git worktrees. Every test file gets this header through `-include`.
namespace rsim_test_paths {
const char* source_dir();
const char* conformance_dir();
const char* build_dir();
const char* binary();
}  // namespace rsim_test_paths

#define RSIM_SOURCE_DIR (::rsim_test_paths::source_dir())
#define RSIM_CONFORMANCE_DIR (::rsim_test_paths::conformance_dir())
#define RSIM_BUILD_DIR (::rsim_test_paths::build_dir())
#define RSIM_BINARY (::rsim_test_paths::binary())
