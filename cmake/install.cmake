# install.cmake — what `cmake --install build [--prefix P]` puts where, and
# the Debian packages `cpack -G DEB` builds from it (docs/deploy.md).
#
#   component `lucid` (package lucid: the simulator and models, no Slurm)
#   bin/lucid                                   the program
#   share/man/man1/lucid*.1.gz                  man pages (man/, written by hand)
#   share/lucid/data/venus-sept/                the bundled Venus data (trace synth's base)
#   share/lucid/examples/*.ini                  the example experiments (results to ./out)
#   share/doc/lucid/copyright, changelog.gz
#
#   component `live` (package lucid-slurm: needs the Slurm it was built for)
#   sbin/lucidd                                 the daemon and hand-back watchdog
#   <Slurm plugin dir>/job_submit_lucid.so,     the plugins (LUCID_SLURM_PLUGIN_DIR)
#                      spank_lucid.so
#   share/man/man8/lucidd.8.gz
#   share/doc/lucid-slurm/examples/             lucid.conf, lucidd.conf, plugstack.conf
#   share/doc/lucid-slurm/copyright, changelog.gz
#   lib/systemd/system/lucidd.service,          the units (paths from the install
#                      lucid-handback.service   prefix; /lib/systemd/system for /usr)
#
# Every other destination is relative to the install prefix, so `--prefix P`
# and DESTDIR land everything under P (or DESTDIR/prefix); the packages use /usr.

install(TARGETS lucid_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lucid)
if(TARGET lucidd)
  install(TARGETS lucidd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR} COMPONENT live)
endif()

# Slurm loads plugins from its PluginDir: `${libdir}/slurm` in Slurm's own
# builds (libdir from libslurm's pkg-config file), `${libdir}/slurm-wlm` in
# Debian's (which ships no slurm.pc).  Kept relative to Slurm's prefix so
# that it is relative to ours: with prefix /usr (the package) the plugins land
# where Debian's slurmctld looks; with another prefix, under it (and
# slurm.conf's PluginDir must name it, docs/deploy.md).  An absolute value is
# used as it is (still under DESTDIR).
if(LUCID_HAVE_SLURM)
  pkg_check_modules(SLURM_PC QUIET slurm)
  if(SLURM_PC_FOUND)
    pkg_get_variable(LUCID_SLURM_LIBDIR slurm libdir)
    pkg_get_variable(LUCID_SLURM_PREFIX slurm prefix)
    set(lucid_plugin_guess ${LUCID_SLURM_LIBDIR}/slurm)
  else()
    get_filename_component(LUCID_SLURM_LIBDIR ${LUCID_SLURM_LIBRARY} DIRECTORY)
    # /usr/lib/x86_64-linux-gnu -> /usr
    string(REGEX REPLACE "/lib(64|32)?(/[^/]+)?$" "" LUCID_SLURM_PREFIX ${LUCID_SLURM_LIBDIR})
    if(EXISTS ${LUCID_SLURM_LIBDIR}/slurm-wlm)
      set(lucid_plugin_guess ${LUCID_SLURM_LIBDIR}/slurm-wlm)
    else()
      set(lucid_plugin_guess ${LUCID_SLURM_LIBDIR}/slurm)
    endif()
  endif()
  file(RELATIVE_PATH lucid_plugin_guess ${LUCID_SLURM_PREFIX} ${lucid_plugin_guess})
  set(LUCID_SLURM_PLUGIN_DIR ${lucid_plugin_guess} CACHE STRING
      "Where the Slurm plugins are installed: relative to the install prefix, or absolute")
  message(STATUS "lucid: Slurm plugins install into <prefix>/${LUCID_SLURM_PLUGIN_DIR} "
                 "(Slurm's PluginDir: ${LUCID_SLURM_PREFIX}/${lucid_plugin_guess})")
  install(TARGETS job_submit_lucid spank_lucid LIBRARY DESTINATION ${LUCID_SLURM_PLUGIN_DIR}
          COMPONENT live)
  # The release the plugins were compiled against: Slurm refuses plugins of
  # another major release, and a plugin built for another release can
  # misread its structures, so the package accepts exactly this upstream
  # release (Debian revisions of it, e.g. security updates, keep its ABI).
  # (slurm_version.h: SLURM_VERSION_NUMBER 0x160508 is 22.05.8.)
  file(STRINGS ${LUCID_SLURM_INCLUDE_DIR}/slurm/slurm_version.h lucid_slurm_version
       REGEX "^#define SLURM_VERSION_NUMBER")
  if(NOT lucid_slurm_version MATCHES "0x([0-9a-fA-F][0-9a-fA-F]?)([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])")
    message(FATAL_ERROR "lucid: no SLURM_VERSION_NUMBER in ${LUCID_SLURM_INCLUDE_DIR}/slurm/slurm_version.h")
  endif()
  math(EXPR lucid_major "0x${CMAKE_MATCH_1}")
  math(EXPR lucid_minor "0x${CMAKE_MATCH_2}")
  math(EXPR lucid_micro "0x${CMAKE_MATCH_3}")
  math(EXPR lucid_next_micro "${lucid_micro} + 1")
  if(lucid_minor LESS 10)
    set(lucid_minor 0${lucid_minor}) # Slurm writes 22.05
  endif()
  set(LUCID_SLURM_RELEASE ${lucid_major}.${lucid_minor}.${lucid_micro})
  set(lucid_slurm_next ${lucid_major}.${lucid_minor}.${lucid_next_micro}~)
