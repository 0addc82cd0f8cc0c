#!/usr/bin/env python3
"""Runs test_smrtl_block.py on an smrtl block's Verilog in Icarus through cocotb's runner
(docs/verilog.md, "From cocotb").

usage: run.py VERILOG STIM EXPECTED

VERILOG is a file `smrtl gen` wrote (its header names the top module); STIM the `smrtl run`
stimulus; EXPECTED what `smrtl run --backend model` printed for it. Exit 0 when every output
matched every cycle.
"""

import os
import re
import sys

from cocotb_tools.runner import get_results, get_runner


def top_and_inputs(verilog):
    """The top module `smrtl gen`'s header names, and its input ports (clock excepted)."""
    with open(verilog, encoding="utf-8") as f:
        text = f.read()
    found = re.search(r"^// Top module `(\w+)`", text, re.MULTILINE)
    if not found:
        sys.exit(f"error: {verilog}: no `// Top module` header; write it with smrtl gen")
    top = found.group(1)
    ports = re.search(rf"^module {top} \((.*?)^\);", text, re.MULTILINE | re.DOTALL)
    inputs = re.findall(r"^\s*input\s+wire\s+(?:\[\d+:0\]\s+)?(\w+)", ports.group(1), re.MULTILINE)
    return top, [p for p in inputs if p != "clock"]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: run.py VERILOG STIM EXPECTED")
    verilog, stim, expected = (os.path.abspath(p) for p in sys.argv[1:])
    top, inputs = top_and_inputs(verilog)
    runner = get_runner("icarus")
    runner.build(
        sources=[verilog],
        hdl_toplevel=top,
        build_dir="sim_build",
        timescale=("1ns", "1ps"),
        always=True,
    )
    results = runner.test(
        hdl_toplevel=top,
        test_module="test_smrtl_block",
        test_dir=os.path.dirname(os.path.abspath(__file__)),
        build_dir="sim_build",
        extra_env={
            "SMRTL_STIM": stim,
            "SMRTL_EXPECTED": expected,
            "SMRTL_INPUTS": " ".join(inputs),
        },
    )
    tests, fails = get_results(results)
    print(f"cocotb: {tests} test(s), {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
