// The issue's for-if (Rodinia lud_diagonal's pattern, half a warp): the text form of
// lud-forif.json (docs/bank-conflicts.md §3.4, "Text form"); `smrtl bankan` gives both the
// same analysis.
banks 32;
bank_width 4;
mode multicast;
block 16 1;

__shared__ float shadow[16][16];

for (int i = 0; i < 16; i++)
    if (tx > i)
        shadow[tx][i];