endif()
# The packages' version: with Slurm, the release built against follows a
# "+slurm", so that lucid-slurm rebuilt for a new Slurm release is a new
# version apt installs in the same step as that Slurm (docs/deploy.md,
# "Upgrading Slurm"); lucid gets the same version, being of the same build.
if(LUCID_HAVE_SLURM)
  set(LUCID_DEB_VERSION ${PROJECT_VERSION}+slurm${LUCID_SLURM_RELEASE})
else()
  set(LUCID_DEB_VERSION ${PROJECT_VERSION})
endif()

# Built here, installed below: man pages and changelogs gzipped (-n: no name
# or time inside, so two builds give the same bytes), the DEP-5 copyright
# file with the bundled data's licences in full.
set(LUCID_DEB_MAINTAINER "lucid maintainers <maintainers@lucid.example.org>" CACHE STRING
    "Maintainer field of the .debs and their changelog: a packager's 'Name <address>'")
set(lucid_gen ${CMAKE_BINARY_DIR}/packaging)
set(lucid_generated "")
file(MAKE_DIRECTORY ${lucid_gen}/man ${lucid_gen}/examples ${lucid_gen}/live)
function(lucid_gzip source out)
  add_custom_command(OUTPUT ${out}
                     COMMAND sh -c "gzip -9n -c \"$0\" >\"$1\"" ${source} ${out}
                     DEPENDS ${source} VERBATIM)
  set(lucid_generated ${lucid_generated} ${out} PARENT_SCOPE)
endfunction()
file(GLOB LUCID_MAN1 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.1)
set(LUCID_MAN1_GZ "")
foreach(page ${LUCID_MAN1})
  get_filename_component(name ${page} NAME)
  lucid_gzip(${page} ${lucid_gen}/man/${name}.gz)
  list(APPEND LUCID_MAN1_GZ ${lucid_gen}/man/${name}.gz)
