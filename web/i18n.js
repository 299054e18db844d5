// English and Simplified Chinese. Keys name what the text is for; elements carry data-i18n.
const en = {
  title: 'gpuplan: GPU capacity planner',
  tagline: 'Which accelerator, how many, set up how — and will it really run. Memory first, then count, then interconnect; 20% headroom on top.',
  lang: 'Language', theme: 'Theme', theme_auto: 'System', theme_light: 'Light', theme_dark: 'Dark',
  line1: '1. Purpose', line2: '2. Model and context', line3: '3. Precision',
  line4: '4. Duration or latency target', line5: '5. Cards or budget', line6: '6. Site power',
  kind: 'Purpose', kind_pretrain: 'Pretraining', kind_full_finetune: 'Full fine-tuning',
  kind_lora: 'LoRA fine-tuning', kind_qlora: 'QLoRA fine-tuning', kind_inference: 'Inference (serving)',
  model: 'Model preset', hf: 'Or paste a Hugging Face config.json',
  arch: 'Or give the architecture (layers first; it replaces the preset)', layers: 'Layers',
  hidden: 'Hidden size', intermediate: 'MLP intermediate size', heads: 'Attention heads',
  kv_heads: 'Key/value heads (GQA)', vocab: 'Vocabulary', seq_len: 'Sequence length (tokens)',
  prompt_tokens: 'Prompt tokens', output_tokens: 'Output tokens', weights: 'Weights',
  tokens: 'Training tokens (total)', deadline_h: 'Deadline (hours, optional)',
  concurrency: 'Concurrent requests', ttft_ms: 'Time to first token target (ms, optional)',
  tpot_ms: 'Time per output token target (ms, optional)', max_gpus: 'Max cards',
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
  copied: 'Copied.', yes: 'yes', no: 'no', headroom: 'headroom', of: 'of', close: 'Close',
  watermark: 'with headroom: {0}% of the card', deadline_hint: 'the page sends hours × 3600 as seconds', per_replica: 'per replica', formula: 'Formula', assumptions: 'Assumptions', inputs: 'Inputs', setups: 'setups evaluated',
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
  waits: 'Queues (card: days, optional)', wait_title: 'Wait or switch', wait_queue: 'Queue',
  wait_run: 'Run', wait_finish: 'Finished after',
};

