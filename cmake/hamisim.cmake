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
  if(HAMISIM_TEST_SHARDS GREATER 0)
    # The sanitizer builds: each executable runs as HAMISIM_TEST_SHARDS processes, each
    # running every Nth of its tests (GoogleTest's sharding), instead of one process per test.
    # The same tests run; the sanitized start-up and exit (a leak check each) are paid a few
    # dozen times instead of 1,700 (docs/development.md).
    foreach(shard RANGE 1 ${HAMISIM_TEST_SHARDS})
      math(EXPR index "${shard} - 1")
      set(test "${name}.shard-${shard}-of-${HAMISIM_TEST_SHARDS}")
      add_test(NAME ${test} COMMAND ${name})
      set_tests_properties(${test} PROPERTIES TIMEOUT 900 LABELS ${labels}
        ENVIRONMENT "GTEST_TOTAL_SHARDS=${HAMISIM_TEST_SHARDS};GTEST_SHARD_INDEX=${index}")
    endforeach()
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 300 LABELS ${labels})
  endif()
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
