// @ts-check
// The procurement sheet: what to ask a vendor for, built from the six lines and
// the plan, in Markdown or a printable HTML page, in English or Simplified Chinese. Every
// number is the engine's (the plan's recommendations); this only arranges and escapes them.

const GiB = 2 ** 30;

const kText = {
  en: {
    title: 'GPU procurement sheet', made: 'Made by gpuplan {0} (catalog {1}) on {2}. Plan:',
    lines: 'The six lines of requirements', derived: 'Hardware parameters derived from the plan',
    options: 'Recommended options', questions: 'Three questions for the vendor',
    checks: 'Three measurements on delivery', switch: 'Keeping a way to switch card types',
    purpose: 'Purpose', model: 'Model and context', precision: 'Precision',
    duration: 'Duration or latency target', cards: 'Cards or budget', site: 'Site power and cooling',
    any: 'not limited', memory: 'Memory per card', bandwidth: 'Memory bandwidth',
    interconnect: 'Interconnect', formats: 'Precision support', power: 'Power envelope',
    mem_value: 'at least {0} GiB (the first option needs {1} GiB with {2}% headroom)',
    bw_value: '{0} GB/s on the first option ({1}); decode speed follows it',
    ic_one: 'one card: no card-to-card link needed',
    ic_node: '{0} cards in one node over {1} ({2} GB/s per card)',
    ic_nodes: '{0} cards over {1} nodes: {2} inside a node, {3} GB/s per card between nodes',
    fmt_value: '{0} weights; matmuls in {1}', power_value: '{0} W per node, {1} W for the job; cooling: {2}',
    head: ['Card', 'Cards', 'Setup', 'Memory per card', 'Time or throughput', 'Cost (USD)', 'Power'],
    q1: 'Availability: can {0} cards be delivered in our region, and in what time window?',
    q2: 'Links: which card-to-card link inside a server ({0}) and which network between servers does the offer include?',
    q3: 'Evidence: what speed-up (training) or concurrency at the latency target (serving) has been measured on a similar job with this configuration?',
    m1: 'One card: throughput and the memory watermark (gpuplan script; target: memory 85%+, GPU utilisation 90%+).',
    m2: 'Several cards: speed-up on 1, 2 and 4 cards and the communication share (torchrun with the same script).',
    m3: 'Serving: latency percentiles (TTFT, TPOT p50/p90/p99) at the target concurrency.',
    switch_text: 'Keep the stack on portable layers (PyTorch, Hugging Face, vLLM or SGLang) and the ' +
      'alternatives above on the shortlist: no vendor-locked interface should stand between the job and another card type.',
    prices: 'Prices are indicative catalog figures in USD per card-hour; replace them with your own price list.',
    fleet: 'Team fleet (all workloads together)',
    fleet_head: ['Card', 'Owned cards', 'Serving peak / min', 'Batch cards', 'Share the pool', 'Per month: own / rent'],
    tokens: '{0} training tokens', deadline: 'within {0} h', serve: '{0} concurrent requests, {1} prompt + {2} output tokens',
    ttft: 'TTFT ≤ {0} ms', tpot: 'TPOT ≤ {0} ms', max: 'at most {0} cards', budget: 'budget ${0}',
    node: '{0} W per node', seq: '{0}-token sequences', replicas: '{0} replicas', hours: '{0} h', per_hour: '/h',
    cooling: { air: 'air', liquid: 'liquid', air_or_liquid: 'air or liquid' },
    share: { share_off_peak: 'share', keep_separate: 'keep separate', one_kind: 'one pool' },
  },
  'zh-CN': {
    title: 'GPU 采购需求单', made: '由 gpuplan {0}（目录 {1}）于 {2} 生成。方案链接：',
    lines: '需求六行', derived: '由方案推出的硬件参数', options: '推荐方案',
    questions: '问供应商的三个问题', checks: '到货后的三项实测', switch: '保留更换卡型的路径',
    purpose: '用途', model: '模型与上下文', precision: '精度', duration: '时长或延迟目标',
    cards: '卡数或预算', site: '机房电力与散热', any: '不限', memory: '每卡显存', bandwidth: '显存带宽',
    interconnect: '互联', formats: '精度支持', power: '功耗范围',
    mem_value: '至少 {0} GiB（首选方案含 {2}% 余量需要 {1} GiB）',
    bw_value: '首选方案 {0} GB/s（{1}）；解码速度随之变化',
    ic_one: '单卡：不需要卡间互联',
    ic_node: '单节点 {0} 卡，经 {1}（每卡 {2} GB/s）',
    ic_nodes: '{0} 卡分布在 {1} 个节点：节点内 {2}，节点间每卡 {3} GB/s',
    fmt_value: '权重 {0}；矩阵运算用 {1}', power_value: '每节点 {0} W，整个任务 {1} W；散热：{2}',
    head: ['显卡', '卡数', '并行配置', '每卡显存', '时间或吞吐', '费用（美元）', '功耗'],
    q1: '供货：{0} 卡能否在我们所在地区交付？交付时间窗口是什么？',
    q2: '互联：方案中服务器内的卡间互联（{0}）和服务器之间的网络分别是什么？',
    q3: '实测：这套配置在类似任务上实测过多少加速比（训练）或在延迟目标下的并发（推理）？',
    m1: '单卡：吞吐与显存水位（gpuplan script；目标：显存 85%+，GPU 利用率 90%+）。',
    m2: '多卡：1、2、4 卡的加速比与通信占比（同一脚本用 torchrun 运行）。',
    m3: '推理：目标并发下的延迟分位数（首 token、每 token，p50/p90/p99）。',
    switch_text: '软件栈保持在可移植的层（PyTorch、Hugging Face、vLLM 或 SGLang），并把上表中的备选方案留在候选名单上：' +
      '任务与其他卡型之间不应隔着厂商锁定的接口。',
    prices: '价格为目录中的参考值（美元/卡时），请换成贵方自己的报价。',
    fleet: '团队资源池（全部负载合计）',
    fleet_head: ['显卡', '自有卡数', '服务池峰值 / 最低', '批处理卡数', '是否共用', '每月：自有 / 租用'],
    tokens: '训练 {0} token', deadline: '{0} 小时内完成', serve: '{0} 路并发，输入 {1} + 输出 {2} token',
    ttft: '首 token ≤ {0} ms', tpot: '每 token ≤ {0} ms', max: '最多 {0} 张卡', budget: '预算 ${0}',
    node: '每节点 {0} W', seq: '序列长度 {0} token', replicas: '{0} 个副本', hours: '{0} 小时', per_hour: '/小时',
    cooling: { air: '风冷', liquid: '液冷', air_or_liquid: '风冷或液冷' },
    share: { share_off_peak: '共用', keep_separate: '分开', one_kind: '单一池' },
  },
};

