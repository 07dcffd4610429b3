# slurm.cmake — everything that needs Slurm: lucid's Slurm plugins and the
# integration tests that run a real lab cluster on loopback
# (scripts/lab-cluster.sh).  Without libslurm's headers and library, or
# without the Slurm daemons and munged, these parts are skipped with a message.
find_path(LUCID_SLURM_INCLUDE_DIR slurm/slurm.h)
find_library(LUCID_SLURM_LIBRARY slurm)
find_program(LUCID_SLURMCTLD slurmctld PATHS /usr/sbin)
find_program(LUCID_SLURMD slurmd PATHS /usr/sbin)
find_program(LUCID_SBATCH sbatch)
find_program(LUCID_MUNGED munged PATHS /usr/sbin)
# The lab's default (site) profile also runs slurmdbd on a private MariaDB.
find_program(LUCID_SLURMDBD slurmdbd PATHS /usr/sbin)
find_program(LUCID_MARIADBD mariadbd PATHS /usr/sbin)

if(LUCID_SLURM_INCLUDE_DIR AND LUCID_SLURM_LIBRARY)
  set(LUCID_HAVE_SLURM ON)
  message(STATUS "lucid: libslurm found (${LUCID_SLURM_LIBRARY}): building the Slurm plugins")
else()
  set(LUCID_HAVE_SLURM OFF)
  message(STATUS "lucid: libslurm or slurm/slurm.h not found: Slurm plugins skipped "
                 "(apt-get install libslurm-dev slurm-wlm-basic-plugins-dev)")
endif()

# The lab cluster needs the daemons, munged, slurmdbd and MariaDB, and root
# (mknod for fake GPUs).
execute_process(COMMAND id -u OUTPUT_VARIABLE LUCID_UID OUTPUT_STRIP_TRAILING_WHITESPACE)
if(LUCID_SLURMCTLD AND LUCID_SLURMD AND LUCID_SBATCH AND LUCID_MUNGED AND LUCID_SLURMDBD
   AND LUCID_MARIADBD AND LUCID_UID STREQUAL "0")
  set(LUCID_HAVE_LAB ON)
  message(STATUS "lucid: Slurm daemons found: lab-cluster integration tests enabled")
else()
  set(LUCID_HAVE_LAB OFF)
  message(STATUS "lucid: Slurm daemons, munged, slurmdbd, mariadbd or root missing: "
                 "lab-cluster integration tests skipped")
endif()

# Each integration test brings up its own cluster under the build tree, on a
# port range lab-cluster.sh derives from that folder, so tests may run in
# parallel, also from several build trees.
if(LUCID_HAVE_LAB)
  # The site profile (the default: confinement, accounting, typed GPUs) and
  # the simple one.
  add_test(NAME slurm_lab_smoke
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/lab_smoke.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} site)
  add_test(NAME slurm_lab_smoke_simple
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/lab_smoke.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} simple)
  set_tests_properties(slurm_lab_smoke slurm_lab_smoke_simple PROPERTIES TIMEOUT 180 LABELS slurm)
  # trace import on a sacct-schema export of what the lab just ran (docs/traces.md).
  add_test(NAME slurm_import_lab
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/import_lab.sh ${CMAKE_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR} $<TARGET_FILE:lucid_cli>)
  set_tests_properties(slurm_import_lab PROPERTIES TIMEOUT 120 LABELS slurm)
endif()

# lucid's Slurm plugins, loaded by slurmctld (job_submit) and slurmstepd
# (SPANK) from ${CMAKE_BINARY_DIR}/plugins via PluginDir / plugstack.conf.
# No -lslurm: the symbols they use come from the Slurm process loading them.
if(LUCID_HAVE_SLURM)
  foreach(plugin job_submit_lucid spank_lucid)
    add_library(${plugin} MODULE ${CMAKE_SOURCE_DIR}/plugins/${plugin}.c)
    target_include_directories(${plugin} PRIVATE ${LUCID_SLURM_INCLUDE_DIR})
    set_target_properties(${plugin} PROPERTIES PREFIX ""
                          LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/plugins)
    # Loaded into Slurm's own (unsanitized) daemons: an ASan-built module
    # stops slurmctld at start, so the sanitizer flags are left out here.
    foreach(property COMPILE_OPTIONS LINK_OPTIONS)
      get_target_property(options ${plugin} ${property})
      if(options)
        list(FILTER options EXCLUDE REGEX "sanitize")
        set_target_properties(${plugin} PROPERTIES ${property} "${options}")
      endif()
    endforeach()
  endforeach()
endif()