endforeach()
lucid_gzip(${CMAKE_SOURCE_DIR}/man/lucidd.8 ${lucid_gen}/man/lucidd.8.gz)
configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/changelog.in ${lucid_gen}/changelog @ONLY)
lucid_gzip(${lucid_gen}/changelog ${lucid_gen}/changelog.gz)
file(GLOB LUCID_DATA_LICENSES ${CMAKE_SOURCE_DIR}/data/venus-sept/LICENSE.*)
add_custom_command(OUTPUT ${lucid_gen}/copyright
                   COMMAND sh ${CMAKE_SOURCE_DIR}/packaging/debian/copyright.sh
                           ${CMAKE_SOURCE_DIR}/packaging/debian/copyright.in
                           ${lucid_gen}/copyright ${LUCID_DATA_LICENSES}
                   DEPENDS ${CMAKE_SOURCE_DIR}/packaging/debian/copyright.in
                           ${CMAKE_SOURCE_DIR}/packaging/debian/copyright.sh ${LUCID_DATA_LICENSES}
                   VERBATIM)
list(APPEND lucid_generated ${lucid_gen}/copyright)
add_custom_target(lucid_package_files ALL DEPENDS ${lucid_generated})

install(FILES ${LUCID_MAN1_GZ} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT lucid)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/debian/lucid.lintian-overrides RENAME lucid
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides COMPONENT lucid)
install(FILES ${lucid_gen}/copyright ${lucid_gen}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/lucid COMPONENT lucid)

# The data `lucid trace synth` draws from, and what the examples read; the
# reference simulator's outputs (tests only) stay behind.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/data/venus-sept DESTINATION ${LUCID_INSTALL_DATADIR}/data
        COMPONENT lucid PATTERN reference EXCLUDE)
# The installed examples leave `out` unset: their folder belongs to the
# package, so results go to ./out of whoever runs them (or --out DIR).
foreach(example venus venus-online)
  add_custom_command(OUTPUT ${lucid_gen}/examples/${example}.ini
    COMMAND sh -c "sed -e 's|^out = .*|# out: unset, so results go to ./out (or --out DIR)|' \"$0\" >\"$1\""
            ${CMAKE_SOURCE_DIR}/examples/${example}.ini ${lucid_gen}/examples/${example}.ini
    DEPENDS ${CMAKE_SOURCE_DIR}/examples/${example}.ini VERBATIM)
  list(APPEND lucid_examples ${lucid_gen}/examples/${example}.ini)
endforeach()
add_custom_target(lucid_example_files ALL DEPENDS ${lucid_examples})
install(FILES ${lucid_examples} DESTINATION ${LUCID_INSTALL_DATADIR}/examples COMPONENT lucid)

