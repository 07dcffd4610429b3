# debug-symbols.cmake — run at install time (install(SCRIPT) below in
# install.cmake) for the -dbgsym packages: the debug information of one
# built ELF file, under lib/debug/.build-id/xx/yyyy.debug of the prefix, where
# gdb finds it for the stripped program in the other package.
#   LUCID_ELF: the build tree's (unstripped) file
execute_process(COMMAND readelf -n ${LUCID_ELF} OUTPUT_VARIABLE notes RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
  message(FATAL_ERROR "lucid: no build id in ${LUCID_ELF}")
endif()
set(dir $ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/debug/.build-id/${CMAKE_MATCH_1})
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND objcopy --only-keep-debug --compress-debug-sections ${LUCID_ELF}
                        ${dir}/${CMAKE_MATCH_2}.debug RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "lucid: objcopy --only-keep-debug ${LUCID_ELF} failed")
endif()
file(CHMOD ${dir}/${CMAKE_MATCH_2}.debug PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
message(STATUS "Installing: ${dir}/${CMAKE_MATCH_2}.debug")
