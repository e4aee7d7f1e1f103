# ctest driver: install the build tree into a scratch prefix, then configure,
# build and run the consumer project against it.
# Inputs: -DBUILD_DIR= -DSOURCE_DIR= -DWORK_DIR=
# With -DSHARD=1 (the program is built) it also runs the installed bin/shard.
# With -DPYTHON= -DPYTHON_INSTALL_DIR= (the Python package is built) it also
# imports the installed package from <prefix>/<PYTHON_INSTALL_DIR>.
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
# Every installed archive is libshard_<part>.a, none liblibshard_*.a.
file(GLOB_RECURSE doubled "${WORK_DIR}/prefix/lib*/liblibshard_*")
file(GLOB_RECURSE proto "${WORK_DIR}/prefix/lib*/libshard_proto.a")
if(doubled OR NOT proto)
  message(FATAL_ERROR "installed archives misnamed: ${doubled} (libshard_proto.a: '${proto}')")
endif()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
if(SHARD)
  run("${WORK_DIR}/prefix/bin/shard" --version)
endif()
if(PYTHON)
  set(site "${WORK_DIR}/prefix/${PYTHON_INSTALL_DIR}")
  if(IS_ABSOLUTE "${PYTHON_INSTALL_DIR}")
    message(FATAL_ERROR "LIBSHARD_PYTHON_INSTALL_DIR=${PYTHON_INSTALL_DIR} is not relative to the prefix")
  endif()
  run(${CMAKE_COMMAND} -E env "PYTHONPATH=${site}" ${PYTHON} -c
      "import libshard, sys; f = libshard._libshard.__file__; assert f.startswith(sys.argv[1]), f; assert libshard.tools.__file__.startswith(sys.argv[1]) and libshard.convert; print(f)"
      "${site}/libshard/")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
