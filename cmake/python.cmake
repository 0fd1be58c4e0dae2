# CPython for embedding (Debian's libpython3-dev, found by pkg-config as
# python3-embed): chat templates are rendered by Jinja2 itself
# (model/chat/jinja_template.hpp), which needs Debian's python3-jinja2 at run
# time. Imported here as kvactor::python; used by the build and by the
# installed kvactorConfig.cmake.
find_package(PkgConfig REQUIRED)
pkg_check_modules(KVACTOR_PYTHON3_EMBED QUIET IMPORTED_TARGET GLOBAL python3-embed)
if(NOT KVACTOR_PYTHON3_EMBED_FOUND)
  message(FATAL_ERROR "CPython for embedding not found (pkg-config python3-embed; Debian package "
                      "libpython3-dev); run tools/bootstrap")
endif()
if(NOT TARGET kvactor::python)
  add_library(kvactor::python INTERFACE IMPORTED GLOBAL)
  target_link_libraries(kvactor::python INTERFACE PkgConfig::KVACTOR_PYTHON3_EMBED)
endif()
