# daemon.cmake — lucidd's build-time pieces that do not need Slurm: the fake
# NVML library the GPU-metrics tests load, and the SQLite state store's
# dependency.  lucidd itself needs libslurm and is defined in slurm.cmake.

# A stand-in libnvidia-ml (tests/fakes/fake_nvml.c) so the NVML backend is
# exercised by dlopen on machines without a GPU (tests/test_gpumetrics.c).
add_library(fake_nvml MODULE ${CMAKE_SOURCE_DIR}/tests/fakes/fake_nvml.c)
set_target_properties(fake_nvml PROPERTIES PREFIX "lib"
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)

# The state store (src/daemon/state.c, include/lucid/state.h) needs SQLite;
# it joins liblucid only where SQLite is found, and tests/test_state*.c skip
# themselves otherwise (LUCID_HAVE_STATE).
find_package(SQLite3)
if(SQLite3_FOUND)
  # lucidd's models (src/daemon/models.c: the update engine, estimates,
  # the sharing tree) keep their versions in the store and have no Slurm in
  # them: they join liblucid too, for tests/test_lucidd_models.c.
  # Its API server and the hub between its threads (server.c, hub.c) have
  # no Slurm either: they join liblucid for tests/test_lucidd_server.c, which
  # drives them with a fake engine (lucidd itself links the real one).
  target_sources(lucid PRIVATE ${CMAKE_SOURCE_DIR}/src/daemon/state.c
                               ${CMAKE_SOURCE_DIR}/src/daemon/models.c
                               ${CMAKE_SOURCE_DIR}/src/daemon/hub.c
                               ${CMAKE_SOURCE_DIR}/src/daemon/server.c)
  target_link_libraries(lucid PUBLIC SQLite::SQLite3)
  target_compile_definitions(lucid PUBLIC LUCID_HAVE_STATE=1)
  set(LUCID_HAVE_STATE ON)
  message(STATUS "lucid: SQLite ${SQLite3_VERSION} found: state store built")
else()
  set(LUCID_HAVE_STATE OFF)
  message(STATUS "lucid: SQLite not found: state store and lucidd skipped (apt-get install libsqlite3-dev)")
endif()

# lucidd's decision step (src/daemon/decide.c: the core's decision pass with
# Slurm's rules as hooks) has no Slurm in it: it joins liblucid so that
# tests/test_decide.c can hold it against the simulator, and for the
# benchmark below.  So does its reader of Slurm's fair shares (shares.c:
# sshare as a child, read without blocking), which spawns but links no Slurm,
# and the site's GPU limits (limits.c: sacctmgr's output and which limits
# apply to a job, tested by tests/test_limits.c).
target_sources(lucid PRIVATE ${CMAKE_SOURCE_DIR}/src/daemon/decide.c ${CMAKE_SOURCE_DIR}/src/daemon/fit.c
                             ${CMAKE_SOURCE_DIR}/src/daemon/shares.c
                             ${CMAKE_SOURCE_DIR}/src/daemon/limits.c)

# Decision latency of that step on a simulated 1,000-node cluster with 10,000
# pending jobs (bench/decide_latency.c; results in docs/live.md).
add_executable(decide_latency ${CMAKE_SOURCE_DIR}/bench/decide_latency.c)
target_link_libraries(decide_latency PRIVATE lucid)
set_target_properties(decide_latency PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

# Start-time estimates of 10,000 waiting jobs and one backfilling decision
# (bench/eta_latency.c; results in docs/live.md).
add_executable(eta_latency ${CMAKE_SOURCE_DIR}/bench/eta_latency.c)
target_link_libraries(eta_latency PRIVATE lucid)
set_target_properties(eta_latency PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)

# lucidd's tick (src/daemon/engine.c) against an in-memory Slurm
# (tests/fakes/fake_slurm_io.c): needs no libslurm and no cluster.
if(SQLite3_FOUND)
  add_executable(test_lucidd_engine ${CMAKE_SOURCE_DIR}/tests/lucidd/test_engine.c
                                    ${CMAKE_SOURCE_DIR}/tests/fakes/fake_slurm_io.c
                                    ${CMAKE_SOURCE_DIR}/src/daemon/engine.c ${CMAKE_SOURCE_DIR}/src/daemon/writer.c ${CMAKE_SOURCE_DIR}/src/daemon/reader.c
                                    ${CMAKE_SOURCE_DIR}/src/daemon/commands.c
                                    ${CMAKE_SOURCE_DIR}/tests/testutil.c)
  target_include_directories(test_lucidd_engine PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  target_compile_definitions(test_lucidd_engine PRIVATE
    LUCID_SOURCE_DIR="${CMAKE_SOURCE_DIR}" LUCID_BINARY_DIR="${CMAKE_BINARY_DIR}")
  target_link_libraries(test_lucidd_engine PRIVATE lucid PkgConfig::CMOCKA)
  add_test(NAME test_lucidd_engine COMMAND test_lucidd_engine)
  set_tests_properties(test_lucidd_engine PROPERTIES TIMEOUT 120)
endif()

# One whole tick of lucidd on 1,000 nodes and 10,000 waiting jobs, Slurm
# replaced by the in-memory fake (bench/tick_latency.c; docs/live.md).
if(SQLite3_FOUND)
  add_executable(tick_latency ${CMAKE_SOURCE_DIR}/bench/tick_latency.c
                              ${CMAKE_SOURCE_DIR}/tests/fakes/fake_slurm_io.c
                              ${CMAKE_SOURCE_DIR}/src/daemon/engine.c ${CMAKE_SOURCE_DIR}/src/daemon/writer.c ${CMAKE_SOURCE_DIR}/src/daemon/reader.c
                              ${CMAKE_SOURCE_DIR}/src/daemon/commands.c)
  target_compile_definitions(tick_latency PRIVATE FAKE_MAX_JOBS=16384 FAKE_MAX_NODES=2048)
  target_link_libraries(tick_latency PRIVATE lucid)
  set_target_properties(tick_latency PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
endif()
