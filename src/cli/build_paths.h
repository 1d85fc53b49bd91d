#pragma once

namespace hamisim::cli {

// The source checkout's examples/ directory, which an uninstalled binary reads the bundled
// example from. The value is in a file CMake generates (build_paths.cpp in the build
// directory) rather than in a compile definition, so that no other object depends on the
// checkout's path and ccache reuses them across clones (docs/development.md).
const char* source_examples_dir();

}  // namespace hamisim::cli
