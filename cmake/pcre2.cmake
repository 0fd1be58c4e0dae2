# PCRE2 (Debian's libpcre2-dev, found by pkg-config as libpcre2-8): the
# tokenizer's Split pre-tokenizers whose regex the hand-written scanner does
# not know (model/tokenizer/regex_split.hpp). Imported here as kvactor::pcre2;
# used by the build and by the installed kvactorConfig.cmake.
find_package(PkgConfig REQUIRED)
pkg_check_modules(KVACTOR_PCRE2 QUIET IMPORTED_TARGET GLOBAL libpcre2-8)
if(NOT KVACTOR_PCRE2_FOUND)
  message(FATAL_ERROR "PCRE2 not found (pkg-config libpcre2-8; Debian package libpcre2-dev); "
                      "run tools/bootstrap")
endif()
if(NOT TARGET kvactor::pcre2)
  add_library(kvactor::pcre2 INTERFACE IMPORTED GLOBAL)
  target_link_libraries(kvactor::pcre2 INTERFACE PkgConfig::KVACTOR_PCRE2)
endif()