if(TARGET lucidd)
  set(LUCID_LIVE_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/lucid-slurm)
  install(FILES ${lucid_gen}/man/lucidd.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8 COMPONENT live)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/debian/lucid-slurm.lintian-overrides RENAME lucid-slurm
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides COMPONENT live)
  install(FILES ${lucid_gen}/copyright ${lucid_gen}/changelog.gz
          DESTINATION ${LUCID_LIVE_DOCDIR} COMPONENT live)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/lucid.conf ${CMAKE_SOURCE_DIR}/packaging/lucidd.conf
                ${CMAKE_SOURCE_DIR}/packaging/plugstack.conf
          DESTINATION ${LUCID_LIVE_DOCDIR}/examples COMPONENT live)

  # The units name the installed lucidd, so they are written at install time
  # from the prefix given then (`--prefix`, or cpack's /usr); configuration
  # in /etc/lucid and units in /lib/systemd/system (Debian 12) for prefix
  # /usr, else PREFIX/etc/lucid and PREFIX/lib/systemd/system.  A folder per
  # prefix and DESTDIR, so installs running at once (tests) do not hand each
  # other their units.
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(LUCID_CONFDIR /etc/lucid)
      set(lucid_unit_dest /lib/systemd/system)
    else()
      set(LUCID_CONFDIR \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}/lucid)
      set(lucid_unit_dest \${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
    endif()
    set(LUCID_STATEDIR /var/lib/lucid)
    set(LUCID_SBINDIR \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR})
    string(MD5 lucid_unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    set(lucid_unit_dir ${lucid_gen}/\${lucid_unit_dir})
    foreach(unit lucidd lucid-handback)
      configure_file(${CMAKE_SOURCE_DIR}/packaging/\${unit}.service.in
                     \${lucid_unit_dir}/\${unit}.service @ONLY)
      file(INSTALL DESTINATION \${lucid_unit_dest} TYPE FILE
           FILES \${lucid_unit_dir}/\${unit}.service)
    endforeach()" COMPONENT live)
endif()

# The debug information of each program and plugin, for the -dbgsym
# packages (the packages' own copies are stripped: CPACK_STRIP_FILES); left
# out of a plain `cmake --install` (EXCLUDE_FROM_ALL).
function(lucid_debug_symbols component)
  foreach(target ${ARGN})
    install(CODE "set(LUCID_ELF \"$<TARGET_FILE:${target}>\")
                  include(${CMAKE_SOURCE_DIR}/cmake/debug-symbols.cmake)"
            COMPONENT ${component} EXCLUDE_FROM_ALL)
  endforeach()
endfunction()
lucid_debug_symbols(lucid_dbgsym lucid_cli)
install(FILES ${lucid_gen}/copyright ${lucid_gen}/changelog.gz
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/lucid-dbgsym COMPONENT lucid_dbgsym
        EXCLUDE_FROM_ALL)
if(TARGET lucidd)
  lucid_debug_symbols(live_dbgsym lucidd job_submit_lucid spank_lucid)
  install(FILES ${lucid_gen}/copyright ${lucid_gen}/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/lucid-slurm-dbgsym COMPONENT live_dbgsym
          EXCLUDE_FROM_ALL)
endif()

# ---- cpack -G DEB --------------------------------------------------------
# Two packages (docs/deploy.md, "What goes where"):
#   lucid        the simulator and models: runs on a laptop, no Slurm;
#   lucid-slurm  lucidd, the plugins and the units: depends on lucid and on
#                the Slurm release it was built for.
# Depends from the binaries themselves (dpkg-shlibdeps); binaries stripped,
# their debug symbols in lucid-dbgsym and lucid-slurm-dbgsym (built here
# rather than with CPACK_DEBIAN_DEBUGINFO_PACKAGE, whose .ddeb in CMake 3.25
# lists build-tree paths in its md5sums and has no copyright).
set(CPACK_PACKAGE_NAME lucid)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEBIAN_PACKAGE_VERSION ${LUCID_DEB_VERSION})
set(CPACK_PACKAGE_CONTACT "${LUCID_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lucid lucid_dbgsym)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_LUCID_PACKAGE_NAME lucid)
set(CPACK_DEBIAN_LUCID_PACKAGE_SECTION science)
set(CPACK_DEBIAN_LUCID_DESCRIPTION
"GPU-cluster scheduler simulator with interpretable models (Lucid)
A C implementation of Lucid (Hu et al., ASPLOS 2023), a non-intrusive,
scalable and interpretable scheduler for deep-learning training jobs on
shared GPU clusters.  The lucid command replays cluster traces under six
policies (FIFO, SJF, SRTF, QSSF, Tiresias, Lucid), reproduces the Lucid
paper's simulation exactly, imports traces from several public formats,
trains and explains Lucid's throughput, duration and sharing models, tunes
policies and reports the results.  It also talks to lucidd (package
lucid-slurm) for lucid queue and lucid status.
.
The package holds the Venus September 2020 trace, the paper's workload,
and example experiments.  It needs no Slurm.")
set(CPACK_DEBIAN_LUCID_DBGSYM_PACKAGE_NAME lucid-dbgsym)
set(CPACK_DEBIAN_LUCID_DBGSYM_PACKAGE_SECTION debug)
set(CPACK_DEBIAN_LUCID_DBGSYM_PACKAGE_DEPENDS "lucid (= ${LUCID_DEB_VERSION})")
set(CPACK_DEBIAN_LUCID_DBGSYM_DESCRIPTION "debug symbols for lucid
The debug information of /usr/bin/lucid (package lucid), found by gdb
through the program's build id.")

if(TARGET lucidd)
  list(APPEND CPACK_COMPONENTS_ALL live live_dbgsym)
  set(CPACK_DEBIAN_LIVE_DBGSYM_PACKAGE_NAME lucid-slurm-dbgsym)
  set(CPACK_DEBIAN_LIVE_DBGSYM_PACKAGE_SECTION debug)
  set(CPACK_DEBIAN_LIVE_DBGSYM_PACKAGE_DEPENDS "lucid-slurm (= ${LUCID_DEB_VERSION})")
  set(CPACK_DEBIAN_LIVE_DBGSYM_DESCRIPTION "debug symbols for lucid-slurm
The debug information of lucidd and of the job_submit and SPANK plugins
(package lucid-slurm), found by gdb through their build ids.")
  set(LUCID_DEB_SLURM_PACKAGE slurm-wlm-basic-plugins CACHE STRING
      "The Debian package of Slurm's plugin folder, pinned to the release built against")
  set(CPACK_DEBIAN_LIVE_PACKAGE_NAME lucid-slurm)
  set(CPACK_DEBIAN_LIVE_PACKAGE_SECTION admin)
  set(CPACK_DEBIAN_LIVE_PACKAGE_DEPENDS
      "lucid (= ${LUCID_DEB_VERSION}), ${LUCID_DEB_SLURM_PACKAGE} (>= ${LUCID_SLURM_RELEASE}), ${LUCID_DEB_SLURM_PACKAGE} (<< ${lucid_slurm_next})")
  set(CPACK_DEBIAN_LIVE_PACKAGE_SUGGESTS "slurmctld, slurmd, munge")
  set(CPACK_DEBIAN_LIVE_DESCRIPTION
"Lucid scheduling for Slurm ${LUCID_SLURM_RELEASE}: lucidd and plugins
The live half of lucid: lucidd, a daemon beside slurmctld that profiles
each new job on a few nodes, orders the queue by Lucid's interpretable
priorities, packs jobs that share GPUs well and pins where they run; the
job_submit plugin (slurmctld) that holds new jobs for it; the SPANK plugin
(slurmstepd, sbatch, srun) that gives packed jobs their GPUs; systemd units
for lucidd and for its hand-back watchdog, which returns held jobs to Slurm
when lucidd is silent.
.
Built for Slurm ${LUCID_SLURM_RELEASE} and installable only beside it: after
a Slurm upgrade, rebuild this package (see docs/deploy.md).")
  # Removing the package while plugstack.conf still `require`s the SPANK
  # plugin would fail every job step on the node: refused.
  configure_file(${CMAKE_SOURCE_DIR}/packaging/debian/lucid-slurm.prerm
                 ${lucid_gen}/live/prerm COPYONLY)
  set(CPACK_DEBIAN_LIVE_PACKAGE_CONTROL_EXTRA ${lucid_gen}/live/prerm)
  message(STATUS "lucid: lucid-slurm .deb pinned to ${LUCID_DEB_SLURM_PACKAGE} ${LUCID_SLURM_RELEASE}")
endif()
include(CPack)

# The install and the package themselves (tests/install_package.sh): files
# in place for DESTDIR and --prefix, man pages render, dpkg -c and Depends.
add_test(NAME install_package
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install_package.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR} ${CMAKE_CPACK_COMMAND})
set_tests_properties(install_package PROPERTIES TIMEOUT 300)
# The package split, read from the .debs: lucid needs no Slurm library,
# lucid-slurm is pinned to this Slurm release, binaries stripped with their
# debug symbols in -dbgsym (tests/package_split.sh).
add_test(NAME package_split
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/package_split.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR} ${CMAKE_CPACK_COMMAND})
set_tests_properties(package_split PROPERTIES TIMEOUT 300)

# The installed files on a lab cluster (tests/slurm/install.sh).
if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM AND TARGET lucidd)
  add_test(NAME slurm_install
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/install.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(slurm_install PROPERTIES TIMEOUT 180 LABELS slurm)
endif()
