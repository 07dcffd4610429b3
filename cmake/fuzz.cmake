# Fuzz targets (clang + libFuzzer): cmake -DLUCID_FUZZ=ON -DCMAKE_C_COMPILER=clang
# bench/fuzz.sh builds and runs them for a bounded time.
if(LUCID_FUZZ)
  # Coverage counters in the library itself, or libFuzzer sees only the stubs.
  target_compile_options(lucid PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  foreach(target trace experiment philly sacct limits)
    add_executable(fuzz_${target} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_${target}.c ${CMAKE_SOURCE_DIR}/fuzz/targets.c)
    target_compile_options(fuzz_${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${target} PRIVATE lucid)
  endforeach()
endif()