const kKinds = {
  en: { pretrain: 'Pretraining', full_finetune: 'Full fine-tuning', lora: 'LoRA fine-tuning',
    qlora: 'QLoRA fine-tuning', inference: 'Inference (serving)' },
  'zh-CN': { pretrain: '预训练', full_finetune: '全参数微调', lora: 'LoRA 微调', qlora: 'QLoRA 微调',
    inference: '推理（在线服务）' },
};

// A card-to-card link by its catalog kind, in words (nvlink4_bridge: NVLink 4 bridge).
const kLinks = {
  nvlink5: 'NVLink 5', nvlink4: 'NVLink 4', nvlink4_bridge: 'NVLink 4 bridge', nvlink3: 'NVLink 3', nvlink2: 'NVLink 2',
  pcie5: 'PCIe 5.0', pcie4: 'PCIe 4.0', pcie3: 'PCIe 3.0', pcie: 'PCIe', infinity_fabric: 'AMD Infinity Fabric',
  gaudi_roce_200g: 'RoCE 200 Gb/s (Gaudi)', gaudi_roce_100g: 'RoCE 100 Gb/s (Gaudi)', xe_link: 'Intel Xe Link', hccs: 'Huawei HCCS',
};
export const linkName = (kind) => kLinks[kind ?? 'pcie'] ?? String(kind).replace(/_/g, ' ');
const coolingName = (T, c) => (c ? T.cooling[c] ?? String(c).replace(/_/g, ' ') : '—');

function fill(s, ...args) {
  return s.replace(/\{(\d)\}/g, (_, i) => String(args[Number(i)]));
}

const round = (v, d = 0) => (Number.isFinite(v) ? Number(v.toFixed(d)).toLocaleString('en') : '—');

