# KVACTOR_SANITIZE=address builds everything with AddressSanitizer and
# UndefinedBehaviorSanitizer, =thread with ThreadSanitizer (tools/test --asan,
# tools/test --tsan; separate build folders). Boost's compiled parts and
# OpenBLAS stay uninstrumented Debian libraries; tools/test --tsan points the
# CAF paths (cmake/caf.cmake) at a CAF built with TSan (tools/sanitizers/build-caf).
set(KVACTOR_SANITIZE "" CACHE STRING "Sanitizer build: empty, address (ASan+UBSan) or thread (TSan)")
set_property(CACHE KVACTOR_SANITIZE PROPERTY STRINGS "" address thread)
if(KVACTOR_SANITIZE STREQUAL "address")
  # NOTE: every check stops the program except `null`, which a suppression
  # can then silence (tools/sanitizers/ubsan.supp; UBSAN_OPTIONS has
  # halt_on_error=1, so an unsuppressed one still stops it).
  set(kvactor_sanitize_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                             -fsanitize-recover=null -fno-omit-frame-pointer)
elseif(KVACTOR_SANITIZE STREQUAL "thread")
  set(kvactor_sanitize_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT KVACTOR_SANITIZE STREQUAL "")
  message(FATAL_ERROR "KVACTOR_SANITIZE must be empty, address or thread, not '${KVACTOR_SANITIZE}'")
endif()
if(kvactor_sanitize_flags)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${kvactor_sanitize_flags}>")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # NOTE: with either sanitizer's instrumentation g++ 12 warns that members
    # may be used uninitialised inside libstdc++'s moves: std::function's
    # when std::regex moves its NFA states (ASan, model_runtime_constraint_test),
    # std::string's when a std::variant moves (TSan, tokenizer_json_steps.cpp);
    # the release build, which sees the same code without instrumentation,
    # does not.
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-maybe-uninitialized>)
  endif()
  if(KVACTOR_SANITIZE STREQUAL "thread")
    # NOTE: g++ 12 warns (-Wtsan) that TSan does not model the
    # std::atomic_thread_fence inside Boost.Asio's executor_op, inlined into
    # our translation units; that is Boost's code, not ours.
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-Wno-tsan>)
  endif()
  add_link_options(${kvactor_sanitize_flags})
  message(STATUS "kvactor: sanitizers ${KVACTOR_SANITIZE}")
endif()
