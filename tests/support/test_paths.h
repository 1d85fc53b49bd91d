#pragma once

namespace hamisim::testing {

// Where the tests find the source checkout, this build, and the hamisim binary. The values
// are in one file CMake generates (test_paths.cpp in the build directory) rather than in
// compile definitions, so that no test object depends on the checkout's path: ccache reuses
// them when CI builds a fresh clone elsewhere (docs/development.md).
const char* source_dir();    // the checkout
const char* binary_dir();    // this build's top directory
const char* examples_dir();  // source_dir()/examples
const char* hamisim_bin();   // the hamisim executable of this build

}  // namespace hamisim::testing
