# utf8proc (Debian's libutf8proc-dev): Unicode normalisation and case for the
# tokenizer's normalizers. Imported here as kvactor::utf8proc; used by the
# build and by the installed kvactorConfig.cmake.
find_path(UTF8PROC_INCLUDE_DIR utf8proc.h)
find_library(UTF8PROC_LIBRARY utf8proc)
if(NOT UTF8PROC_INCLUDE_DIR OR NOT UTF8PROC_LIBRARY)
  message(FATAL_ERROR "utf8proc not found (Debian package libutf8proc-dev); run tools/bootstrap")
endif()
if(NOT TARGET kvactor::utf8proc)
  add_library(kvactor::utf8proc SHARED IMPORTED)
  set_target_properties(kvactor::utf8proc PROPERTIES IMPORTED_LOCATION ${UTF8PROC_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${UTF8PROC_INCLUDE_DIR})
endif()
