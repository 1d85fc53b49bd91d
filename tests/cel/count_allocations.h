#pragma once
// The heap allocations of this test executable, counted by replacing the global operator new
// (count_allocations.cpp, compiled on its own so that no caller sees both the replacement and
// its malloc/free inlined).

namespace hamisim::cel {

// False in sanitizer builds, whose runtimes bring their own operator new.
bool allocations_are_counted();
long allocations_so_far();

}  // namespace hamisim::cel