if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM)
  add_test(NAME slurm_plugins
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/plugins.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  # The same without device confinement (the simple profile): a user's
  # --lucid-gpus, comment or environment still names no GPU (issue 24).
  add_test(NAME slurm_plugins_simple
           COMMAND ${CMAKE_COMMAND} -E env LUCID_LAB_PROFILE=simple
                   bash ${CMAKE_SOURCE_DIR}/tests/slurm/plugins.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(slurm_plugins slurm_plugins_simple PROPERTIES TIMEOUT 120 LABELS slurm)
endif()

# lucidd: needs libslurm and the state store (SQLite).
if(LUCID_HAVE_SLURM AND LUCID_HAVE_STATE)
  add_executable(lucidd ${CMAKE_SOURCE_DIR}/src/daemon/lucidd.c ${CMAKE_SOURCE_DIR}/src/daemon/engine.c ${CMAKE_SOURCE_DIR}/src/daemon/writer.c ${CMAKE_SOURCE_DIR}/src/daemon/reader.c
                        ${CMAKE_SOURCE_DIR}/src/daemon/commands.c ${CMAKE_SOURCE_DIR}/src/daemon/slurm_io.c
                        ${CMAKE_SOURCE_DIR}/src/daemon/handback.c)
  target_include_directories(lucidd PRIVATE ${LUCID_SLURM_INCLUDE_DIR})
  target_link_libraries(lucidd PRIVATE lucid ${LUCID_SLURM_LIBRARY})
  message(STATUS "lucid: building lucidd")
  # Its options, no cluster needed: bad values refused with one clear line.
  add_test(NAME lucidd_options COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lucidd_options.sh
                                       $<TARGET_FILE:lucidd> ${CMAKE_SOURCE_DIR})
  set_tests_properties(lucidd_options PROPERTIES TIMEOUT 60)
  # A real lucidd with Slurm unreachable: slow clients as `nobody`, one
  # instance per state file and socket (tests/lucidd_server.sh).
  add_test(NAME lucidd_server COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lucidd_server.sh
                                      $<TARGET_FILE:lucidd> ${CMAKE_SOURCE_DIR}
                                      $<TARGET_FILE:lucid_cli>)
  set_tests_properties(lucidd_server PROPERTIES TIMEOUT 120)
  # The socket opened to users: per-user answers, socket group, admin group,
  # metrics bind address, syslog (tests/lucidd_users.sh; needs root).
  add_test(NAME lucidd_users COMMAND bash ${CMAKE_SOURCE_DIR}/tests/lucidd_users.sh
                                     $<TARGET_FILE:lucidd> ${CMAKE_SOURCE_DIR}
                                     $<TARGET_FILE:lucid_cli>)
  set_tests_properties(lucidd_users PROPERTIES TIMEOUT 120)
else()
  message(STATUS "lucid: lucidd skipped (needs libslurm and SQLite)")
endif()

# lucidd on the lab cluster: 60 jobs (tests/slurm/lucidd_workload.sh, checked
# by check_workload.py), then the same workload with lucidd SIGKILLed three
# times and slurmctld restarted once.  About 100 s each.
find_program(LUCID_PYTHON3 python3)
if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM AND LUCID_HAVE_STATE AND LUCID_PYTHON3)
  add_test(NAME slurm_lucidd_workload
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/lucidd_workload.sh
                   ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} 60)
  add_test(NAME slurm_lucidd_faults
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/lucidd_workload.sh
                   ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} 60 faults)
  set_tests_properties(slurm_lucidd_workload slurm_lucidd_faults PROPERTIES TIMEOUT 420 LABELS slurm)
elseif(LUCID_HAVE_LAB)
  message(STATUS "lucid: lucidd integration tests skipped (need lucidd and python3)")
endif()

# Issue 10's proof: lucidd under an operator's workload (arrays, dependencies,
# --begin, -H, -w, --exclude, cancels, a resize, a user's release attempt, a
# non-ASCII name), under outages (SIGKILL, slurmctld down 60 s, state file
# lost, a second lucidd, slow clients) and with lucidd stopped (fail-open and
# the hand-back watchdog); tests/slurm/lucidd_operator.sh, judged by
# check_operator.py from Slurm's jobcomp log and the payloads' own lines.
if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM AND LUCID_HAVE_STATE AND LUCID_PYTHON3)
  foreach(mode operator outages failopen)
    add_test(NAME slurm_lucidd_${mode}
             COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/lucidd_operator.sh
                     ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${mode})
    set_tests_properties(slurm_lucidd_${mode} PROPERTIES TIMEOUT 600 LABELS slurm)
  endforeach()