const zh = {
  title: 'gpuplan：GPU 容量规划',
  tagline: '选哪种卡、要几张、怎么配置——以及能不能真正跑起来。先看显存，再算卡数，最后看互联；再加两成余量。',
  lang: '语言', theme: '主题', theme_auto: '跟随系统', theme_light: '浅色', theme_dark: '深色',
  line1: '一、用途', line2: '二、模型与上下文', line3: '三、精度',
  line4: '四、时长或延迟目标', line5: '五、卡数或预算', line6: '六、机房电力',
  kind: '用途', kind_pretrain: '预训练', kind_full_finetune: '全参数微调',
  kind_lora: 'LoRA 微调', kind_qlora: 'QLoRA 微调', kind_inference: '推理（在线服务）',
  model: '预设模型', hf: '或粘贴 Hugging Face 的 config.json',
  arch: '或直接给出结构参数（先填层数，将取代预设模型）', layers: '层数',
  hidden: '隐藏维度', intermediate: 'MLP 中间维度', heads: '注意力头数',
  kv_heads: 'KV 头数（GQA）', vocab: '词表大小', seq_len: '序列长度（token）',
  prompt_tokens: '输入 token 数', output_tokens: '输出 token 数', weights: '权重精度',
  tokens: '训练总 token 数', deadline_h: '截止时间（小时，可选）',
  concurrency: '并发请求数', ttft_ms: '首 token 延迟目标（毫秒，可选）',
  tpot_ms: '每个输出 token 时间目标（毫秒，可选）', max_gpus: '最多卡数',
  budget_usd: '预算（美元，可选）', node_power_w: '每节点功率上限（瓦，可选）',
  cooling: '散热', cooling_any: '不限', cooling_air: '风冷', cooling_liquid: '液冷',
  objective: '排序依据', obj_default: '按用途默认', obj_time: '时间', obj_cost: '费用',
  obj_count: '卡数', obj_power: '功耗',
  results: '推荐方案', col_gpu: '显卡', col_fits: '放得下', col_count: '卡数',
  col_setup: '并行配置', col_memory: '每卡显存', col_time: '时间', col_throughput: '吞吐',
  col_cost: '费用', col_power: '功耗', col_warnings: '提示', details: '详情',
  advice: '建议', rejected: '未推荐', levers: '怎样才能放得下',
  detail_memory: '每卡显存明细', detail_explain: '每个数字的公式与假设',
  request: '发送给引擎的请求', share: '复制分享链接', embed: '复制嵌入代码',
  export: '导出', export_go: '导出方案', catalog: '显卡目录', catalog_file: '载入自定义 gpus.json 或 models.json',
  catalog_version: '目录版本', busy: '计算中…', ready: '计算用时', no_rows: '没有满足这些约束的显卡。',
  share_other_catalog: '此链接基于目录版本 {0}，本页使用 {1}：数字可能不同。',
  share_other_engine: '它由引擎 {0} 生成；本页运行 {1}，估算结果可能不同（变更见 docs/changes.md）。',
  copied: '已复制。', yes: '是', no: '否', headroom: '余量', of: '/', close: '关闭',
  watermark: '含余量后占显存的 {0}%', deadline_hint: '页面按 小时 × 3600 换算为秒发送', per_replica: '每副本', formula: '公式', assumptions: '假设', inputs: '输入', setups: '个配置已评估',
  diagnosis: '估算显示的错配', measure: '实测，然后校准',
  method_warmup: '排除预热：脚本跳过前 3 步。',
  method_cycles: '跑满若干个完整周期（脚本测 10 步；只跑几十步得到的吞吐通常偏高）。',
  method_inputs: '使用与生产一致的输入长度分布：短样本测出的吞吐偏高。',
  method_clocks: '记录频率与温度（nvidia-smi -q -d CLOCK,TEMPERATURE）：降频会拉低长时间运行的吞吐。',
  method_targets: '合格的运行：显存利用率 85%+，GPU 利用率 90%+，内存利用率 70-80%。',
  m_paste: '粘贴脚本输出（其中的 GPUPLAN_MEASUREMENT 行会自动填写各项）',
  m_alloc_gib: '峰值已分配（GiB）', m_reserved_gib: '峰值已保留（GiB）', m_oom: '显存不足（OOM）',
  m_tokens_per_s: '每秒 token 数（整个任务）', m_scaling: '加速比曲线（卡数: 每秒 token）',
  m_ttft_ms: '首 token 延迟（毫秒，中位数）', m_tpot_ms: '每 token 时间（毫秒，中位数）', m_util_pct: 'GPU 利用率（%）',
  m_mem_pct: '显存占用（%）', m_host_pct: '主机内存占用（%）', m_label: '记录标签',
  compare: '与估算对比', c_quantity: '指标', c_estimated: '估算', c_measured: '实测',
  c_error: '差异', c_calibrated: '校准后估算', yardstick: '监控目标',
  diagnosis_measured: '根据实测的诊断', calibration_apply: '将这些系数用于所有推荐方案',
  calibration_clear: '取消校准', calibrated: '已校准',
  calibration_banner_short: '使用实测得出的校正系数（见表格上方的说明）。',
  calibration_banner: '已按 {0} 校准：算力 ×{1}，带宽 ×{2}，显存 ×{3}，互联 ×{4}。标有“已校准”的行均使用这些系数。',
  within: '误差在 10% 以内', beyond: '误差超过 10%', factors: '校正系数', fits: '放得下', not_fits: '放不下',
  records: '实测记录', records_hint: '每次对比都保存在本浏览器中（本地存储）。',
  records_export: '导出记录', records_clear: '清空记录',
  sheet_md: '采购需求单（Markdown）', sheet_html: '采购需求单（可打印 HTML）',
  waits: '排队时间（卡型: 天，可选）', wait_title: '等卡还是换卡', wait_queue: '排队',
  wait_run: '运行', wait_finish: '完成时间',
};

export const kLanguages = { en, 'zh-CN': zh };

let current = en;

export function setLanguage(lang) {
  current = kLanguages[lang] ?? en;
  document.documentElement.lang = kLanguages[lang] ? lang : 'en';
  document.title = current.title;
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
}

export function t(key, ...args) {
  const s = current[key] ?? en[key] ?? key;
  return s.replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

export function preferredLanguage() {
  const saved = localStorage.getItem('gpuplan.lang');
  if (saved && kLanguages[saved]) return saved;
  return (navigator.language || '').toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}