// The six lines of requirements as [label, value] pairs in lang (the plan exports carry them too).
export function requirementLines(lang, state) {
  return sixLines(kText[lang] ?? kText.en, kKinds[lang] ?? kKinds.en, state);
}

function sixLines(T, kinds, state) {
  const training = state.kind !== 'inference';
  const model = state.hf?.trim() ? 'config.json' : state.layers?.trim()
    ? `${state.layers} × ${state.hidden}` : state.model;
  const join = (...parts) => parts.filter(Boolean).join('; ') || T.any;
  return [
    [T.purpose, kinds[state.kind] ?? state.kind],
    [T.model, join(model, training ? fill(T.seq, state.seq_len) : '')],
    [T.precision, state.weights],
    [T.duration, training
      ? join(fill(T.tokens, state.tokens), state.deadline_h ? fill(T.deadline, state.deadline_h) : '')
      : join(fill(T.serve, state.concurrency, state.prompt_tokens, state.output_tokens),
        state.ttft_ms ? fill(T.ttft, state.ttft_ms) : '', state.tpot_ms ? fill(T.tpot, state.tpot_ms) : '')],
    [T.cards, join(fill(T.max, state.max_gpus), state.budget_usd ? fill(T.budget, state.budget_usd) : '')],
    [T.site, join(state.node_power_w ? fill(T.node, state.node_power_w) : '', state.cooling ? coolingName(T, state.cooling) : '')],
  ];
}

function derived(T, rec, gpu) {
  const e = rec.estimate;
  const p = rec.parallel;
  const intra = gpu?.intra_node ?? {};
  const link = linkName(intra.kind);
  const nodes = Math.ceil(rec.count / (gpu?.gpus_per_node ?? 8));
  const interconnect = rec.count === 1 ? T.ic_one : nodes <= 1
    ? fill(T.ic_node, rec.count, link, round(intra.gb_per_s_per_direction))
    : fill(T.ic_nodes, rec.count, nodes, link, round(gpu?.inter_node_gb_per_s_per_gpu));
  const matmul = ['fp8'].includes(rec.precision?.weights) ? 'fp8' : 'bf16';
  return [
    [T.memory, fill(T.mem_value, Math.ceil(e.memory.total_with_headroom_bytes / GiB),
      round(e.memory.total_with_headroom_bytes / GiB, 1), round(100 * (e.memory.headroom ?? 0.2), 1))],
    [T.bandwidth, fill(T.bw_value, round(gpu?.mem_bandwidth_gb_per_s), gpu?.name ?? rec.gpu)],
    [T.interconnect, `${interconnect}${p.tp > 1 ? ` (TP${p.tp})` : ''}`],
    [T.formats, fill(T.fmt_value, rec.precision?.weights ?? '', matmul)],
    [T.power, fill(T.power_value, round(e.power.node_watts), round(e.power.total_watts), coolingName(T, gpu?.cooling))],
  ];
}

function optionRow(T, rec, gpu) {
  const e = rec.estimate;
  const train = e.performance.training;
  const inf = e.performance.inference;
  const p = rec.parallel;
  const setup = [p.tp > 1 ? `TP${p.tp}` : '', p.pp > 1 ? `PP${p.pp}` : '', p.zero ? `ZeRO-${p.zero}` : '',
    rec.replicas > 1 ? fill(T.replicas, rec.replicas) : ''].filter(Boolean).join(' ') || '—';
  const speed = train ? fill(T.hours, round(train.time_s / 3600, 1)) : `${round(inf.decode_tokens_per_s_total)} tok/s`;
  const cost = train ? e.cost.usd_total : e.cost.usd_per_hour;
  return [gpu?.name ?? rec.gpu, rec.count, setup, `${round(e.memory.total_bytes / GiB, 1)} GiB`, speed,
    cost == null ? '—' : `${round(cost, 2)}${train ? '' : T.per_hour}`, `${round(e.power.total_watts)} W`];
}

