# The test `layers`: an include that runs the wrong way between the layers fails to compile.
#   cmake -DBUILD_DIR=build -DSOURCE_DIR=. -P tests/layers/check.cmake
# Each probe tests/layers/<a>_sees_<b>.c is an object library (outside `all`) that links the
# layer <a> and includes a header of <b>; CMakeLists.txt declares them. A refused probe must fail
# on exactly its header not being found (not on some other error); the control must compile.
# Last, no source may reach around the layers with a relative include ("../").
set(failures 0)
function(probe name header expect)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target layer_probe_${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(expect STREQUAL "refused")
    string(REGEX MATCH "${header}'?(: No such file or directory| file not found)" found "${out}")
    if(rc EQUAL 0 OR NOT found)
      message(SEND_ERROR "layers: ${name} should fail for want of ${header}, but:\n${out}")
    else()
      message(STATUS "layers: ${name}: refused (${header} not found), as it must be")
    endif()
  else()
    if(NOT rc EQUAL 0)
      message(SEND_ERROR "layers: the control ${name} should compile, but:\n${out}")
    else()
      message(STATUS "layers: ${name}: compiles, as it must")
    endif()
  endif()
endfunction()

probe(core_sees_store "store/store.h" refused)
probe(store_sees_http "http/http.h" refused)
probe(http_sees_cmd "cmd/cmd.h" refused)
probe(http_sees_below "" compiles)

file(GLOB_RECURSE sources ${SOURCE_DIR}/server/*.[ch] ${SOURCE_DIR}/tests/unit/*.[ch]
     ${SOURCE_DIR}/fuzz/*.[ch] ${SOURCE_DIR}/bench/*.[ch])
foreach(f ${sources})
  file(STRINGS ${f} hits REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]*\\.\\./")
  if(hits)
    message(SEND_ERROR "layers: ${f} reaches around the layers with a relative include: ${hits}")
  endif()
endforeach()
