// The web demo's page: sends the person's messages over the WebSocket at /ws and draws
// every event of the run as it arrives.
//
// Everything the model or a tool wrote is put in the page as text (textContent, text
// nodes), never parsed as HTML: a reply holding <script> or <img onerror=...> shows
// those characters and runs nothing.  The messages are the library's events as
// event_to_json writes them (a "kind", and the run's "step"), plus the demo's own
// (a "type": hello, approval, run_end, error); docs/demo.md has the table.
"use strict";

(() => {
  const LABELS = {
    en: {
      title: "stream-parser demo", send: "Send", stop: "Stop", mode: "mode",
      protocol: "protocol", connecting: "connecting…", live: "connected",
      closed: "connection closed: reload the page", you: "you", step: "step {n}",
      thinking: "thinking…", thought: "thought", writing: "writing…", valid: "validated",
      failed: "not run", waiting: "waiting for approval", approve: "Approve", deny: "Deny",
      approved: "approved", denied: "denied", denyReason: "the person denied it in the page",
      asks: "needs your approval", ran: "ran", toolError: "failed: {e}", answer: "Answer",
      tokens: "{i} in · {o} out tokens", seconds: "{s} s",
      runEnd: "{reason} · {steps} step(s) · {tokens} · {s} s", notice: "notice",
      error: "error", modes: { function_call: "function calling", react: "ReAct (text)",
        simple: "simple (one request)" },
      reasons: { done: "answered", max_iterations: "step limit reached",
        max_tool_calls: "tool-call limit reached", length: "cut at the token limit",
        model_error: "the model failed", cancelled: "stopped", null: "ended" },
    },
    zh: {
      title: "stream-parser 演示", send: "发送", stop: "停止", mode: "模式",
      protocol: "协议", connecting: "连接中…", live: "已连接",
      closed: "连接已断开：请刷新页面", you: "你", step: "第 {n} 步",
      thinking: "思考中…", thought: "思考", writing: "书写中…", valid: "已校验",
      failed: "未执行", waiting: "等待审批", approve: "批准", deny: "拒绝",
      approved: "已批准", denied: "已拒绝", denyReason: "用户在页面上拒绝了这次调用",
      asks: "需要你的批准", ran: "已执行", toolError: "失败：{e}", answer: "回答",
      tokens: "输入 {i} · 输出 {o} 词元", seconds: "{s} 秒",
      runEnd: "{reason} · {steps} 步 · {tokens} · {s} 秒", notice: "提示",
      error: "错误", modes: { function_call: "函数调用", react: "ReAct（文本）",
        simple: "简单（单次请求）" },
      reasons: { done: "已回答", max_iterations: "达到步数上限",
        max_tool_calls: "达到工具调用上限", length: "在词元上限处截断",
        model_error: "模型出错", cancelled: "已停止", null: "已结束" },
    },
  };
  let L = LABELS.en;

  const $ = (id) => document.getElementById(id);
  const log = $("log");
  const content = $("content");
  const modeSelect = $("mode");
  const protocolSelect = $("protocol");
  const sendButton = $("send");
  const stopButton = $("stop");
  const status = $("status");

  // An element with a class and, optionally, text (always as text).
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (_, key) => String(values[key]));
  }
  function show(value) {
    return typeof value === "string" ? value : JSON.stringify(value, null, 2);
  }

  // Keep the newest lines in view, unless the person scrolled up to read.
  function follow(action) {
    const atEnd = log.scrollHeight - log.scrollTop - log.clientHeight < 80;
    action();
    if (atEnd) log.scrollTop = log.scrollHeight;
  }

  // --- the run being drawn ---------------------------------------------------------------
  let socket = null;
  let running = false;
  let turn = null; // the current turn's element
  let steps = new Map(); // step number -> its parts
  let lastStep = null;

  function setRunning(value) {
    running = value;
    sendButton.disabled = value || !socket || socket.readyState !== WebSocket.OPEN;
    stopButton.disabled = !value;
  }

  function newTurn(text) {
    turn = el("section", "turn");
    const user = el("div", "user", text);
    user.title = L.you;
    turn.append(user);
    log.append(turn);
    steps = new Map();
    lastStep = null;
  }

  function stepOf(number) {
    if (!turn) newTurn("");
    let step = steps.get(number);
    if (step) return step;
    const box = el("div", "step");
    box.dataset.step = String(number);
    const head = el("div", "step-head");
    const figures = el("span", "figures");
    head.append(el("span", "label", fill(L.step, { n: number })), figures);
    const text = el("div", "text");
    box.append(head, text);
    turn.append(box);
    step = { box, figures, text, thinking: null, calls: new Map(), started: performance.now(),
      seconds: null, usage: null };
    steps.set(number, step);
    return step;
  }

  function closeStep(step) {
    if (step && step.seconds === null) {
      step.seconds = (performance.now() - step.started) / 1000;
      drawFigures(step);
    }
  }

  function drawFigures(step) {
    const parts = [];
    if (step.usage) {
      parts.push(fill(L.tokens, { i: step.usage.prompt_tokens ?? 0,
        o: step.usage.completion_tokens ?? 0 }));
    }
    if (step.seconds !== null) parts.push(fill(L.seconds, { s: step.seconds.toFixed(1) }));
    step.figures.textContent = parts.join(" · ");
  }

  // Text goes into one text node per part, extended in place.
  function appendText(container, text) {
    const last = container.lastChild;
    if (last && last.nodeType === Node.TEXT_NODE) last.appendData(text);
    else container.append(document.createTextNode(text));
  }

  function thinkingOf(step) {
    if (!step.thinking) {
      const box = el("details", "thinking");
      box.open = true;
      const summary = el("summary", null, L.thinking);
      const body = el("div", "body");
      box.append(summary, body);
      step.box.insertBefore(box, step.text);
      step.thinking = { box, summary, body };
    }
    return step.thinking;
  }

  function callOf(step, index, name) {
    let call = step.calls.get(index);
    if (call) return call;
    const box = el("section", "call");
    box.dataset.tool = name || "";
    box.dataset.index = String(index);
    const header = el("header");
    const state = el("span", "state", L.writing);
    header.append(el("span", "name", name || "?"), state);
    const params = el("div", "params");
    box.append(header, params);
    step.box.append(box);
    call = { box, state, params, values: new Map(), raw: "", approval: null };
    step.calls.set(index, call);
    return call;
  }

  function paramOf(call, name) {
    let value = call.values.get(name);
    if (value) return value;
    const row = el("div", "param");
    row.dataset.param = name;
    const pre = el("pre");
    row.append(el("div", "key", name), pre);
    call.params.append(row);
    value = { pre, started: false };
    call.values.set(name, value);
    return value;
  }

  function setParams(call, values) {
    for (const [name, value] of Object.entries(values)) {
      const param = paramOf(call, name);
      param.pre.textContent = show(value);
      param.started = true;
    }
  }

  // The string values of a JSON object still being written, as far as they go:
  // {"path": "a.md", "content": "# Ti  ->  {path: "a.md", content: "# Ti"}.  Other
  // values are kept as their raw text; the validated call replaces everything.
  function partialObject(text) {
    const values = {};
    let i = text.indexOf("{");
    if (i < 0) return values;
    i += 1;
    const space = () => { while (i < text.length && " \t\r\n,".includes(text[i])) i += 1; };
    const string = () => {
      let out = "";
      i += 1; // the opening quote
      while (i < text.length) {
        const c = text[i];
        if (c === '"') { i += 1; return { value: out, done: true }; }
        if (c === "\\") {
          if (i + 1 >= text.length) break;
          const e = text[i + 1];
          if (e === "u") {
            if (i + 6 > text.length) break;
            out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16) || 0xfffd);
            i += 6;
            continue;
          }
          out += { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" }[e] ?? e;
          i += 2;
          continue;
        }
        out += c;
        i += 1;
      }
      return { value: out, done: false };
    };
    while (i < text.length) {
      space();
      if (text[i] !== '"') break;
      const key = string();
      if (!key.done) break;
      space();
      if (text[i] !== ":") break;
      i += 1;
      space();
      if (i >= text.length) break;
      if (text[i] === '"') {
        values[key.value] = string().value;
        continue;
      }
      let depth = 0;
      const start = i;
      while (i < text.length) {
        const c = text[i];
        if (c === '"') { string(); continue; }
        if (c === "{" || c === "[") depth += 1;
        else if (c === "}" || c === "]") { if (depth === 0) break; depth -= 1; }
        else if (c === "," && depth === 0) break;
        i += 1;
      }
      values[key.value] = text.slice(start, i).trim();
      if (text[i] === "}") break;
    }
    return values;
  }

  // --- the messages ------------------------------------------------------------------------
  function onEvent(data) {
    const number = data.step ?? lastStep ?? 1;
    switch (data.kind) {
      case "step_start": {
        closeStep(lastStep === null ? null : steps.get(lastStep));
        lastStep = data.step;
        stepOf(data.step);
        break;
      }
      case "thinking_delta": {
        appendText(thinkingOf(stepOf(number)).body, data.delta);
        break;
      }
      case "thinking": {
        const thinking = thinkingOf(stepOf(number));
        if (!thinking.body.textContent) thinking.body.textContent = data.content;
        thinking.summary.textContent = L.thought;
        thinking.box.open = false; // folded once done
        break;
      }
      case "text": {
        const step = stepOf(number);
        if (step.box.lastChild === step.text) {
          appendText(step.text, data.text);
          break;
        }
        // Text after a call goes below it, not back above it; the blank between two
        // calls shows nothing.
        const text = data.text.replace(/^\s*\n/, "");
        if (!text.trim()) break;
        if (step.text.textContent) step.text = el("div", "text");
        step.box.append(step.text);
        appendText(step.text, text);
        break;
      }
      case "tool_call_start": {
        callOf(stepOf(number), data.call_index, data.tool_name);
        break;
      }
      case "tool_param_delta": {
        const call = callOf(stepOf(number), data.call_index, data.tool_name);
        const param = paramOf(call, data.param);
        let delta = data.delta;
        // Text formats put a value on the line after its tag: the newline is framing.
        if (!param.started && delta.startsWith("\n")) delta = delta.slice(1);
        if (delta) param.started = true;
        appendText(param.pre, delta);
        break;
      }
      case "tool_arguments_delta": {
        const call = callOf(stepOf(number), data.call_index, data.tool_name);
        call.raw += data.delta;
        setParams(call, partialObject(call.raw));
        break;
      }
      case "tool_call": {
        const call = callOf(stepOf(number), data.call_index, data.tool_name);
        if (data.tool_instance && typeof data.tool_instance === "object") {
          setParams(call, data.tool_instance);
        }
        call.box.classList.add("valid");
        if (!call.approval) call.state.textContent = L.valid;
        break;
      }
      case "tool_result": {
        const call = callOf(stepOf(data.step), data.call_index, data.tool_name);
        const result = data.result || {};
        const pre = el("pre", result.is_error ? "result error" : "result", result.text);
        call.box.append(pre);
        call.state.textContent = result.is_error
          ? fill(L.toolError, { e: result.error_type || L.error }) : L.ran;
        if (result.is_error) call.box.classList.add("failed");
        break;
      }
      case "error": {
        const step = stepOf(number);
        if (data.call_index !== null && data.call_index !== undefined && data.tool_name) {
          const call = callOf(step, data.call_index, data.tool_name);
          call.box.classList.add("failed");
          call.state.textContent = L.failed;
        }
        step.box.append(el("div", "error", `${L.error} ${data.error_type}: ${data.message}`));
        break;
      }
      case "notice": {
        stepOf(number).box.append(el("div", "notice", `${L.notice} ${data.code}: ${data.message}`));
        break;
      }
      case "usage": {
        const step = stepOf(number);
        step.usage = data.usage_info || {};
        drawFigures(step);
        break;
      }
      case "agent_done": {
        closeStep(steps.get(lastStep));
        if (data.output) {
          const box = el("div", "answer");
          box.append(el("h3", null, L.answer), el("div", "body", data.output));
          (turn || log).append(box);
        }
        break;
      }
      default:
        break; // framing and other events carry nothing the page shows
    }
  }

  function onApproval(data) {
    const call = callOf(stepOf(data.step), data.call_index, data.tool_name);
    call.state.textContent = L.waiting;
    const box = el("div", "approval");
    const yes = el("button", "approve", L.approve);
    const no = el("button", "deny", L.deny);
    yes.type = "button";
    no.type = "button";
    const answer = (approved) => {
      send(approved ? { type: "approve", call_id: data.call_id }
        : { type: "deny", call_id: data.call_id, reason: L.denyReason });
      box.replaceChildren(document.createTextNode(approved ? L.approved : L.denied));
      call.state.textContent = approved ? L.approved : L.denied;
    };
    yes.addEventListener("click", () => answer(true));
    no.addEventListener("click", () => answer(false));
    box.append(el("span", null, L.asks), yes, no);
    call.box.append(box);
    call.approval = box;
  }

  function onRunEnd(data) {
    closeStep(steps.get(lastStep));
    for (const step of steps.values()) {
      for (const call of step.calls.values()) {
        if (call.approval && call.approval.querySelector("button")) call.approval.remove();
      }
    }
    const usage = data.usage || {};
    const counted = usage.input_tokens || usage.output_tokens; // some servers report none
    const line = fill(L.runEnd, {
      reason: L.reasons[data.reason] ?? String(data.reason),
      steps: data.steps,
      tokens: counted ? fill(L.tokens, { i: usage.input_tokens, o: usage.output_tokens }) : "",
      s: Number(data.seconds || 0).toFixed(1),
    }).replace(" ·  · ", " · ");
    const end = el("div", "run-end", line);
    end.dataset.reason = String(data.reason);
    (turn || log).append(end);
    setRunning(false);
  }

  function onHello(data) {
    L = LABELS[data.language] || LABELS.en;
    document.documentElement.lang = data.language;
    document.title = L.title;
    $("title").textContent = L.title;
    $("model").textContent = data.model;
    $("mode-label").textContent = L.mode;
    $("protocol-label").textContent = L.protocol;
    sendButton.textContent = L.send;
    stopButton.textContent = L.stop;
    modeSelect.replaceChildren(...data.modes.map((mode) => {
      const option = el("option", null, L.modes[mode] || mode);
      option.value = mode;
      return option;
    }));
    protocolSelect.replaceChildren(...data.protocols.map((name) => {
      const option = el("option", null, name);
      option.value = name;
      return option;
    }));
    modeSelect.value = data.mode;
    protocolSelect.value = data.protocol;
    protocolSelect.disabled = modeSelect.value !== "react";
    if (!content.value) content.value = data.task;
    status.textContent = L.live;
    status.className = "status live";
    setRunning(false);
  }

  function onMessage(data) {
    follow(() => {
      if (typeof data.kind === "string") onEvent(data);
      else if (data.type === "hello") onHello(data);
      else if (data.type === "approval") onApproval(data);
      else if (data.type === "run_end") onRunEnd(data);
      else if (data.type === "error") (turn || log).append(el("div", "error", data.message));
    });
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(`${scheme}${location.host}/ws`);
    socket.addEventListener("message", (event) => {
      let data;
      try {
        data = JSON.parse(event.data);
      } catch (_) {
        return;
      }
      if (data && typeof data === "object") onMessage(data);
    });
    socket.addEventListener("close", () => {
      status.textContent = L.closed;
      status.className = "status closed";
      setRunning(false);
      sendButton.disabled = true;
    });
  }

  modeSelect.addEventListener("change", () => {
    protocolSelect.disabled = modeSelect.value !== "react";
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = content.value;
    if (running || !text.trim()) return;
    follow(() => newTurn(text));
    send({ type: "message", content: text, mode: modeSelect.value,
      protocol: protocolSelect.value });
    content.value = "";
    setRunning(true);
  });
  content.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  stopButton.addEventListener("click", () => send({ type: "cancel" }));
  status.textContent = L.connecting;
  connect();
})();
