# The Debian libraries that pkg-config finds, each imported as kvactor::<name>;
# used by the build and by the installed kvactorConfig.cmake.
find_package(PkgConfig REQUIRED)

# kvactor_pkg_config_library(NAME MODULE PACKAGE WHAT): kvactor::NAME from
# pkg-config's MODULE, or a configure error naming WHAT and Debian's PACKAGE.
function(kvactor_pkg_config_library name module package what)
  pkg_check_modules(kvactor_${name} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT kvactor_${name}_FOUND)
    message(FATAL_ERROR "${what} not found (pkg-config ${module}; Debian package ${package}); "
                        "run tools/bootstrap")
  endif()
  if(NOT TARGET kvactor::${name})
    add_library(kvactor::${name} INTERFACE IMPORTED GLOBAL)
    target_link_libraries(kvactor::${name} INTERFACE PkgConfig::kvactor_${name})
  endif()
endfunction()

# CPython for embedding: chat templates are rendered by Jinja2 itself
# (model/chat/jinja_template.hpp), which needs Debian's python3-jinja2 at run time.
kvactor_pkg_config_library(python python3-embed libpython3-dev "CPython for embedding")
# PCRE2: the tokenizer's Split pre-tokenizers whose pattern the hand-written
# scanner does not know (model/tokenizer/regex_split.hpp).
kvactor_pkg_config_library(pcre2 libpcre2-8 libpcre2-dev "PCRE2")
