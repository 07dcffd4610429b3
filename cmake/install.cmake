# install.cmake — what `cmake --install build [--prefix P]` puts where, and
# the Debian package `cpack -G DEB` builds from it (docs/deploy.md).
#
#   bin/lucid, sbin/lucidd                      the programs
#   <Slurm plugin dir>/job_submit_lucid.so,     the plugins (LUCID_SLURM_PLUGIN_DIR)
#                      spank_lucid.so
#   share/man/man1/lucid*.1, man8/lucidd.8      man pages (man/, written by hand)
#   share/lucid/data/venus-sept/                the bundled Venus data (trace synth's base)
#   share/lucid/examples/*.ini                  the example experiments (paths relative)
#   share/doc/lucid/examples/                   lucid.conf, lucidd.conf, plugstack.conf
#   lib/systemd/system/lucidd.service           the unit (paths from the install prefix)
#
# Every destination is relative to the install prefix, so `--prefix P` and
# DESTDIR land everything under P (or DESTDIR/prefix); the package uses /usr.

install(TARGETS lucid_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET lucidd)
  install(TARGETS lucidd RUNTIME DESTINATION ${CMAKE_INSTALL_SBINDIR})
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
  install(TARGETS job_submit_lucid spank_lucid LIBRARY DESTINATION ${LUCID_SLURM_PLUGIN_DIR})
endif()

file(GLOB LUCID_MAN1 CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/man/*.1)
install(FILES ${LUCID_MAN1} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/man/lucidd.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)

# The data `lucid trace synth` draws from, and what the examples read; the
# reference simulator's outputs (tests only) stay behind.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/data/venus-sept DESTINATION ${LUCID_INSTALL_DATADIR}/data
        PATTERN reference EXCLUDE)
install(FILES ${CMAKE_SOURCE_DIR}/examples/venus.ini ${CMAKE_SOURCE_DIR}/examples/venus-online.ini
        DESTINATION ${LUCID_INSTALL_DATADIR}/examples)
install(FILES ${CMAKE_SOURCE_DIR}/packaging/lucid.conf ${CMAKE_SOURCE_DIR}/packaging/lucidd.conf
              ${CMAKE_SOURCE_DIR}/packaging/plugstack.conf
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# The unit names the installed lucidd, so it is written at install time from
# the prefix given then (`--prefix`, or cpack's /usr); configuration in
# /etc/lucid for prefix /usr, else PREFIX/etc/lucid.
if(TARGET lucidd)
  # A file per prefix and DESTDIR, so installs running at once (tests) do
  # not hand each other their unit.
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(LUCID_CONFDIR /etc/lucid)
    else()
      set(LUCID_CONFDIR \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SYSCONFDIR}/lucid)
    endif()
    set(LUCID_SBINDIR \${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR})
    string(MD5 lucid_unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    set(lucid_unit_dir ${CMAKE_BINARY_DIR}/packaging/\${lucid_unit_dir})
    configure_file(${CMAKE_SOURCE_DIR}/packaging/lucidd.service.in
                   \${lucid_unit_dir}/lucidd.service @ONLY)
    file(INSTALL DESTINATION \${CMAKE_INSTALL_PREFIX}/lib/systemd/system TYPE FILE
         FILES \${lucid_unit_dir}/lucidd.service)")
endif()

# ---- cpack -G DEB --------------------------------------------------------
# Depends: the Debian packages holding the libraries the programs linked,
# found with dpkg -S (libslurm38 on Debian 12: its soname pins Slurm 22.05,
# which the plugins are built for).
set(LUCID_DEB_DEPENDS "")
find_program(LUCID_DPKG dpkg)
function(lucid_deb_depend library)
  if(NOT LUCID_DPKG OR NOT library)
    return()
  endif()
  get_filename_component(real ${library} REALPATH)
  execute_process(COMMAND ${LUCID_DPKG} -S ${real} OUTPUT_VARIABLE owner
                  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT owner)
    # merged /usr: dpkg may know the file under /lib
    string(REGEX REPLACE "^/usr" "" real ${real})
    execute_process(COMMAND ${LUCID_DPKG} -S ${real} OUTPUT_VARIABLE owner
                    ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  string(REGEX REPLACE ":.*" "" owner "${owner}")
  string(REGEX REPLACE ":[a-z0-9]+$" "" owner "${owner}") # libfoo:amd64
  if(owner)
    set(deps ${LUCID_DEB_DEPENDS})
    list(APPEND deps ${owner})
    list(REMOVE_DUPLICATES deps)
    set(LUCID_DEB_DEPENDS ${deps} PARENT_SCOPE)
  else()
    message(STATUS "lucid: no Debian package owns ${library}; left out of Depends")
  endif()
endfunction()
# The shared objects behind each pkg-config link line.
foreach(module JANSSON INIH)
  foreach(lib ${${module}_LINK_LIBRARIES})
    lucid_deb_depend(${lib})
  endforeach()
endforeach()
if(LUCID_HAVE_STATE)
  get_target_property(lucid_sqlite SQLite::SQLite3 IMPORTED_LOCATION)
  if(NOT lucid_sqlite)
    set(lucid_sqlite ${SQLite3_LIBRARIES})
  endif()
  lucid_deb_depend(${lucid_sqlite})
endif()
if(LUCID_HAVE_SLURM)
  lucid_deb_depend(${LUCID_SLURM_LIBRARY})
endif()
string(REPLACE ";" ", " LUCID_DEB_DEPENDS "${LUCID_DEB_DEPENDS}")
message(STATUS "lucid: .deb Depends: ${LUCID_DEB_DEPENDS}")

set(CPACK_PACKAGE_NAME lucid)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "lucid maintainers <lucid@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Lucid GPU-cluster scheduler: simulator, models, lucidd and Slurm plugins")
set(CPACK_PACKAGE_DESCRIPTION
    "lucid replays GPU-cluster traces under six schedulers (Lucid, ASPLOS 2023), trains its interpretable models, and lucidd schedules a Slurm cluster the Lucid way through a job_submit and a SPANK plugin.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${LUCID_DEB_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "slurmctld, slurmd, munge")
set(CPACK_GENERATOR DEB)
include(CPack)

# The install and the package themselves (tests/install_package.sh): files
# in place for DESTDIR and --prefix, man pages render, dpkg -c and Depends.
add_test(NAME install_package
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install_package.sh ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR} ${CMAKE_CPACK_COMMAND})
set_tests_properties(install_package PROPERTIES TIMEOUT 300)

# The installed files on a lab cluster (tests/slurm/install.sh).
if(LUCID_HAVE_LAB AND LUCID_HAVE_SLURM AND TARGET lucidd)
  add_test(NAME slurm_install
           COMMAND bash ${CMAKE_SOURCE_DIR}/tests/slurm/install.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
  set_tests_properties(slurm_install PROPERTIES TIMEOUT 180 LABELS slurm)
endif()
