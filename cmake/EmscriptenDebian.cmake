# Debian's Emscripten 3.1.6 with Debian's packages: the two fixes it needs, P1 and P2 below.
#
# P1: nlohmann_json's Debian config lives outside the Emscripten sysroot, so find_package needs
# NO_CMAKE_FIND_ROOT_PATH; its target then points at /usr/include, whose glibc headers break
# em++. Re-point the target at a staging directory that holds only nlohmann/.
find_package(nlohmann_json 3.10 REQUIRED CONFIG NO_CMAKE_FIND_ROOT_PATH)
get_target_property(_gpuplan_nlohmann nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
list(GET _gpuplan_nlohmann 0 _gpuplan_nlohmann)
set(_gpuplan_stage "${CMAKE_BINARY_DIR}/_wasm_include")
file(MAKE_DIRECTORY "${_gpuplan_stage}")
if(NOT EXISTS "${_gpuplan_stage}/nlohmann")
  file(CREATE_LINK "${_gpuplan_nlohmann}/nlohmann" "${_gpuplan_stage}/nlohmann" SYMBOLIC)
endif()
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
                      INTERFACE_INCLUDE_DIRECTORIES "${_gpuplan_stage}")

# P2: em++'s link step runs acorn-optimizer.js with node, and Debian ships acorn where only
# Debian's own node looks (/usr/share/nodejs): give the link step that NODE_PATH.
if(EXISTS "/usr/share/nodejs/acorn")
  set(_gpuplan_node_path "/usr/share/nodejs")
  if(DEFINED ENV{NODE_PATH} AND NOT "$ENV{NODE_PATH}" STREQUAL "")
    string(APPEND _gpuplan_node_path ":$ENV{NODE_PATH}")
  endif()
  set(CMAKE_CXX_LINKER_LAUNCHER "${CMAKE_COMMAND};-E;env;NODE_PATH=${_gpuplan_node_path}")
endif()
