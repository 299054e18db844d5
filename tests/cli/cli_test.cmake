# The CLI as the contract states it: results on stdout with exit 0; errors on stderr, one per
# line with the field's JSON path, nothing on stdout, exit 2. Run with -DGPUPLAN=... -DSRC=...

# 1. The contract's example request.
execute_process(COMMAND ${GPUPLAN} estimate ${SRC}/tests/cli/contract_example.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "contract example: exit ${rc}, stderr: ${err}")
endif()
set(contract_out "${out}")
string(JSON version GET "${out}" catalog_version)
# Llama 3.1 8B in bf16: 8,030,261,248 x 2 = 16,060,522,496 bytes of base weights, plus fp32
# LoRA adapters (rank 16, all linear: 41,943,040 params) x 4 = 167,772,160.
string(JSON weights GET "${out}" memory per_gpu_bytes weights)
if(NOT weights EQUAL 16228294656)
  message(FATAL_ERROR "contract example: weights ${weights}")
endif()

# 2. Standard input, and the contract's own error line.
execute_process(COMMAND ${GPUPLAN} estimate - INPUT_FILE ${SRC}/tests/cli/bad_seq_len.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "")
  message(FATAL_ERROR "bad request: exit ${rc}, stdout '${out}'")
endif()
string(FIND "${err}" "/workload/seq_len: must be a positive integer, got -4" at)
if(at EQUAL -1)
  message(FATAL_ERROR "bad request stderr: ${err}")
endif()

# 3. catalog halves and help.
execute_process(COMMAND ${GPUPLAN} catalog --gpus RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "catalog --gpus: exit ${rc}")
endif()
string(JSON first GET "${out}" gpus 0 id)
string(JSON models ERROR_VARIABLE missing GET "${out}" models)
if(NOT missing)
  message(FATAL_ERROR "catalog --gpus printed the models too")
endif()
foreach(cmd estimate plan script calibrate fleet limits launch traffic catalog validate)
  execute_process(COMMAND ${GPUPLAN} ${cmd} --help RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${cmd} --help: exit ${rc}")
  endif()
endforeach()
execute_process(COMMAND ${GPUPLAN} frobnicate RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "unknown command: exit ${rc}")
endif()

# 4. --catalog DIR reads the same files; a missing directory is an error.
execute_process(COMMAND ${GPUPLAN} estimate ${SRC}/tests/cli/contract_example.json
                        --catalog ${SRC}/catalog RESULT_VARIABLE rc OUTPUT_VARIABLE out2)
if(NOT rc EQUAL 0 OR NOT out2 STREQUAL contract_out)
  message(FATAL_ERROR "--catalog catalog: exit ${rc}, or a different answer than the built-in catalog")
endif()
execute_process(COMMAND ${GPUPLAN} catalog --catalog /nonexistent RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "--catalog /nonexistent: exit ${rc}")
endif()

# 5. Every dev-cases memory case gets an answer.
execute_process(COMMAND ${GPUPLAN} validate ${SRC}/tests/reference/memory_cases.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(FIND "${out}" "request rejected" rejected)
if(NOT rc EQUAL 0 OR NOT rejected EQUAL -1)
  message(FATAL_ERROR "validate: exit ${rc}: ${out} ${err}")
endif()
# 6. calibrate: a measurement on a training request that only serving has is named by path.
execute_process(COMMAND ${GPUPLAN} calibrate - INPUT_FILE ${SRC}/tests/cli/calibrate_wrong_kind.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT out STREQUAL "")
  message(FATAL_ERROR "calibrate with a serving figure on training: exit ${rc}, stdout '${out}'")
endif()
string(FIND "${err}" "/measured/tpot_ms: is a serving measurement" at)
if(at EQUAL -1)
  message(FATAL_ERROR "calibrate stderr: ${err}")
endif()
# 7. fleet: the README's example answers, with every card it lists either an option or rejected.
execute_process(COMMAND ${GPUPLAN} fleet ${SRC}/tests/cli/fleet_example.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fleet example: exit ${rc}: ${err}")
endif()
string(JSON options LENGTH "${out}" options)
string(JSON rejected LENGTH "${out}" rejected)
math(EXPR listed "${options} + ${rejected}")
if(options LESS 1 OR listed LESS 4)
  message(FATAL_ERROR "fleet example: ${options} options, ${rejected} rejected of 4 cards")
endif()
# 8. traffic: the example answers every card of the catalog as an option or a rejection; a
# traffic field out of range is named on stderr with exit 2.
execute_process(COMMAND ${GPUPLAN} traffic ${SRC}/tests/cli/traffic_example.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "traffic example: exit ${rc}: ${err}")
endif()
string(JSON options LENGTH "${out}" options)
if(options LESS 10)
  message(FATAL_ERROR "traffic example: only ${options} options")
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bad_traffic.json
     "{\"model\": {\"preset\": \"llama-3.1-8b\"}, \"workload\": {\"kind\": \"inference\"}, \"traffic\": {\"requests_per_s\": 1, \"prompt_tokens\": {\"mean\": 10}, \"output_tokens\": {\"mean\": 10}, \"prefix_cache_hit\": 2}}")
execute_process(COMMAND ${GPUPLAN} traffic ${CMAKE_CURRENT_BINARY_DIR}/bad_traffic.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "/traffic/prefix_cache_hit")
  message(FATAL_ERROR "bad traffic: exit ${rc}, stderr ${err}")
endif()
# 9. limits and launch answer the contract example (a fixed setup).
foreach(cmd limits launch)
  execute_process(COMMAND ${GPUPLAN} ${cmd} ${SRC}/tests/cli/contract_example.json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${cmd} contract example: exit ${rc}: ${err}")
  endif()
endforeach()
message(STATUS "cli contract checks passed")

# --hf-config FILE: a local config.json becomes the request's model.hf_config (the preset goes),
# model.hf_id stays as its label and is the repository the launch command loads.
execute_process(COMMAND ${GPUPLAN} launch ${SRC}/tests/cli/hf_id_request.json
                        --hf-config ${SRC}/tests/cli/qwen2_config.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "launch --hf-config: exit ${rc}, stderr: ${err}")
endif()
string(JSON command GET "${out}" command)
string(JSON label GET "${out}" request_normalized model hf_id)
string(JSON layers GET "${out}" request_normalized model hf_config num_hidden_layers)
if(NOT command MATCHES "^vllm serve Qwen/Qwen2.5-1.5B" OR NOT label STREQUAL "Qwen/Qwen2.5-1.5B"
   OR NOT layers EQUAL 28)
  message(FATAL_ERROR "launch --hf-config: ${command} / ${label} / ${layers}")
endif()
execute_process(COMMAND ${GPUPLAN} estimate ${SRC}/tests/cli/hf_id_request.json --hf-config /nonexistent.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "cannot read /nonexistent.json")
  message(FATAL_ERROR "--hf-config without a file: exit ${rc}, ${err}")
endif()
# hf_id with a preset: a label that names the repository.
execute_process(COMMAND ${GPUPLAN} estimate - INPUT_FILE ${SRC}/tests/cli/hf_id_request.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hf_id with a preset: exit ${rc}, ${err}")
endif()
