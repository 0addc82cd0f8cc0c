"""A cocotb test that drives any smrtl block with `smrtl run` vectors (docs/verilog.md, "From
cocotb").

The reference is what smrtl's behavioral model printed for the same vectors
(`smrtl run BLOCK --stim STIM --backend model --out EXPECTED`), so Python needs no model of its
own. The timing is smrtl's (the icarus backend's): all inputs 0 and one clock edge with reset
high, then per cycle: the cycle's inputs (a port not given keeps its value), outputs compared
once they settle, one clock edge.

Environment: SMRTL_STIM and SMRTL_EXPECTED, the two JSON-lines files, and SMRTL_INPUTS, the
block's input ports (examples/cocotb/run.py sets them from the Verilog).
"""

import json
import os

import cocotb
from cocotb.triggers import Timer


def value(v):
    """A `smrtl run` value: a number, or a "0x..." string for a wide bus."""
    return int(v.replace("_", ""), 16) if isinstance(v, str) else int(v)


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


async def edge(dut):
    dut.clock.value = 1
    await Timer(1, unit="step")
    dut.clock.value = 0
    await Timer(1, unit="step")


@cocotb.test()
async def outputs_match_the_model(dut):
    stim = lines(os.environ["SMRTL_STIM"])
    expected = lines(os.environ["SMRTL_EXPECTED"])
    assert len(stim) == len(expected), f"{len(stim)} stimulus lines, {len(expected)} expected"
    inputs = os.environ["SMRTL_INPUTS"].split()
    clocked = hasattr(dut, "clock")
    if clocked:
        dut.clock.value = 0
    for port in inputs:
        getattr(dut, port).value = 0
    await Timer(1, unit="step")
    if clocked:
        dut.reset.value = 1
        await Timer(1, unit="step")
        await edge(dut)
        dut.reset.value = 0
    await Timer(1, unit="step")
    for cycle, (given, want) in enumerate(zip(stim, expected)):
        for port, v in given.items():
            getattr(dut, port).value = value(v)
        await Timer(1, unit="step")
        for port, v in want.items():
            if port == "cycle":
                continue
            got = int(getattr(dut, port).value)
            assert got == value(v), f"cycle {cycle}: port {port}: expected {value(v)}, actual {got}"
        if clocked:
            await edge(dut)
    dut._log.info("%d cycles, every output equal to the model's", len(stim))
