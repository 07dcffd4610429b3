# daemon.cmake — lucidd's build-time pieces that do not need Slurm: the fake
# NVML library the GPU-metrics tests load, and the SQLite state store's
# dependency.  lucidd itself needs libslurm and is defined in slurm.cmake.

# A stand-in libnvidia-ml (tests/fakes/fake_nvml.c) so the NVML backend is
# exercised by dlopen on machines without a GPU (tests/test_gpumetrics.c).
add_library(fake_nvml MODULE ${CMAKE_SOURCE_DIR}/tests/fakes/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES PREFIX "lib"
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