function escapeHtml(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function mdCell(c) {
  return String(c ?? '').replace(/[&<>]/g, (x) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[x])
    .replace(/[|[\]\\`*_!#]/g, (x) => `\\${x}`).replace(/\s*[\r\n]+\s*/g, ' ');
}

function fleetRow(T, o) {
  const money = (v) => (v == null ? '—' : `${round(v)} ${o.cost.currency}`);
  return [o.name, o.owned_cards, o.serving_pool.peak_cards ? `${o.serving_pool.peak_cards} / ${o.serving_pool.min_cards}` : '—',
    o.batch_pool.cards || '—', T.share[o.share_pools.code] ?? o.share_pools.code.replace(/_/g, ' '), o.cost ? `${money(o.cost.own_per_month)} / ${money(o.cost.rent_per_month)}` : '—'];
}

// format 'md' | 'html'; `recs` are the plan's recommendations (best first), `gpus` the catalog's
// cards by id, `state` the form's six lines, `fleet` the team-fleet answer when there is one.
export function procurementSheet(format, { lang, state, recs, gpus, link, catalogVersion, engineVersion, date, fleet }) {
  const T = kText[lang] ?? kText.en;
  const kinds = kKinds[lang] ?? kKinds.en;
  const top = recs.slice(0, 3);
  const first = top[0];
  const firstGpu = first ? gpus.get(first.gpu) : undefined;
  const sections = [
    [T.lines, 'pairs', sixLines(T, kinds, state)],
    [T.derived, 'pairs', first ? derived(T, first, firstGpu) : []],
    [T.options, 'table', top.map((r) => optionRow(T, r, gpus.get(r.gpu)))],
    ...(fleet?.options?.length ? [[T.fleet, 'fleet', fleet.options.slice(0, 3).map((o) => fleetRow(T, o))]] : []),
    [T.questions, 'list', [fill(T.q1, first ? `${first.count} × ${firstGpu?.name ?? first.gpu}` : '—'),
      fill(T.q2, linkName(firstGpu?.intra_node?.kind)), T.q3]],
    [T.checks, 'list', [T.m1, T.m2, T.m3]],
    [T.switch, 'text', [T.switch_text, T.prices]],
  ];
  const made = fill(T.made, engineVersion, catalogVersion, date);
  if (format === 'html') {
    const body = sections.map(([title, kind, items]) => {
      let inner;
      if (kind === 'pairs') {
        inner = `<table>${items.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`;
      } else if (kind === 'table' || kind === 'fleet') {
        const head = kind === 'fleet' ? T.fleet_head : T.head;
        inner = `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>` +
          `${items.map((row) => `<tr>${row.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
      } else if (kind === 'list') {
        inner = `<ol>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ol>`;
      } else {
        inner = items.map((i) => `<p>${escapeHtml(i)}</p>`).join('');
      }
      return `<section><h2>${escapeHtml(title)}</h2>${inner}</section>`;
    }).join('\n');
    return `<!doctype html>\n<html lang="${lang === 'zh-CN' ? 'zh-CN' : 'en'}"><head><meta charset="utf-8">` +
      `<title>${escapeHtml(T.title)}</title><style>body{font:11pt sans-serif;max-width:50em;margin:2em auto}` +
      'table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #999;padding:.2em .5em;text-align:left}' +
      '@media print{body{margin:0}}</style></head><body>\n' +
      `<h1>${escapeHtml(T.title)}</h1><p>${escapeHtml(made)} <a href="${escapeHtml(link)}">` +
      `${escapeHtml(link)}</a></p>\n${body}\n</body></html>\n`;
  }
  // The link stays as it is (an autolink): escaping its # or _ would break it.
  const md = [`# ${mdCell(T.title)}`, '', `${mdCell(made)} <${String(link).replace(/[<>\s]/g, encodeURIComponent)}>`];
  for (const [title, kind, items] of sections) {
    md.push('', `## ${mdCell(title)}`, '');
    if (kind === 'pairs') items.forEach(([k, v]) => md.push(`- **${mdCell(k)}**: ${mdCell(v)}`));
    else if (kind === 'table' || kind === 'fleet') {
      const head = kind === 'fleet' ? T.fleet_head : T.head;
      md.push(`| ${head.map(mdCell).join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`,
        ...items.map((row) => `| ${row.map(mdCell).join(' | ')} |`));
    } else if (kind === 'list') items.forEach((i, n) => md.push(`${n + 1}. ${mdCell(i)}`));
    else items.forEach((i) => md.push(mdCell(i), ''));
  }
  return `${md.join('\n').trimEnd()}\n`;
}