endif()

# A lab test: `bash tests/slurm/SCRIPT SOURCE_DIR BUILD_DIR`, label slurm,
# registered where the lab, Slurm, the state store and python3 are there.
function(lucid_lab_test name script timeout)
  if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM AND LUCID_HAVE_STATE AND LUCID_PYTHON3)
    add_test(NAME ${name}
             COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/${script}
                     ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
    set_tests_properties(${name} PROPERTIES TIMEOUT ${timeout} LABELS slurm)
  endif()
endfunction()

# Issue 13's live goal: lucidd --backfill easy on a 2-node lab cluster; a
# 16-GPU job's reservation is honoured (started within 15 s of its blockers'
# end, before its reserved time and P90), jobs that fit the gap are
# backfilled, jobs that would delay it wait, also after lucidd is SIGKILLed
# and restarted with a window and size minimum that would refuse it now; an
# 8-GPU job under --backfill-min-gpus 9 holds none (tests/slurm/
# lucidd_backfill.sh, judged by check_backfill.py).  About 70 s.
lucid_lab_test(slurm_lucidd_backfill lucidd_backfill.sh 420)

# Issue 22: placement Slurm agrees with, on the site profile of the lab
# (resources, --exclusive, typed GPUs and every request form, a maintenance
# reservation, a drained profiling node, a node that dies under a --requeue
# job), judged from sacct and the payloads' own start lines by
# check_site.py.  About 4 minutes (Slurm notices the dead node after
# SlurmdTimeout, 60 s).
lucid_lab_test(slurm_lucidd_site lucidd_site.sh 600)

# Issue 23, point 1: the site's GPU limits kept (QOS normal MaxTRESPerUser=
# gres/gpu=4 on the site profile): a job over it by its own count is handed
# back with the limit named, a user at the limit waits without holding GPUs
# or blocking another user's job or the profiler (tests/slurm/
# lucidd_limits.sh, judged from squeue, scontrol and sacct).  About 1 minute.
lucid_lab_test(slurm_lucidd_limits lucidd_limits.sh 300)

# Issue 23, the site's priority kept: a light user behind a heavy user's
# backlog (some of its jobs short), lucidd's lab and a plain-Slurm lab
# (same fair-share configuration) side by side; the light user's first
# start no later than plain Slurm's plus two ticks, the average JCT no
# worse, every job run once (tests/slurm/lucidd_fairshare.sh).  About 2.5
# minutes.
lucid_lab_test(slurm_lucidd_fairshare lucidd_fairshare.sh 600)

# Issue 28: a burst of 150 jobs under lucidd on the site profile: nothing lost
# or run twice (sacct --duplicates), no main node idle while a job that fits
# waits, the tick rate held (tests/slurm/lucidd_burst.sh).  About 2 minutes.
lucid_lab_test(slurm_lucidd_burst lucidd_burst.sh 900)

# lucidd's memory over many ticks with 2,000 jobs listed by Slurm (issue 28;
# tests/slurm/lucidd_soak.sh): RSS growth at most 5 MB over 600 ticks that
# read the whole listing.  About 2.5 min.
lucid_lab_test(slurm_lucidd_soak lucidd_soak.sh 600)

# Outcomes of jobs that ended while lucidd was away, from slurmdbd on the
# site-profile lab (issue 28; tests/slurm/lucidd_outcomes.sh).  About 1 min.
lucid_lab_test(slurm_lucidd_outcomes lucidd_outcomes.sh 300)

# Issue 23's round trip: lucidd runs three jobs (one profiled and moved to
# main, one ended in the profiler, one that waits behind another), and
# `lucid trace import` of lucidd's state database and of `sacct
# --duplicates` must agree with each other and with Slurm's raw records
# (tests/slurm/lucidd_roundtrip.sh, judged by check_roundtrip.py).  About 55 s.
lucid_lab_test(slurm_lucidd_roundtrip lucidd_roundtrip.sh 300)

# Issue 24: packing on a device-confined site.  lucidd --packing on, pairs
# of 4, 2 and 1 GPUs and a job refused packing: every run's payload opens
# every GPU device file of its node; each opens exactly its GPUs (a packed
# run its partner's), numbered as CUDA sees them inside the job; sacct
# counts a packed run's GPUs as gres/lucidshare, billed as GPUs; both trace
# imports agree (tests/slurm/lucidd_packing.sh, judged by check_packing.py).
# About 45 s.
lucid_lab_test(slurm_lucidd_packing lucidd_packing.sh 300)
