// A directed check of two_detectors (examples/fusesoc): eight lanes on one word cost 1 cycle
// with broadcast and 8 without; eight lanes on eight banks cost 1 either way.
module two_detectors_tb;
    reg clock = 1'b0, reset = 1'b0, valid = 1'b1;
    reg [7:0] lane_mask = 8'hff;
    reg [111:0] addr;
    wire [3:0] cycles_multicast, cycles_literal;
    wire broadcast_saves;
    integer k;

    two_detectors dut (
        .clock(clock), .reset(reset), .valid(valid), .lane_mask(lane_mask), .addr(addr),
        .cycles_multicast(cycles_multicast), .cycles_literal(cycles_literal),
        .broadcast_saves(broadcast_saves)
    );

    initial begin
        addr = 112'd0;  // every lane reads byte 0
        #1;
        if (cycles_multicast !== 4'd1 || cycles_literal !== 4'd8 || broadcast_saves !== 1'b1)
            $fatal(1, "one word: multicast %0d, literal %0d cycles", cycles_multicast,
                   cycles_literal);
        for (k = 0; k < 8; k = k + 1)
            addr[k*14 +: 14] = k * 4;  // lane k reads bank k (4-byte banks)
        #1;
        if (cycles_multicast !== 4'd1 || cycles_literal !== 4'd1 || broadcast_saves !== 1'b0)
            $fatal(1, "eight banks: multicast %0d, literal %0d cycles", cycles_multicast,
                   cycles_literal);
        $display("PASS: one word 1 vs 8 cycles, eight banks 1 vs 1");
        $finish;
    end
endmodule
