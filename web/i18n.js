// @ts-check
// English and Simplified Chinese. Keys name what the text is for; elements carry data-i18n.
const en = {
  title: 'gpuplan: GPU capacity planner',
  tagline: 'Which accelerator, how many, set up how — and will it really run. Memory first, then count, then interconnect; 20% headroom on top.',
  lang: 'Language', theme: 'Theme', theme_auto: 'System', theme_light: 'Light', theme_dark: 'Dark',
  line1: '1. Purpose', line2: '2. Model and context', line3: '3. Precision',
  line4: '4. Duration or latency target', line5: '5. Cards or budget', line6: '6. Site power',
  kind: 'Purpose', kind_pretrain: 'Pretraining', kind_full_finetune: 'Full fine-tuning',
  kind_lora: 'LoRA fine-tuning', kind_qlora: 'QLoRA fine-tuning', kind_inference: 'Inference (serving)',
  framework: 'Framework (training stack or serving engine)', framework_generic: 'Generic (plain PyTorch)',
  framework_line: '{0} holds {1} per card once started; its KV cache: {2} = {3} tokens = {4} sequences of prompt + output{5}.',
  framework_seqs: '; at most {0} run at once by default',
  accuracy_link: 'How accurate is it? (estimates vs published measurements)', likely: 'likely',
  no_band: 'no published measurement bounds this figure',
  traffic_fields: 'Size for traffic (optional)', rps: 'Requests per second', prompt_p95: 'Prompt tokens, p95',
  output_p95: 'Output tokens, p95', prefix_hit: 'Prefix-cache hit (% of prompt tokens)',
  traffic_title: 'Sized for the traffic', traffic_replicas: 'Replicas × cards', traffic_concurrency: 'In flight per replica',
  traffic_ttft: 'TTFT p95 (ms)', traffic_tpot: 'TPOT (ms)', traffic_cost: 'Per hour / per million tokens',
  launch_title: 'Launch command', launch_run: 'Show the command that runs this setup', launch_copy: 'Copy the command',
  limits_title: 'The most this setup takes', limits_run: 'Find the limits (card, count and layout held)',
  limits_concurrency: 'Sequences at once: {0} (of {1} tokens each, within the latency targets)',
  limits_context: 'Longest context per sequence: {0} tokens at {1} at once{2}',
  limits_context_alone: 'Longest context for one sequence: {0} tokens{1}', limits_model_limit: ' (the model\'s own limit)',
  limits_micro_batch: 'Largest micro-batch: {0} (at {1} tokens a sequence)',
  limits_seq_len: 'Longest sequence: {0} tokens (micro-batch {1}){2}',
  limits_largest: 'Largest for {0}: {1} on {2} card(s), {3}, {4}', limits_none: 'No catalog model for {0} on {1} card(s)',
  model: 'Model preset', hf: 'Or paste a Hugging Face config.json',
  arch: 'Or give the architecture (layers first; it replaces the preset)', layers: 'Layers',
  hidden: 'Hidden size', intermediate: 'MLP intermediate size', heads: 'Attention heads',
  kv_heads: 'Key/value heads (GQA)', vocab: 'Vocabulary', seq_len: 'Sequence length (tokens)',
  prompt_tokens: 'Prompt tokens', output_tokens: 'Output tokens', weights: 'Weights',
  tokens: 'Training tokens (total)', deadline_h: 'Deadline (hours, optional)',
  concurrency: 'Concurrent requests', ttft_ms: 'Time to first token target (ms, optional)',
  tpot_ms: 'Time per output token target (ms, optional)', max_gpus: 'Max cards',
  market: 'Market (whose prices)', market_global: 'Global (USD)', market_cn: 'China (CNY)',
  offer_line: '{0} ({1}, {4} market): {2} per GPU-hour, {3}', offer_request: 'your own price (pricing.usd_per_gpu_hour)',
  class_hyperscaler_on_demand: 'hyperscaler on demand', class_specialty_cloud: 'specialty cloud',
  class_marketplace: 'marketplace', class_own: 'own price', class_purchase: 'purchase',
  rank_not_sold_in_market: 'not sold in this market: after every card sold here',
  rank_end_of_life_after_current: 'end of life: after the current cards',
  note_card_not_sold_in_market: 'an export model made for another market: not sold in the chosen market, so neither priced nor ranked before the cards sold there',
  note_card_restricted_in_market: 'restricted from sale into the chosen market since {since_year}-{since_month} (export controls); a price shown is a rental of cards already there',
  note_end_of_life_card: 'end of life since {since_year}-{since_month}: current toolkits (CUDA 13) and serving engines no longer support it; ranked after current cards',
  note_bitsandbytes_rocm_from_0_50: 'QLoRA and 8-bit optimizers run through bitsandbytes, whose ROCm build is official from 0.50: use bitsandbytes>=0.50',
  note_bitsandbytes_gaudi_from_0_48: 'bitsandbytes supports Intel Gaudi from 0.48.1',
  note_vllm_vendor_plugin: 'vLLM runs here through the vendor\'s own plugin (vllm-gaudi, vllm-ascend), with its own releases',
  note_megatron_rocm_fork: 'Megatron-LM runs on AMD cards as AMD\'s Primus / ROCm fork, not NVIDIA\'s release',
  note_stack_unsupported_on_card: 'the chosen stack (or bitsandbytes, for QLoRA and 8-bit optimizers) has no build for this card: its CUDA compute capability is too old, or its platform is not supported',
  reject_stack_unsupported_on_card: 'the chosen stack (or bitsandbytes, for QLoRA and 8-bit optimizers) has no build for this card: its CUDA compute capability is too old, or its platform is not supported',
  budget_usd: 'Budget (USD, optional)', node_power_w: 'Power per node (W, optional)',
  cooling: 'Cooling', cooling_any: 'Any', cooling_air: 'Air', cooling_liquid: 'Liquid',
  objective: 'Rank by', obj_default: 'Purpose default', obj_time: 'Time', obj_cost: 'Cost',
  obj_count: 'Card count', obj_power: 'Power',
  results: 'Recommendations', col_gpu: 'Card', col_fits: 'Fits', col_count: 'Cards',
  col_setup: 'Setup', col_memory: 'Memory per card', col_time: 'Time', col_throughput: 'Throughput',
  col_cost: 'Cost', col_power: 'Power', col_warnings: 'Warnings', details: 'Details',
  advice: 'Advice', rejected: 'Not recommended', levers: 'What would make it fit',
  detail_memory: 'Memory per card, item by item', detail_explain: 'Every number, its formula and assumptions',
  request: 'Request sent to the engine', share: 'Copy share link', embed: 'Copy embed code',
  export: 'Export', export_go: 'Export plan', catalog: 'Catalog', catalog_file: 'Load a custom gpus.json or models.json',
  catalog_version: 'Catalog version', busy: 'Planning…', ready: 'Planned in', no_rows: 'No card fits these constraints.',
  share_other_catalog: 'This link was made with catalog version {0}; this page uses {1}: numbers may differ.',
  share_other_engine: 'It was made with engine {0}; this page runs {1}, whose estimates may differ (see the changes in docs/changes.md).',
  copied: 'Copied.', yes: 'yes', no: 'no', headroom: 'headroom', close: 'Close',
  deadline_hint: 'the page sends hours × 3600 as seconds', per_replica: 'per replica', formula: 'Formula', assumptions: 'Assumptions', inputs: 'Inputs', setups: 'setups evaluated',
  diagnosis: 'Mismatches the estimate shows', measure: 'Measure it, then calibrate',
  method_warmup: 'Exclude warm-up: the script skips its first 3 steps.',
  method_cycles: 'Run several full cycles (the script measures 10 steps; a few dozen overstate throughput).',
  method_inputs: 'Use production-like input lengths: short samples overstate throughput.',
  method_clocks: 'Log clocks and temperature (nvidia-smi -q -d CLOCK,TEMPERATURE): throttling lowers long runs.',
  method_targets: 'A well-sized run: GPU memory 85%+, GPU utilisation 90%+, host RAM 70-80%.',
  m_paste: "Paste the script's output (its GPUPLAN_MEASUREMENT line fills the fields)",
  m_alloc_gib: 'Peak allocated (GiB)', m_reserved_gib: 'Peak reserved (GiB)', m_oom: 'Ran out of memory',
  m_tokens_per_s: 'Tokens/s (whole job)', m_scaling: 'Speed-up curve (cards: tokens/s)',
  m_ttft_ms: 'TTFT (ms, median)', m_tpot_ms: 'TPOT (ms, median)', m_util_pct: 'GPU utilisation (%)',
  m_mem_pct: 'GPU memory in use (%)', m_host_pct: 'Host RAM in use (%)', m_label: 'Label for the record',
  compare: 'Compare with the estimate', c_quantity: 'Quantity', c_estimated: 'Estimate', c_measured: 'Measured',
  c_error: 'Difference', c_calibrated: 'Calibrated estimate', yardstick: 'Monitoring targets',
  diagnosis_measured: 'Diagnosis from the measurement', calibration_apply: 'Apply these factors to every recommendation',
  calibration_clear: 'Remove calibration', calibrated: 'calibrated',
  calibration_banner_short: 'Uses the correction factors of a measured run (see the banner above the table).',
  calibration_banner: 'Calibrated on {0}: compute ×{1}, bandwidth ×{2}, memory ×{3}, interconnect ×{4}. Every row marked "calibrated" uses them.',
  within: 'within 10%', beyond: 'beyond 10%', factors: 'Correction factors', fits: 'fits', not_fits: 'does not fit',
  records: 'Measured runs', records_hint: 'Every comparison is kept in this browser (local storage).',
  records_export: 'Export runs', records_clear: 'Clear runs',
  sheet_md: 'Procurement sheet (Markdown)', sheet_html: 'Procurement sheet (printable HTML)',
  fleet_title: 'Team fleet: several workloads on one pool',
  fleet_hint: 'One row per workload: training and offline evaluation recur every so many days; an online service gives its users (concurrent requests) for each of the 24 hours. "Add the plan above" adds the six lines as a workload. Prices, ownership and every other field are in the JSON (gpuplan fleet\'s request, docs/contract.md).',
  fleet_request: 'Edit as JSON (prices, ownership, every field)',
  fleet_col_name: 'Workload', fleet_col_model: 'Model', fleet_col_job: 'Job', fleet_col_every: 'Every (days)',
  fleet_col_amount: 'Per run', fleet_col_length: 'Sequence / prompt / output tokens', fleet_col_hours: 'Users by hour (24)',
  fleet_job_offline: 'Offline inference (evaluation, batch)', fleet_job_online: 'Online service',
  fleet_tokens: 'training tokens', fleet_requests: 'requests', fleet_prompt: 'prompt tokens', fleet_output: 'output tokens',
  fleet_hours_hint: '24 numbers, 0h to 23h', fleet_add: 'Add the plan above as a workload', fleet_remove: 'Remove workload',
  fleet_model_json: '(edited in the JSON)', fleet_gpus: 'Card types (ids, blank: all)', fleet_max: 'Most cards per workload',
  fleet_growth: 'Growth (×, e.g. 1.5 in six months)', fleet_currency: 'Currency', fleet_per_usd: 'Per USD',
  fleet_bad_json: 'The JSON below is not a fleet request', fleet_not_object: 'it must be an object {"workloads": [...]}', fleet_example: 'Fill in an example', fleet_plan: 'Plan the fleet',
  fleet_owned: 'Owned cards', fleet_serving: 'Serving pool (peak / min / utilisation)',
  fleet_batch: 'Batch pool (cards / utilisation)', fleet_share: 'Share the pool?',
  fleet_cost: 'Per month: own / rent',
  global_batch: 'Global batch (optional)', unit_sequences: 'sequences', unit_tokens: 'tokens',
  global_batch_auto: 'auto', global_batch_in_sequences: '= {0} sequences sent',
  global_batch_in_tokens: '= {0} tokens', headroom_pct: 'Memory headroom (%)',
  chunked_loss: 'Chunked loss (the full logits are never held)',
  advanced: 'Advanced training settings', engine_default: 'engine default',
  engine_default_is: 'engine default ({0})', optimizer_states: 'Optimizer states',
  opt_param: 'the parameters\' dtype',
  optimizer_kernel: 'Optimizer step', ok_foreach: 'foreach (all tensors at once, temporaries of their size)',
  ok_fused: 'fused (one kernel, in place)', ok_for_loop: 'for-loop (one tensor at a time)', compile: 'torch.compile (no eager-mode extra copies kept)',
  recompute: 'Activation recomputation', rc_none: 'none', rc_selective: 'selective (attention)',
  rc_full: 'full (every layer)', rc_op_selective: 'per operator (torchtitan)',
  rc_every_n_layers: 'every n-th layer', recompute_every: 'n (every n-th layer recomputed)',
  pp_schedule: 'Pipeline schedule', pp_interleaved: 'interleaved 1F1B',
  virtual_stages: 'Virtual stages per pipeline rank', overlap_tp_comm: 'Overlap tensor-parallel communication',
  overlap_grad_reduce: 'Overlap gradient reduction', overlap_param_gather: 'Overlap parameter gathering',
  ov_on: 'on', ov_off: 'off',
  engine_settings: 'Serving engine settings (optional)',
  engine_settings_hint: 'With a serving engine chosen above; empty fields keep its defaults for the version.',
  srv_version: 'Engine version', srv_share: 'Memory share (vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free fraction)',
  srv_max_seqs: 'Max running sequences (max_num_seqs)', srv_batched: 'Tokens per forward pass (max_num_batched_tokens; llama.cpp n_ubatch)',
  srv_max_model_len: 'Max model length (max_model_len)', srv_eager: 'No CUDA graphs (enforce_eager)',
  srv_n_ctx: 'llama.cpp context for all slots (n_ctx)', srv_cache_k: 'llama.cpp K cache type', srv_cache_v: 'llama.cpp V cache type',
  mem_used: '{0} of {1} ({2}%)', headroom_line: '+ {0} headroom ({1}%) = {2}: {3}',
  used_share: 'uses {0}% of the card', first_choice: 'first choice', list_sep: ', ',
  rank_fewest_cards_meeting_deadline: 'the fewest cards that finish within the deadline, even at the upper end of the likely range',
  rank_fastest_above_knee: 'fastest while more cards still scale well',
  rank_fewest_cards_below_knee: 'no setup scales well: the fewest cards',
  rank_fewest_cards_then_cost: 'the fewest cards that fit with headroom, then the cheapest run',
  rank_unpriced_after_priced: 'no price in the catalog: after the priced cards',
  rank_cheapest_per_million_tokens: 'cheapest per million output tokens',
  rank_fastest: 'fastest', rank_cheapest: 'cheapest', rank_fewest_cards: 'fewest cards, then speed',
  rank_lowest_power: 'lowest power, then speed',
  almost_fits: 'Fits on {0} card(s) with any one of: {1}', almost_fits_title: 'Almost fits on fewer cards',
  almost_fits_summary: 'On {0} × {1} it needs {2} with headroom of {3}; any one of these changes makes it fit:',
  fewest_cards: 'fewest cards: {0} × {1}, {2}{3}',
  lever_time: 'time ×{0}', lever_tpot: 'TPOT ×{0}', lever_time_unknown: 'time cost not estimated',
  lever_saves: 'saves {0}',
  lever_full_recompute: 'full recomputation', lever_chunked_loss: 'chunked loss',
  lever_halve_micro_batch: 'half the micro-batch (twice the accumulation)', lever_next_zero_stage: 'the next ZeRO stage',
  lever_paged_adamw_8bit: 'paged 8-bit AdamW', lever_optimizer_in_backward: 'optimizer step in backward',
  lever_pure_bf16: 'pure bf16 (no fp32 master copy)', lever_together: 'together: {0} — {1} with headroom, {2}',
  lever_adamw_8bit: '8-bit AdamW', lever_offload_optimizer: 'optimizer offload to the host',
  lever_sequence_parallel: 'sequence parallelism', lever_lora_instead: 'LoRA instead', lever_qlora_instead: 'QLoRA instead',
  lever_fp8_kv_cache: 'fp8 KV cache', lever_fp8_weights: 'fp8 weights', lever_awq_int4_weights: 'AWQ int4 weights',
  lever_halve_concurrency: 'half the concurrency',
  part_weights: 'Weights', part_gradients: 'Gradients', part_optimizer_states: 'Optimizer states',
  part_activations: 'Activations', part_kv_cache: 'KV cache', part_buffers: 'Buffers (communication, gathered weights)',
  part_runtime: 'Runtime (CUDA context, NCCL, allocator slack)',
  share_file_catalog: 'This link does not carry the catalog loaded from a file ({0}): whoever opens it plans with the bundled catalog. Publish the file and add ?catalog=URL to the link to send it along.',
  show_all: 'Show all {0} options',
  hub_hint: 'Or a Hugging Face id (owner/name): its config.json is read from huggingface.co.',
  hub_reading: 'Reading {0} from huggingface.co…',
  gguf_file: 'Or read a local .gguf file (its header only; planned under llama.cpp)',
  stale_note: 'The table below is the last plan that ran; it does not reflect the input marked in error.',
  embed_edit: 'Change the requirements', embed_summary: '{0} · {1} · {2} · up to {3} cards',
  embed_full: 'All options, details and tools in the full planner ↗',
  detail_gone: 'This setup is no longer among the recommendations after your change: what is shown is the earlier plan\'s.',
  download_script: 'Download the measurement script', download_script_hint: 'A PyTorch program that runs this setup with random weights and prints measured against estimated (gpuplan script).',
  waits: 'Queues (card: days, optional)', wait_title: 'Wait or switch', wait_queue: 'Queue',
  wait_run: 'Run', wait_finish: 'Finished after',
  dur_s: '{0} s', dur_min: '{0} min', dur_h: '{0} h', dur_d: '{0} d', per_hour: '/h',
  setup_mb_ga: 'mb {0} × ga {1}', setup_per_replica: '{0} req/replica', setup_gpu_layers: '{0} layers on GPU, rest on CPU', setup_cpu_moe: 'experts of {0} layers on CPU', latency_line: 'TTFT {0} · TPOT {1}',
  no_price: 'no price in the catalog for this card', explain_summary: '{0} = {1}',
  reject_exceeds_memory: 'does not fit even on {0} cards: the closest setup needs {1} per card with headroom; this card has {2}',
  reject_exceeds_memory_unknown: 'does not fit even on {0} cards: it needs more memory than this card has',
  reject_likely_range_crosses_deadline: 'the fastest setup that fits ({0} cards) takes {1}, within the deadline of {3}, but up to {2} at the upper end of its likely range; no count up to max_gpus {4} clears it',
  reject_misses_deadline: 'the fastest setup that fits ({0} cards) takes {1} (up to {3} at the upper end of its likely range) against a deadline of {2}; more cards are slower (communication outgrows compute)',
  reject_batch_limits_data_parallel: 'a global batch of {0} sequences cannot spread over more cards: the fastest setup, {1} cards, takes {2} (up to {4} at the upper end of its likely range) against a deadline of {3}; a larger global batch lets more cards work',
  reject_exceeds_max_gpus: 'even with perfect scaling it needs at least {0} cards to meet the deadline, above the limit of {1}',
  reject_exceeds_max_gpus_serving: 'it needs {0} replicas ({1} requests each) = {2} cards, above the limit of {3}',
  reject_misses_latency_targets: 'not even one sequence meets the latency targets: on {0} card(s) TTFT {1}, TPOT {2}',
  reject_over_budget: 'the cheapest setup that fits costs {0}, above the budget of {1}', reject_unpriced: 'no price in the catalog, so it cannot be held against the budget (give the card a price per card-hour in the catalog)',
  reject_inference_only_card: 'an inference-only device: the training stacks planned here need CUDA or ROCm; train on another card',
  reject_engine_unsupported_on_card: 'the chosen serving engine is modelled as its CUDA/ROCm build and does not run on this inference-only device; use llama.cpp or no framework',
  reject_needs_liquid_cooling: 'needs liquid cooling; the site offers air only', reject_node_power: 'a server draws {0}, above the limit of {1} per node (at least {2} cards a server)',
  note_unknown_model_family: 'the config.json\'s model type is not one gpuplan knows: it is read as a Llama-style model (gated MLP, RMSNorm, no biases); check the parameter count',
  note_opt_projection_ignored: 'OPT\'s embedding projections ({word_embed_proj_dim} wide) are not counted',
  note_layer_types_irregular: 'the layers do not repeat a local/global pattern: every layer is counted as full attention, an upper bound',
  note_vision_tower_not_counted: 'the language model is planned; the vision encoder and its projector are not counted',
  note_params_select_architecture: 'only one architecture matches the stated parameter count ({declared}): it is used ({derived} counted)',
  note_seq_len_beyond_model_context: 'a sequence of {seq_len} tokens is longer than the model\'s context of {max_context}',
  note_context_beyond_model: 'prompt + output ({tokens} tokens) is longer than the model\'s context of {max_context}',
  note_master_copy_redundant: 'fp32 weights are their own master copy: none is added',
  note_activation_offload_without_checkpointing: 'activation offload moves every saved tensor to host memory; it is usually paired with full recomputation',
  note_field_unused: '{field} is not used for this purpose', note_unused_field: '{field} is read only when calibrating',
  note_engine_setting_not_modelled: 'splitting by rows spreads each tensor\'s rows over the cards; the estimate keeps the split by layers',
  note_params_mismatch: 'the stated parameter count ({declared}) differs from the architecture\'s ({derived}) by more than 1%: the architecture\'s is used',
  note_kv_heads_replicated: 'tensor parallel {tp} is more than the {kv_heads} key/value heads: each card keeps a copy of one KV head',
  note_zero_without_data_parallel: 'ZeRO-{zero} shards over data-parallel ranks; with one there is nothing to shard',
  note_sequence_parallel_without_tp: 'sequence parallelism splits activations over tensor-parallel ranks, and there is only one',
  note_precision_not_native: 'this card has no native units for this precision: the weights are stored in it and computed in another',
  note_flash_attention_unsupported: 'FlashAttention 2 needs Ampere or newer: on this card the memory-efficient SDPA kernel gives the same memory, at a lower speed',
  note_paged_optimizer_states: 'paged 8-bit Adam keeps its states in CUDA unified memory, outside PyTorch\'s allocator: they are not in the per-card total and move to host RAM under pressure',
  note_parallel_communication_not_modelled: 'the ring-attention traffic of context parallel {cp} is not in the time estimate: the time is optimistic',
  note_seq_len_not_divisible_by_cp: 'context parallel splits the sequence evenly, and {seq_len} tokens are not a multiple of {cp}',
  note_calibration_other_card: 'the correction factors were measured on another card and may not hold on this one: measure on it',
  note_measured_headroom_short: 'ran on this card as measured with {spare_bytes} ({spare_fraction}) to spare, short of the {headroom_pct} planning headroom: it fits as measured, but a longer sequence, a larger batch or fragmentation can tip it over',
  note_served_below_request: 'the decode figures are for {served} sequences at once, not the {requested} asked: no more fit',
  note_served_below_request_none: 'not even one sequence fits: no decode rate is given',
  note_node_power_over_limit: 'a node draws about {node_watts}, above the site\'s {limit_w} per node',
  note_rack_power_below_one_node: 'one node ({node_watts}) draws more than a rack\'s power budget ({rack_w})',
  note_cooling_mismatch: 'this card needs liquid cooling; the site offers air only',
  note_engine_max_seqs: 'the serving engine runs at most {max_seqs} sequences at once on this card by default; the rest wait',
  note_inference_only_card: 'an inference-only device: the training stacks planned here need CUDA or ROCm',
  note_engine_unsupported_on_card: 'the chosen serving engine does not run on this inference-only device',
  note_framework_layout: 'the chosen framework cannot run this parallel layout',
  note_exceeds_memory: 'it needs {need_bytes} per card with headroom; the card has {capacity_bytes}',
  note_host_ram_short: 'host RAM per node ({have_bytes}) is below the {need_bytes} this setup wants: data loading will starve the cards',
  note_exceeds_engine_kv_pool: 'the serving engine sets aside {pool_bytes} of KV cache per card; the requested concurrency needs {need_bytes}',
  note_exceeds_engine_context: 'the serving engine\'s context of {context_tokens} tokens is shared by every sequence; the requested concurrency needs {need_tokens}',
  note_exceeds_max_model_len: 'prompt + output ({tokens} tokens) is longer than the engine\'s maximum model length, {max_model_len}: it refuses such a request',
  note_gpus_not_divisible: '{gpus} cards are not a multiple of tensor × pipeline × context parallel ({tp_pp_cp})',
  note_tp_does_not_divide_heads: 'tensor parallel {tp} does not divide the {heads} attention heads',
  note_tp_does_not_divide_kv_heads: 'tensor parallel {tp} neither divides nor is a multiple of the {kv_heads} key/value heads',
  note_tp_does_not_divide_intermediate: 'tensor parallel {tp} does not divide the MLP width {intermediate}',
  note_pp_exceeds_layers: 'pipeline parallel {pp} is more than the {layers} layers',
  note_ep_without_experts: 'expert parallel {ep} needs a mixture-of-experts model',
  note_ep_exceeds_experts: 'expert parallel {ep} is more than the {experts} experts',
  note_ep_does_not_divide_experts: 'expert parallel {ep} does not divide the {experts} experts',
  note_ep_does_not_divide_data_parallel: 'expert parallel {ep} must divide the data × context parallel ranks ({dp_cp}) it is carved from',
  note_global_batch_default: 'every setup keeps the default global batch of {sequences} sequences ({tokens} tokens) per optimizer step; give a global batch to change it',
  note_global_batch_fixed: 'every setup keeps your global batch of {sequences} sequences ({tokens} tokens) per optimizer step',
  note_fastest_without_deadline: 'with no deadline the fastest setup that still scales comes first: {count} cards take {time_s}; the fewest cards, {fewest_count}, take {fewest_time_s}; give a deadline for the fewest cards that meet it',
  note_keep_inside_one_node: 'the job fits inside one server ({count} of its {gpus_per_node} slots): keep it there, crossing servers costs more than adding cards inside one',
  note_long_run: 'the first option runs {time_s} on the fewest cards, {count}: a deadline trades cards for time',
  note_long_run_max: 'the first option runs {time_s} on all {count} cards the card limit allows: a higher limit shortens it',
  note_one_big_card: 'one card with more memory holds the whole job where the first option needs {top_count}: one big card avoids model-parallel losses',
  note_model_parallel_over_pcie: '{tp}-way tensor parallel over PCIe loses speed to its per-layer all-reduces (scaling efficiency {scaling_efficiency}): a card with more memory needs less of it',
  note_model_parallel_beyond_four: '{tp}-way tensor parallel loses speed to its per-layer all-reduces (scaling efficiency {scaling_efficiency}): a card with more memory needs less of it',
  note_levers_together_make_it_fit: 'a card misses on {count} cards: no single change makes it fit, but {levers} changes together save {saved_bytes} and do',
  note_lever_makes_it_fit: 'a card almost fits on {count} cards: one change saves {saved_bytes} and makes it fit (see "Almost fits on fewer cards" in its details)',
  note_no_queue: 'the first card is available now and finishes first',
  note_wait_for_best: 'wait for {best}: even after {wait_s} in the queue it finishes first, in {finish_s}',
  note_switch_now: 'take {first}: it finishes in {finish_s}, {saved_s} before {best}',
  note_cheapest_meeting_deadline: 'take {chosen}: it meets the deadline even at the upper end of its likely range, finishing in {finish_s} for {usd_total}; {first} would finish {saved_s} sooner for {extra_usd} more',
  note_memory_range_above_capacity: 'fits with the headroom, but the likely range of memory reaches {high_bytes}, above the card\'s {capacity_bytes}: measure a small run before committing',
  note_switch_now_break_even: '; past {break_even_tokens} tokens the order of the two changes',
  note_share_off_peak: 'the batch work fits in the serving pool\'s quiet hours ({window_h} h): sharing saves {saved_cards} cards',
  note_keep_separate: 'keep the pools separate: the serving pool\'s quiet {window_h} h leave {idle_card_hours} card-hours a day for {batch_card_hours} card-hours of batch work (the longest run takes {longest_batch_h} h)',
  note_one_kind: 'only one kind of work: one pool',
  note_owned_idle: 'owned, the {cards} cards stand idle {idle_fraction} of the time: owned cards are sized for the peak',
  note_rent_follows_peak: 'renting is cheaper: capacity that follows the curve costs {rent_per_month} a month, owning a pool sized for the peak {own_per_month}',
  note_owning_pays: 'owning is cheaper: a pool sized for the peak costs {own_per_month} a month, renting capacity that follows the curve {rent_per_month}',
  note_growth_included: 'sized for demand ×{growth} (the planning horizon\'s growth)',
  share_share_off_peak: 'share', share_keep_separate: 'keep separate', share_one_kind: 'one pool',
  exp_card: 'Card', exp_cards: 'Cards', exp_setup: 'Setup', exp_memory_gib_per_card: 'Memory per card (GiB)',
  exp_capacity_gib: 'Card memory (GiB)', exp_time_h: 'Time (h)', exp_decode_tokens_per_s: 'Decode throughput (tokens/s)',
  exp_cost_usd_total: 'Cost of the run (USD)', exp_cost_usd_per_hour: 'Cost per hour (USD)', exp_power_w: 'Power (W)',
  exp_title: 'gpuplan plan', exp_model: 'Model', exp_workload: 'Workload', exp_engine_version: 'Engine version', exp_link: 'Share link',
  exp_workload_training: '{0}: {1} tokens of {2}-token sequences', exp_workload_serving: '{0}: {1} concurrent requests, {2} prompt + {3} output tokens',
  note_checkpoint_quantization_not_modelled: 'the config\'s quantization_config is not a format gpuplan models: the weights are taken as the precision field says (the reason is in the hover text)',
  note_experts_on_cpu: 'the routed experts of the first {n_cpu_moe} of {layers} layers stay in host memory; the CPU reads those each token routes to at an assumed 50 GB/s',
  note_layers_on_cpu: '{n_gpu_layers} of the {layers} layers run on the card; the rest and the output layer stay in host memory, decoded by the CPU at an assumed 50 GB/s',
  err_ambiguous: 'can be read more than one way: give one of the fields only', err_too_deep: 'nests too deep to be read',
  err_not_a_number: 'is not a number: "{raw}"', err_batch_needs_seq_len: 'a batch in tokens needs the sequence length to convert it to sequences',
  err_batch_below_sequence: '{tokens} tokens is less than one sequence of {seq_len} tokens',
  err_waits_format: 'write card: days pairs like "h100-sxm-80gb: 14", got "{raw}"', err_hf_not_json: 'is not valid JSON',
  err_hf_not_object: 'must be a JSON object (a config.json)', err_share_link: 'the share link could not be read in full: the defaults are used where it failed',
  err_invalid_json: 'is not valid JSON', err_missing_field: 'is missing', err_wrong_type: 'has the wrong type',
  err_out_of_range: 'is out of range', err_inconsistent: 'does not agree with the other fields', err_unknown_gpu: 'names no card in the catalog',
  err_invalid_combination: 'cannot be combined with the other choices', err_unknown_value: 'is not one of the values it takes',
  err_unsupported_architecture: 'is an architecture gpuplan cannot plan', err_not_applicable: 'does not apply here',
  err_invalid_id: 'is not a valid id', err_duplicate_id: 'repeats an id', err_unknown_model: 'names no model in the catalog',
  err_unknown_field: 'is not a field gpuplan reads', err_invalid_value: 'has a value gpuplan cannot use',
  err_invalid_stack_value: 'is not a valid stack or engine profile value (catalog/stacks.json)',
  err_framework_mismatch: 'does not suit the chosen framework', err_conflicting_fields: 'conflicts with another field',
};

