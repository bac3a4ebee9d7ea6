// The "Does it pay?" calculator: specdec_guide/payoff.py's cost model in the page, no server.
// Each function mirrors the Python one of the same name operation for operation, so that both give
// the same floats (tests/test_browser.py compares them on a grid). The data (the stored verification
// measurement, the overlap tax, the methods' forms, the examples, upstream figures) is written into
// the page at build time by src/specdec_guide/site/calculator.py.
(function () {
  "use strict";

  function lerp(loX, hiX, loY, hiY, x) {
    return loX === hiX ? loY : loY + (hiY - loY) * (x - loX) / (hiX - loX);
  }

  function between(points, x, what, yours) {
    const first = points[0], last = points[points.length - 1];
    if (x < first || x > last) {
      throw new Error(`${what} ${x} is outside the measured ${first}-${last}: enter your own ${yours}`);
    }
    return [Math.max(...points.filter((p) => p <= x)), Math.min(...points.filter((p) => p >= x))];
  }

  function makeModel(data) {
    const ratio = new Map(data.verify.target.map(([b, rows]) => [b, new Map(rows)]));
    const batches = [...ratio.keys()].sort((a, b) => a - b);
    const draftShare = new Map(data.verify.draft);
    const draftBatches = [...draftShare.keys()].sort((a, b) => a - b);

    function atBatch(batch, q) {
      const r = ratio.get(batch);
      const [lo, hi] = between([...r.keys()].sort((a, b) => a - b), q, "max_draft_len + 1 =", "verification cost v");
      return lerp(lo, hi, r.get(lo), r.get(hi), q);
    }

    function verifyCost(batch, draftLen) {
      const q = draftLen + 1;
      const [lo, hi] = between(batches, batch, "batch size", "verification cost v");
      return lerp(lo, hi, atBatch(lo, q), atBatch(hi, q), batch);
    }

    function draftCost(batch) {
      const [lo, hi] = between(draftBatches, batch, "batch size", "draft cost c");
      return lerp(lo, hi, draftShare.get(lo), draftShare.get(hi), batch);
    }

    function acceptanceLength(kind, value, k) {
      if (kind === "length") {
        if (!(value >= 1.0 && value <= k + 1)) {
          throw new Error(`an acceptance length is between 1 and max_draft_len + 1 = ${k + 1}`);
        }
        return value;
      }
      if (kind === "rate") {
        if (!(value >= 0.0 && value <= 1.0)) throw new Error("an acceptance rate (accepted / drafted) is between 0 and 1");
        return 1.0 + value * k;
      }
      if (value.length !== k) {
        throw new Error(`per-position acceptance needs one figure per draft position: ${k} for max_draft_len ${k}, got ${value.length}`);
      }
      if (value.some((a) => !(a >= 0.0 && a <= 1.0))) throw new Error("each per-position acceptance is between 0 and 1");
      let total = 1.0, reach = 1.0;
      for (const a of value) {
        reach = reach * a;
        total = total + reach;
      }
      return total;
    }

    function speedupRange(readings, tax) {
      return [Math.min(...readings) / (1.0 + tax[1]), Math.max(...readings) / (1.0 + tax[0])];
    }

    // inputs: {form, k, kind, value, batch, draftCost (null: the method's), verifyCost (null: looked up),
    //          countVerify, countOverlap}
    function compute(inputs) {
      const form = data.forms.find((f) => f.id === inputs.form);
      if (!form) throw new Error(`unknown method ${inputs.form}`);
      const k = inputs.k;
      if (!Number.isInteger(k) || k < 1) throw new Error("max_draft_len is a whole number of at least 1");
      if (!Number.isInteger(inputs.batch) || inputs.batch < 1) throw new Error("the batch size is a whole number of at least 1");
      const tokens = acceptanceLength(inputs.kind, inputs.value, k);
      // verification first, as payoff.costs does: its message comes first
      let v, vSource;
      if (inputs.verifyCost !== null && inputs.verifyCost !== undefined) {
        if (!(inputs.verifyCost > 0)) throw new Error("the verification cost is a number above 0");
        v = inputs.verifyCost; vSource = "given";
      } else if (inputs.countVerify) {
        v = verifyCost(inputs.batch, k); vSource = `at batch ${inputs.batch}, ${k + 1} tokens checked: ${data.verify.what}`;
      } else {
        v = 1.0; vSource = "not counted: checking k + 1 tokens taken to cost one plain step";
      }
      let c, cSource;
      if (inputs.draftCost !== null) {
        if (!(inputs.draftCost >= 0)) throw new Error("the draft cost is a number of at least 0");
        c = inputs.draftCost; cSource = "given";
      } else if (form.draft_cost === "draft_pass") {
        c = draftCost(inputs.batch); cSource = `${form.draft_cost_source}, at batch ${inputs.batch}`;
      } else if (typeof form.draft_cost === "number") {
        c = form.draft_cost; cSource = form.draft_cost_source;
      } else {
        throw new Error(`${form.label}: ${form.draft_cost_source} (the draft cost, in target steps per draft token)`);
      }
      let tax = [0.0, 0.0], overlap;
      if (form.overlap_scheduler) {
        overlap = `kept on by the release for ${form.label}, nothing to charge`;
      } else if (inputs.countOverlap) {
        tax = [data.overlap.low, data.overlap.high];
        const why = form.why === "guide_config"
          ? "as this guide configures it, disable_overlap_scheduler: true; untick the box if yours keeps it"
          : "the release turns it off";
        overlap = `off for ${form.label} (${why}): each step ${(1 + tax[0]).toFixed(2)}-${(1 + tax[1]).toFixed(2)}x as long (${data.overlap.source})`;
      } else {
        overlap = `off for ${form.label}: not counted`;
      }
      const reading = tokens / (k * c + v);
      const [low, high] = speedupRange([reading], tax);
      return {form, k, kind: inputs.kind, value: inputs.value, tokens, c, cSource, v, vSource, tax, overlap, reading, low, high};
    }

    return {compute, acceptanceLength, verifyCost, draftCost};
  }

  function fmt(x, digits) { return x.toFixed(digits); }

  // Decimal notation only ("0x10", "1e400" and "Infinity" are refused, as Python's float() would not take
  // the first and the command refuses what is not finite).
  const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  function parseNumber(text) {
    const t = String(text).trim();
    const x = DECIMAL.test(t) ? Number(t) : NaN;
    return Number.isFinite(x) ? x : NaN;
  }

  function readInputs(root) {
    const get = (name) => root.querySelector(`[name="${name}"]`);
    const kind = get("kind").value;
    const raw = get("acceptance").value;
    let value;
    if (kind === "per_position") {
      value = raw.split(",").map(parseNumber);  // an empty item is an error, as in the command
      if (value.some((x) => Number.isNaN(x))) throw new Error("per-position acceptance: numbers separated by commas");
    } else {
      value = parseNumber(raw);
      if (Number.isNaN(value)) throw new Error(kind === "rate" ? "the acceptance rate is a number" : "the acceptance length is a number");
    }
    const whole = (text) => (/^\s*\d+\s*$/.test(text) ? Number(text) : NaN);  // as the command's integer flags
    const k = whole(get("k").value), batch = whole(get("batch").value);
    const draftText = get("draft_cost").value;
    const draftCost = draftText.trim() === "" ? null : parseNumber(draftText);
    if (draftCost !== null && Number.isNaN(draftCost)) throw new Error("the draft cost is a number (or empty: the method's own)");
    const verifyText = get("verify_cost").value;
    const verifyCost = verifyText.trim() === "" ? null : parseNumber(verifyText);
    if (verifyCost !== null && Number.isNaN(verifyCost)) throw new Error("the verification cost is a number (or empty: looked up)");
    return {form: get("form").value, k, kind, value, batch, draftCost, verifyCost,
            countVerify: get("count_verify").checked, countOverlap: get("count_overlap").checked};
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (ch) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[ch]));
  }

  function render(root, model, data) {
    const out = root.querySelector("[data-calc-result]");
    let r;
    try {
      r = model.compute(readInputs(root));
    } catch (err) {
      out.innerHTML = `<p class="calc-error" role="alert">${esc(err.message)}</p>`;
      return;
    }
    const range = r.low === r.high ? `${fmt(r.low, 2)}x` : `${fmt(r.low, 2)}-${fmt(r.high, 2)}x`;
    const taxed = r.tax[1] === 0 ? "" : `, divided by ${fmt(1 + r.tax[1], 2)} (low end) and ${fmt(1 + r.tax[0], 2)} (high end)`;
    const figures = data.figures.filter((f) => f.method === r.form.method);
    const zeroRate = r.kind === "rate" && r.value === 0
      ? `<p class="calc-note">An acceptance rate of 0 is what TensorRT-LLM 1.1.0 and 1.2.1 report per request with ` +
        `TorchSampler whatever was accepted (the counters are not filled): measure acceptance another way ` +
        `(<a href="#see-that-it-works-on-your-server">see below</a>) before reading this answer.</p>` : "";
    out.innerHTML =
      `<p class="calc-answer">Predicted speed-up: <strong data-calc-speedup>${range}</strong></p>` +
      `<p>= ${fmt(r.tokens, 3)} / (${r.k} &times; ${fmt(r.c, 3)} + ${fmt(r.v, 3)})${taxed}</p>` +
      `<ul>` +
      `<li>acceptance length <i>L</i> = ${fmt(r.tokens, 3)} tokens per target step</li>` +
      `<li>draft <i>c</i> = ${fmt(r.c, 3)} per draft token: ${esc(r.cSource)}</li>` +
      `<li>verification <i>v</i> = ${fmt(r.v, 3)}: ${esc(r.vSource)}</li>` +
      `<li>overlap scheduler: ${esc(r.overlap)}</li></ul>` +
      zeroRate + (figures.length ? `<p>Published figures for this method (upstream, their own conditions): ${figures.length} row(s) in ` +
        `<a href="#published-figures-by-batch-size">the table below</a>.</p>` : "");
  }

  function setup(root) {
    const data = JSON.parse(document.getElementById("specdec-calc-data").textContent);
    const model = makeModel(data);
    const formSelect = root.querySelector('[name="form"]');
    formSelect.innerHTML = data.forms.map((f) => `<option value="${esc(f.id)}">${esc(f.label)}</option>`).join("");
    const examples = root.querySelector('[name="example"]');
    examples.innerHTML = '<option value="">(your own figures)</option>' +
      data.examples.map((e, i) => `<option value="${i}">${esc(e.label)}</option>`).join("");
    examples.addEventListener("change", () => {
      const e = data.examples[Number(examples.value)];
      if (!e) return;
      for (const [name, value] of Object.entries(e.inputs)) {
        const field = root.querySelector(`[name="${name}"]`);
        if (field.type === "checkbox") field.checked = value; else field.value = value;
      }
      root.querySelector("[data-calc-example-source]").textContent = e.source;
      render(root, model, data);
    });
    root.addEventListener("input", () => render(root, model, data));
    root.addEventListener("change", () => render(root, model, data));
    render(root, model, data);
    return {data, model};
  }

  const root = document.getElementById("specdec-calc");
  if (root) {
    const made = setup(root);
    window.SpecdecCalc = {compute: made.model.compute, data: made.data};
  }
})();
