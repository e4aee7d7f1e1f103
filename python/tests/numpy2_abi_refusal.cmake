# ctest python_numpy2_abi_refusal (issue 42): configuring the project with
# LIBSHARD_REQUIRE_NUMPY2_ABI=ON, as setup.py does whenever it builds with the
# pybind11 Python package, against a pybind11 older than 2.12 (Debian 12's
# 2.10) stops with an error that names the version and the fix, so no wheel
# can hold a module that misreads numpy 2's arrays.
#   cmake -DSOURCE=... -DWORK=... -DPYBIND11_DIR=... -DPYTHON=... -P numpy2_abi_refusal.cmake
file(REMOVE_RECURSE "${WORK}")
execute_process(
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE}" -B "${WORK}" -G Ninja -DLIBSHARD_REQUIRE_NUMPY2_ABI=ON
          -Dpybind11_DIR=${PYBIND11_DIR} -DPython3_EXECUTABLE=${PYTHON} -DLIBSHARD_BUILD_TESTS=OFF
          -DLIBSHARD_BUILD_BENCH=OFF
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE "${WORK}")
if(rc EQUAL 0)
  message(FATAL_ERROR "configure with pybind11 at ${PYBIND11_DIR} and LIBSHARD_REQUIRE_NUMPY2_ABI=ON succeeded:\n${out}")
endif()
if(NOT err MATCHES "pybind11 2\\.[0-9]+\\.[0-9]+ .* reads numpy 1 arrays only, and[ \n]+LIBSHARD_REQUIRE_NUMPY2_ABI is on")
  message(FATAL_ERROR "configure failed, but not with the pybind11 refusal:\n${err}")
endif()
if(NOT err MATCHES "pybind11>=2.12")
  message(FATAL_ERROR "the refusal does not name the fix:\n${err}")
endif()
message(STATUS "refused as it should: pybind11 at ${PYBIND11_DIR}")