// The languages the page speaks; a dictionary other than English is fetched when chosen.
export const kLanguageNames = ['en', 'zh-CN'];
const kLoaders = { 'zh-CN': () => import('./i18n-zh.js').then((m) => m.zh) };
export const kLanguages = { en };
let detailWords = null;  // i18n-detail.js once fetched: { en, zh }
let detailLoading = null;

function mergeDetail() {
  if (detailWords) {
    Object.assign(en, detailWords.en);
    if (kLanguages['zh-CN']) Object.assign(kLanguages['zh-CN'], detailWords.zh);
  }
  for (const more of added) {
    for (const [lang, words] of Object.entries(more)) if (kLanguages[lang]) Object.assign(kLanguages[lang], words);
  }
}

// Words a module loaded on first use brings along (i18n-sources.js): the first load skips them.
// A language fetched later gets them too.
const added = [];
export function addWords(more) {
  added.push(more);
  mergeDetail();
}

// The detail view's words (i18n-detail.js), fetched when a detail first opens; until then
// its pointers and diagnoses fall back to the engine's text.
export function loadDetailWords() {
  detailLoading ??= import('./i18n-detail.js').then((m) => {
    detailWords = m;
    mergeDetail();
  }).catch(() => { detailLoading = null; });
  return detailLoading;
}


