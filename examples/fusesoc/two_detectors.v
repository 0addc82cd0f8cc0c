// Two configurations of smrtl's bank-conflict detector side by side (examples/fusesoc): the
// 8-lane `ep8` detector with broadcast (multicast: lanes reading one word share a cycle) and
// without (literal: every lane of a bank takes its own cycle). The module names are the
// configured names `smrtl gen` gives (docs/verilog.md, "Module names").
module two_detectors (
    input  wire         clock,
    input  wire         reset,
    input  wire         valid,
    input  wire [7:0]   lane_mask,
    input  wire [111:0] addr,
    output wire [3:0]   cycles_multicast,
    output wire [3:0]   cycles_literal,
    output wire         broadcast_saves
);
    wire [3:0] degree_multicast, degree_literal;
    wire [2:0] degree_m1_multicast, degree_m1_literal;
    wire conflict_multicast, conflict_literal, any_multicast, any_literal;

    bank_conflict_detector_A14_B8_L8_W4 multicast (
        .clock(clock), .reset(reset), .valid(valid), .lane_mask(lane_mask), .addr(addr),
        .degree(degree_multicast), .degree_m1(degree_m1_multicast),
        .cycles(cycles_multicast), .conflict(conflict_multicast), .any_active(any_multicast)
    );

    bank_conflict_detector_A14_B8_L8_MODEliteral_W4 literal (
        .clock(clock), .reset(reset), .valid(valid), .lane_mask(lane_mask), .addr(addr),
        .degree(degree_literal), .degree_m1(degree_m1_literal),
        .cycles(cycles_literal), .conflict(conflict_literal), .any_active(any_literal)
    );

    assign broadcast_saves = cycles_multicast < cycles_literal;
endmodule
