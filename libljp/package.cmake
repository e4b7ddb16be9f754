# Debian package of everything `cmake --install` puts in place: the tools,
# libljp and libljpcap (shared and static), the headers, pkg-config and CMake
# files, the man pages and the Lua modules.  Build it with
#   cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr && cmake --build build
#   (cd build && cpack -G DEB)
# With the prefix /usr, GNUInstallDirs puts the C modules in
# /usr/lib/<multiarch>/lua/5.1 and the Lua ones in /usr/share/lua/5.1, both
# on the default package.cpath/package.path of Debian's luajit, so
# require("ljp.sysprof") works without LUA_CPATH.
set(CPACK_PACKAGE_NAME ljp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "ljp")
set(CPACK_PACKAGE_CONTACT "ljp maintainers <maintainers@users.noreply.a-seed-66310efd.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "LuaJIT profile toolkit: read, fold, draw and record sysprof/memprof profiles")
# The long description; cpack puts the summary above it and indents it.
set(CPACK_PACKAGE_DESCRIPTION
"ljpdump, ljpfold, ljpsvg and ljpdb read Tarantool-style sysprof and memprof
streams; libljp is their parsing library.  The capture core (libljpcap, the
Lua modules ljp.sysprof and ljp.memprof, ljp-sysprof-run) records such
profiles, Lua and C stacks, in programs that embed LuaJIT.")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Dependencies from the ELF files' needs (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# ljp-sysprof-run runs luajit; the tools and libraries do not need it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "luajit")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The package installs under the configured prefix (/usr for a system
# package), not cpack's own default.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_GENERATOR DEB)
include(CPack)
