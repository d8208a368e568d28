#!/usr/bin/env python3
"""Draws a trace that `tap-run --trace` wrote (Chrome's Trace Event Format) as an SVG timeline: one row per queue
that ran something, one bar per instruction from its start to its end, labelled with the instruction, and dashed
lines at barriers. Python's standard library only.

    python3 scripts/trace-svg.py run.json > run.svg
"""
import json
import sys
from html import escape

COLOURS = {"dma": "#4e79a7", "main": "#e15759", "sub": "#59a14f"}


def main(path):
    events = json.load(open(path))["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    spans = [e for e in events if e["ph"] == "X"]
    barriers = [e["ts"] for e in events if e["ph"] == "i"]
    rows = sorted({e["tid"] for e in spans})
    end = max([e["ts"] + e["dur"] for e in spans] + barriers + [1e-9])
    left, width, height, top = 70, 900, 34, 30
    scale = width / end
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" '
           f'height="{top + height * len(rows) + 40}" font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>']
    for i, tid in enumerate(rows):
        y = top + i * height
        out.append(f'<text x="4" y="{y + height / 2 + 4}">{escape(names.get(tid, str(tid)))}</text>')
        out.append(f'<line x1="{left}" x2="{left + width}" y1="{y + height}" y2="{y + height}" stroke="#ddd"/>')
        for e in (e for e in spans if e["tid"] == tid):
            x, w = left + e["ts"] * scale, max(e["dur"] * scale, 1)
            colour = next((c for k, c in COLOURS.items() if names.get(tid, "").startswith(k)), "#999")
            label = escape(e["name"].split(" at ")[0])
            out.append(f'<rect x="{x:.1f}" y="{y + 4}" width="{w:.1f}" height="{height - 8}" fill="{colour}" '
                       f'rx="2"><title>{escape(e["name"])}: {e["args"]["cycles"]} cycles</title></rect>')
            if w > 60:
                out.append(f'<text x="{x + 4:.1f}" y="{y + height / 2 + 4}" fill="white">{label}</text>')
    for ts in barriers:
        x = left + ts * scale
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 6}" y2="{top + height * len(rows)}" '
                   'stroke="black" stroke-dasharray="4 3"/>')
    axis = top + height * len(rows) + 16
    for k in range(6):
        t = end * k / 5
        out.append(f'<text x="{left + t * scale:.1f}" y="{axis}" text-anchor="middle">{t * 1000:.0f} cycles</text>')
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
