# One place that sets up every libshard target: standard, warnings, sanitizers.
function(libshard_setup_target target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(LIBSHARD_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(LIBSHARD_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(LIBSHARD_BUILD_FUZZERS)
    # Coverage instrumentation for libFuzzer in every target, not just the
    # fuzz entry points.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                                             -fno-omit-frame-pointer)
  endif()
endfunction()
