# Shared helpers for hamisim targets.
include(GoogleTest)

# hamisim_test(NAME SOURCES a.cpp b.cpp LIBS lib1 lib2)
# THREADS marks an executable whose tests start threads (servers, clients, racing lookups): its
# tests get the ctest label `threads` and join the target `threaded_tests`; scripts/test.sh
# builds and runs only those under TSan, three times over, to catch races that show up only in
# some runs. Every other test executable links the single-thread guard in builds without
# sanitizers, so a test that starts a thread without the mark fails instead of escaping TSan.
function(hamisim_test name)
  cmake_parse_arguments(T "THREADS" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  # The ASan+UBSan build compiles the project's libraries file by file (scripts/build.sh) but
  # may batch the tests, whose files parse GoogleTest's headers again and again.
  if(HAMISIM_UNITY_TESTS)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON)
  endif()
  # No compile definition carries a path (tests/support/test_paths.h says why).
  target_link_libraries(${name} PRIVATE ${T_LIBS} hamisim_test_paths GTest::gmock
    GTest::gtest_main)
  set(labels unit)
  if(T_THREADS)
    set(labels threads)
    set_property(GLOBAL APPEND PROPERTY HAMISIM_THREADED_TESTS ${name})
  elseif(TARGET hamisim_single_thread_guard)
    target_link_libraries(${name} PRIVATE hamisim_single_thread_guard)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 300 LABELS ${labels})
endfunction()

# hamisim_fuzzer(NAME SOURCES a.cpp LIBS lib1) -- only with HAMISIM_FUZZ (clang, libFuzzer).
function(hamisim_fuzzer name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
  if(HAMISIM_FUZZ)
    add_executable(${name} ${F_SOURCES})
    target_link_libraries(${name} PRIVATE ${F_LIBS})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  endif()
endfunction()
