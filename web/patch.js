// @ts-check
// Drawing by description: h() describes an element as plain objects and patchChildren() makes a
// node's children match a list of them, touching only what differs from the description each
// node was last drawn from. The results table is redrawn on every keystroke; building a detached
// DOM tree for it and comparing that with the page's (render.js morphChildren) was 6 ms of a
// re-plan on this project's VM. Text goes in as text nodes and attributes one by one,
// as el() does: nothing becomes markup.

// props as el() takes them: dataset (an object, camelCase keys), className, onclick (a
// handler, set as the property), anything else an attribute. Children: descriptions or
// strings; null, false and '' are left out.
export function h(tag, props = {}, ...children) {
  const attrs = [];
  let onclick = null;
  for (const k in props) {
    const v = props[k];
    if (k === 'dataset') {
      for (const d in v) attrs.push([`data-${d.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, String(v[d])]);
    } else if (k === 'className') {
      attrs.push(['class', String(v)]);
    } else if (k === 'onclick') {
      onclick = v;
    } else {
      attrs.push([k, String(v)]);
    }
  }
  return { tag: tag.toUpperCase(), attrs, onclick, children: children.filter((c) => c) };
}

function create(d) {
  if (typeof d === 'string') return document.createTextNode(d);
  const e = document.createElement(d.tag);
  for (const [name, value] of d.attrs) e.setAttribute(name, value);
  if (d.onclick) e.onclick = d.onclick;
  for (const c of d.children) e.append(create(c));
  e.drawnFrom = d;
  return e;
}

function sameKind(node, d) {
  return typeof d === 'string' ? node.nodeType === Node.TEXT_NODE : node.nodeName === d.tag;
}

function patchAttributes(node, d) {
  const before = node.drawnFrom;
  if (before) {
    // Compared with the last description, not read back from the DOM.
    for (const [name] of before.attrs) {
      if (!d.attrs.some(([n]) => n === name)) node.removeAttribute(name);
    }
    for (let i = 0; i < d.attrs.length; ++i) {
      const [name, value] = d.attrs[i];
      const old = before.attrs[i]?.[0] === name ? before.attrs[i][1] : before.attrs.find(([n]) => n === name)?.[1];
      if (old !== value) node.setAttribute(name, value);
    }
  } else {
    // A node this module did not draw: its attributes are read.
    for (let i = node.attributes.length - 1; i >= 0; --i) {
      const { name } = node.attributes[i];
      if (!d.attrs.some(([n]) => n === name)) node.removeAttribute(name);
    }
    for (const [name, value] of d.attrs) {
      if (node.getAttribute(name) !== value) node.setAttribute(name, value);
    }
  }
  if (node.onclick !== d.onclick) node.onclick = d.onclick;
  node.drawnFrom = d;
}

// Makes `parent`'s children those `list` describes, keeping every node whose place and kind
// are the same.
export function patchChildren(parent, list) {
  let node = parent.firstChild;
  for (const d of list) {
    if (!node) {
      parent.append(create(d));
      continue;
    }
    const next = node.nextSibling;
    if (!sameKind(node, d)) {
      parent.replaceChild(create(d), node);
    } else if (typeof d === 'string') {
      if (node.nodeValue !== d) node.nodeValue = d;
    } else {
      patchAttributes(node, d);
      patchChildren(node, d.children);
    }
    node = next;
  }
  while (node) {
    const next = node.nextSibling;
    node.remove();
    node = next;
  }
}
