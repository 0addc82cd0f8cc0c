// [002] Table 8.1 TP-TC (2D,N,Y): transposeCoalesced from the CUDA SDK's transpose sample,
// TILE_DIM = BLOCK_ROWS = 16, block (16, 16) = 8 warps, a 16 x 16 tile: the text form of
// tp-tc.json (docs/bank-conflicts.md §3.4, "Text form"). Each loop runs once
// (TILE_DIM / BLOCK_ROWS), its variable stepping by 16.
banks 32;
bank_width 4;
layer_bytes 8;
mode multicast;
block 16 16;

const int TILE_DIM = 16;
const int BLOCK_ROWS = 16;

__global__ void transposeCoalesced(float *odata, const float *idata)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    int width = gridDim.x * TILE_DIM;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
    y = blockIdx.x * TILE_DIM + threadIdx.y;

    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
