// 3DFD (Micikevicius, "3D Finite Difference Computation on GPUs using CUDA"; [002] §5 and
// §6.4): the 8th-order stencil's shared tile, RADIUS 4, block (16, 16), s_data 24 x 24 words:
// the 9 taps of the xy-plane and the 4 halo loads. The text form of 3dfd.json
// (docs/bank-conflicts.md §3.4, "Text form"), accesses in its order: the taps first, then the
// halo loads (in the kernel they come before the __syncthreads() that precedes the taps).
// The kernel's `tx`, `ty` (threadIdx + RADIUS) are `ix`, `iy` here: tx and ty are threadIdx.
banks 32;
bank_width 4;
layer_bytes 8;
mode multicast;
block 16 16;

const int RADIUS = 4;
const int BLOCK_DIMX = 16;
const int BLOCK_DIMY = 16;

__constant__ float c_coeff[RADIUS + 1];

__global__ void fwd_3D_16x16_order8(float *g_output, float *g_input, int dimx, int dimy, int dimz)
{
    __shared__ float s_data[BLOCK_DIMY + 2 * RADIUS][BLOCK_DIMX + 2 * RADIUS];

    int ix = threadIdx.x + RADIUS;
    int iy = threadIdx.y + RADIUS;

    float value = c_coeff[0] * s_data[iy][ix];
    value += c_coeff[1] * (s_data[iy - 1][ix] + s_data[iy + 1][ix] + s_data[iy][ix - 1] + s_data[iy][ix + 1]);
    value += c_coeff[2] * (s_data[iy - 2][ix] + s_data[iy + 2][ix] + s_data[iy][ix - 2] + s_data[iy][ix + 2]);
    value += c_coeff[3] * (s_data[iy - 3][ix] + s_data[iy + 3][ix] + s_data[iy][ix - 3] + s_data[iy][ix + 3]);
    value += c_coeff[4] * (s_data[iy - 4][ix] + s_data[iy + 4][ix] + s_data[iy][ix - 4] + s_data[iy][ix + 4]);

    if (threadIdx.y < RADIUS) {  // halo above and below
        s_data[threadIdx.y][ix] = g_input[0];
        s_data[threadIdx.y + BLOCK_DIMY + RADIUS][ix] = g_input[0];
    }
    if (threadIdx.x < RADIUS) {  // halo left and right
        s_data[iy][threadIdx.x] = g_input[0];
        s_data[iy][threadIdx.x + BLOCK_DIMX + RADIUS] = g_input[0];
    }
}
