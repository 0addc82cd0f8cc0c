// [002] Table 8.1 Lud-DIA: Rodinia's lud_diagonal, BLOCK_SIZE 16, block (16, 1) = half a warp.
// The text form of lud-dia.json (docs/bank-conflicts.md §3.4, "Text form"): the load loop's
// shadow[i][tx] (1D,N,Y), and the three (1D,Y,Y) accesses under `if (tx > i)` in the
// elimination loop: shadow[tx][i], the inner loop's shadow[tx][j] for j < i (the bound is
// the condition i - j - 1 >= 0, the loop runs at most 14 times), and shadow[i+1][tx].
// Rodinia's statements hold more references (shadow[j][i], shadow[i][i], ...); the comments
// show them, the code keeps the ones the JSON analyses.
banks 32;
bank_width 4;
layer_bytes 8;
mode multicast;
block 16 1;

const int BLOCK_SIZE = 16;

__global__ void lud_diagonal(float *m, int matrix_dim, int offset)
{
    int i, j;
    __shared__ float shadow[BLOCK_SIZE][BLOCK_SIZE];

    int array_offset = offset * matrix_dim + offset;
    for (i = 0; i < BLOCK_SIZE; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];
        array_offset += matrix_dim;
    }
    __syncthreads();

    for (i = 0; i < BLOCK_SIZE - 1; i++) {
        if (threadIdx.x > i) {
            float sum = 0;
            shadow[threadIdx.x][i] /= sum;       // Rodinia: /= shadow[i][i]
            for (j = 0; j < i; j++)
                sum += shadow[threadIdx.x][j];   // Rodinia: shadow[tx][i] -= shadow[tx][j] * shadow[j][i]
            shadow[i + 1][threadIdx.x] -= sum;   // Rodinia: -= shadow[i+1][j] * shadow[j][tx], j <= i
        }
        __syncthreads();
    }
}
