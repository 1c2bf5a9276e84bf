# Small helpers in the spirit of Abseil's CMake/AbseilHelpers.cmake: every library is
# onepass_<name> with the alias onepass::<name>; tests and fuzzers register themselves.

set(ONEPASS_WARNINGS -Wall -Wextra -Wno-unused-parameter)
if(ONEPASS_WERROR)
  list(APPEND ONEPASS_WARNINGS -Werror)
endif()

# onepass_cc_library(NAME n SRCS a.cc ... [HDRS ...] DEPS ...)
function(onepass_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;HDRS;DEPS" ${ARGN})
  set(target onepass_${ARG_NAME})
  if(ARG_SRCS)
    add_library(${target} STATIC ${ARG_SRCS} ${ARG_HDRS})
    target_compile_options(${target} PRIVATE ${ONEPASS_WARNINGS})
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PUBLIC ${ARG_DEPS})
  else()
    add_library(${target} INTERFACE)
    target_include_directories(${target} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} INTERFACE ${ARG_DEPS})
  endif()
  add_library(onepass::${ARG_NAME} ALIAS ${target})
endfunction()

# onepass_cc_binary(NAME n SRCS ... DEPS ...)
function(onepass_cc_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_compile_options(${ARG_NAME} PRIVATE ${ONEPASS_WARNINGS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
endfunction()

# onepass_cc_test(NAME n SRCS ... DEPS ... [LABELS ...] [TIMEOUT s])
# A GoogleTest binary run by ctest. Every test has a timeout: no test may hang CI. Its main()
# (tests/support/test_main.cc) exits 77 when tests skipped, which ctest reports as skipped,
# never as passed; under CI=true a skip fails instead.
function(onepass_cc_test)
  cmake_parse_arguments(ARG "" "NAME;TIMEOUT" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_compile_options(${ARG_NAME} PRIVATE ${ONEPASS_WARNINGS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} onepass::test_main)
  target_precompile_headers(${ARG_NAME} REUSE_FROM onepass_test_main)
  add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
  set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}"
    SKIP_RETURN_CODE 77)
endfunction()

# onepass_cc_fuzzer(NAME n SRCS ... DEPS ... CORPUS dir)
# With ONEPASS_FUZZ (clang): a libFuzzer binary. Otherwise the same entry point linked with
# tests/fuzz/standalone_main.cc, and a ctest that replays every file of the corpus.
# Either way the target joins the custom target `fuzzers` and the list file
# <build>/fuzzers.tsv (see onepass_write_fuzzer_list), which scripts/fuzz.sh reads.
function(onepass_cc_fuzzer)
  cmake_parse_arguments(ARG "" "NAME;CORPUS" "SRCS;DEPS" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY ONEPASS_FUZZERS ${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY ONEPASS_FUZZER_CORPORA "${ARG_CORPUS}")
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  if(ONEPASS_FUZZ)
    target_compile_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
    target_link_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
  else()
    target_compile_options(${ARG_NAME} PRIVATE ${ONEPASS_WARNINGS})
    target_sources(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/standalone_main.cc)
    if(ONEPASS_TESTS)
      add_test(NAME ${ARG_NAME}_corpus COMMAND ${ARG_NAME} ${ARG_CORPUS})
      set_tests_properties(${ARG_NAME}_corpus PROPERTIES TIMEOUT 120 LABELS fuzz)
    endif()
  endif()
endfunction()

# Called once at the end of the top-level CMakeLists.txt (deferred below), when every
# onepass_cc_fuzzer has run: the target `fuzzers` builds them all, and <build>/fuzzers.tsv lists
# one per line: NAME<TAB>BINARY<TAB>CORPUS_DIR. Scripts find the fuzz targets there instead of
# grepping CMake files.
function(onepass_write_fuzzer_list)
  get_property(names GLOBAL PROPERTY ONEPASS_FUZZERS)
  get_property(corpora GLOBAL PROPERTY ONEPASS_FUZZER_CORPORA)
  add_custom_target(fuzzers)
  set(lines "")
  foreach(name corpus IN ZIP_LISTS names corpora)
    add_dependencies(fuzzers ${name})
    string(APPEND lines "${name}\t$<TARGET_FILE:${name}>\t${corpus}\n")
  endforeach()
  file(GENERATE OUTPUT ${CMAKE_BINARY_DIR}/fuzzers.tsv CONTENT "${lines}")
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL onepass_write_fuzzer_list)