let current = en;
let currentLang = 'en';

// Fetches lang's dictionary if it is not here yet; answers whether the page has it.
export async function loadLanguage(lang) {
  if (!kLanguages[lang] && kLoaders[lang]) {
    kLanguages[lang] = await kLoaders[lang]();
    mergeDetail();
  }
  return Boolean(kLanguages[lang]);
}

// Sync: a dictionary not loaded yet falls back to English (chooseLanguage loads it first).
export function setLanguage(lang) {
  current = kLanguages[lang] ?? en;
  currentLang = kLanguages[lang] ? lang : 'en';
  if (typeof document === 'undefined') return;
  document.documentElement.lang = currentLang;
  document.title = current.title;
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-i18n]'))) el.textContent = t(el.dataset.i18n);
}

export async function chooseLanguage(lang) {
  await loadLanguage(lang).catch(() => false);
  setLanguage(lang);
}

// The language the page is written in now ('en' or 'zh-CN').
export const language = () => currentLang;

// Whether the page has words for key: in the current language only (ownOnly), or with English
// as the fallback, as t() has.
export function has(key, ownOnly = false) {
  return Object.hasOwn(current, key) || (!ownOnly && Object.hasOwn(en, key));
}

export function t(key, ...args) {
  const s = current[key] ?? en[key] ?? key;
  return s.replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

// key's words with named places ({need_bytes}) filled from `values`; null when the key has no
// words or a place has no value (the caller keeps the engine's message then).
export function tn(key, values) {
  if (!has(key)) return null;
  const s = current[key] ?? en[key];
  let missing = false;
  const out = s.replace(/\{([a-z][a-z0-9_]*)\}/g, (_, k) => {
    const v = values[k];
    if (v == null || v === '') missing = true;
    return String(v);
  });
  return missing ? null : out;
}

export function preferredLanguage() {
  const saved = localStorage.getItem('gpuplan.lang');
  if (saved && kLanguageNames.includes(saved)) return saved;
  return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}
